//! The less common I/O methods of [`UdpSocket`] (tokio's names): poll-style send, receive and
//! peek for hand-written futures, the sender peeks, and receives into a `BufMut`. Each is the
//! same "readiness, non-blocking syscall, clear on `WouldBlock`" step through the socket's
//! registration as the everyday API in `mod.rs`.

use std::io;
use std::net::SocketAddr;
use std::task::{ready, Context, Poll};

use bytes::BufMut;

use super::UdpSocket;
use crate::io::{Interest, ReadBuf};
use crate::net::{fill_spare, fill_spare_len};
use crate::runtime::io::scheduled_io::Direction;

impl UdpSocket {
    /// Receives one datagram from the connected peer into `buf`.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let io = self.io.get_ref();
        let n = ready!(self.io.registration().poll_io(cx, Direction::Read, || io.recv(buf.initialize_unfilled())))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }

    /// Sends one datagram to the connected peer.
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send(buf))
    }

    /// Receives one datagram into `buf`; returns its sender.
    pub fn poll_recv_from(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<SocketAddr>> {
        let io = self.io.get_ref();
        let (n, addr) =
            ready!(self.io.registration().poll_io(cx, Direction::Read, || io.recv_from(buf.initialize_unfilled())))?;
        buf.advance(n);
        Poll::Ready(Ok(addr))
    }

    /// Sends one datagram to `target`.
    pub fn poll_send_to(&self, cx: &mut Context<'_>, buf: &[u8], target: SocketAddr) -> Poll<io::Result<usize>> {
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send_to(buf, target))
    }

    /// Reads the next datagram into `buf` without removing it; returns its sender.
    pub fn poll_peek_from(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<SocketAddr>> {
        let io = self.io.get_ref();
        let (n, addr) =
            ready!(self.io.registration().poll_io(cx, Direction::Read, || io.peek_from(buf.initialize_unfilled())))?;
        buf.advance(n);
        Poll::Ready(Ok(addr))
    }

    /// The sender of the next datagram, leaving it queued.
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        self.io.registration().poll_io(cx, Direction::Read, || self.peek_sender_now())
    }

    /// Waits for a datagram and returns its sender, leaving it queued.
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        self.io.registration().async_io(Interest::READABLE, || self.peek_sender_now()).await
    }

    /// The sender of the queued datagram; `WouldBlock` if there is none.
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        self.io.registration().try_io(Interest::READABLE, || self.peek_sender_now())
    }

    fn peek_sender_now(&self) -> io::Result<SocketAddr> {
        self.sock()
            .peek_sender()?
            .as_socket()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "the sender is not an IP address"))
    }

    /// Copies the queued datagram into `buf` without removing it; `WouldBlock` if none.
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().peek_from(buf))
    }

    /// Receives one datagram from the connected peer into `buf`'s spare capacity.
    pub async fn recv_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let io = self.io.get_ref();
        self.io.registration().async_io(Interest::READABLE, || fill_spare_len(buf, |dst| io.recv(dst))).await
    }

    /// Receives one datagram into `buf`'s spare capacity; returns its length and sender.
    pub async fn recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let io = self.io.get_ref();
        self.io.registration().async_io(Interest::READABLE, || fill_spare(buf, |dst| io.recv_from(dst))).await
    }

    /// `recv_buf` if a datagram is queued now; `WouldBlock` otherwise.
    pub fn try_recv_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let io = self.io.get_ref();
        self.io.registration().try_io(Interest::READABLE, || fill_spare_len(buf, |dst| io.recv(dst)))
    }

    /// `recv_buf_from` if a datagram is queued now; `WouldBlock` otherwise.
    pub fn try_recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let io = self.io.get_ref();
        self.io.registration().try_io(Interest::READABLE, || fill_spare(buf, |dst| io.recv_from(dst)))
    }
}
