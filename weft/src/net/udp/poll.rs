//! The less common datagram methods of [`UdpSocket`] and [`UnixDatagram`] (tokio's names):
//! poll-style send/receive/peek for hand-written futures, receives into a `BufMut`, and the
//! UDP multicast and IP header options. Kept apart from `udp.rs`/`unix.rs`, which hold the
//! everyday API; every method is the same "readiness, non-blocking syscall, clear on
//! `WouldBlock`" step through the socket's registration.

use std::io;
use std::net::SocketAddr;
use std::task::{ready, Context, Poll};

use bytes::BufMut;

use crate::net::{fill_spare, UdpSocket, UnixDatagram};
use crate::io::{Interest, ReadBuf};
use crate::runtime::io::scheduled_io::Direction;

impl UdpSocket {
    fn sock(&self) -> socket2::SockRef<'_> {
        socket2::SockRef::from(self.io.get_ref())
    }

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
        let f = || fill_spare(buf, |dst| io.recv(dst).map(|n| (n, ()))).map(|(n, ())| n);
        self.io.registration().async_io(Interest::READABLE, f).await
    }

    /// Receives one datagram into `buf`'s spare capacity; returns its length and sender.
    pub async fn recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let io = self.io.get_ref();
        self.io.registration().async_io(Interest::READABLE, || fill_spare(buf, |dst| io.recv_from(dst))).await
    }

    /// `recv_buf` if a datagram is queued now; `WouldBlock` otherwise.
    pub fn try_recv_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let io = self.io.get_ref();
        let f = || fill_spare(buf, |dst| io.recv(dst).map(|n| (n, ()))).map(|(n, ())| n);
        self.io.registration().try_io(Interest::READABLE, f)
    }

    /// `recv_buf_from` if a datagram is queued now; `WouldBlock` otherwise.
    pub fn try_recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let io = self.io.get_ref();
        self.io.registration().try_io(Interest::READABLE, || fill_spare(buf, |dst| io.recv_from(dst)))
    }

    /// `SO_BROADCAST`.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.get_ref().broadcast()
    }
    /// `IP_MULTICAST_LOOP`.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v4()
    }
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v4(on)
    }
    /// `IP_MULTICAST_TTL`.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.io.get_ref().multicast_ttl_v4()
    }
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_multicast_ttl_v4(ttl)
    }
    /// `IPV6_MULTICAST_LOOP`.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v6()
    }
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v6(on)
    }
    /// `IP_TOS` of an IPv4 socket.
    pub fn tos_v4(&self) -> io::Result<u32> {
        self.sock().tos()
    }
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.sock().set_tos(tos)
    }
    /// `IPV6_TCLASS` of an IPv6 socket.
    pub fn tclass_v6(&self) -> io::Result<u32> {
        self.sock().tclass_v6()
    }
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.sock().set_tclass_v6(tclass)
    }
}

impl UnixDatagram {
    /// Receives one datagram from the connected peer into `buf`.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let io = self.io.get_ref();
        let n = ready!(self.io.registration().poll_io(cx, Direction::Read, || io.recv(buf.initialize_unfilled())))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }

    /// Receives one datagram into `buf`; returns its sender's address.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<std::os::unix::net::SocketAddr>> {
        let io = self.io.get_ref();
        let (n, addr) =
            ready!(self.io.registration().poll_io(cx, Direction::Read, || io.recv_from(buf.initialize_unfilled())))?;
        buf.advance(n);
        Poll::Ready(Ok(addr))
    }

    /// Sends one datagram to the connected peer.
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send(buf))
    }

    /// Sends one datagram to the socket at `target`.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: impl AsRef<std::path::Path>,
    ) -> Poll<io::Result<usize>> {
        let target = target.as_ref();
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send_to(buf, target))
    }

    /// Receives one datagram from the connected peer into `buf`'s spare capacity.
    pub async fn recv_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let io = self.io.get_ref();
        let f = || fill_spare(buf, |dst| io.recv(dst).map(|n| (n, ()))).map(|(n, ())| n);
        self.io.registration().async_io(Interest::READABLE, f).await
    }

    /// Receives one datagram into `buf`'s spare capacity; returns its length and sender.
    pub async fn recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, std::os::unix::net::SocketAddr)> {
        let io = self.io.get_ref();
        self.io.registration().async_io(Interest::READABLE, || fill_spare(buf, |dst| io.recv_from(dst))).await
    }

    /// `recv_buf` if a datagram is queued now; `WouldBlock` otherwise.
    pub fn try_recv_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let io = self.io.get_ref();
        let f = || fill_spare(buf, |dst| io.recv(dst).map(|n| (n, ()))).map(|(n, ())| n);
        self.io.registration().try_io(Interest::READABLE, f)
    }

    /// `recv_buf_from` if a datagram is queued now; `WouldBlock` otherwise.
    pub fn try_recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, std::os::unix::net::SocketAddr)> {
        let io = self.io.get_ref();
        self.io.registration().try_io(Interest::READABLE, || fill_spare(buf, |dst| io.recv_from(dst)))
    }
}
