//! The peeks of [`UdpSocket`] (tokio's names): reading the next datagram (from the
//! connected peer, or with its sender), or only its sender, without removing it from the
//! queue, in `async`, `try_*` and `poll_*` forms. Each is the same "readiness, non-blocking
//! syscall, clear on `WouldBlock`" step through the socket's registration as the rest of its
//! API.

use std::io;
use std::net::SocketAddr;
use std::task::{ready, Context, Poll};

use super::UdpSocket;
use crate::io::{Interest, ReadBuf};
use crate::runtime::io::scheduled_io::Direction;

impl UdpSocket {
    /// Waits for a datagram from the connected peer and copies it into `buf` without
    /// removing it from the queue; returns its length (a longer datagram is truncated in
    /// `buf` but stays whole in the queue). For a socket that is not connected, see
    /// [`peek_from`](Self::peek_from).
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().peek(buf)).await
    }

    /// Copies the next datagram from the connected peer into `buf` without removing it from
    /// the queue.
    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let io = self.io.get_ref();
        let n = ready!(self.io.registration().poll_io(cx, Direction::Read, || io.peek(buf.initialize_unfilled())))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }

    /// [`peek`](Self::peek) if a datagram is queued now; `WouldBlock` otherwise.
    pub fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().peek(buf))
    }

    /// Waits for a datagram and copies it into `buf` without removing it; returns its length
    /// and sender.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().peek_from(buf)).await
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
}
