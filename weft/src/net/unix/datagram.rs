//! `UnixDatagram`: a Unix-domain datagram socket on the I/O driver (tokio's names), bound to a
//! path, unbound, or one of a connected pair; the everyday `async`/`try_*` API and the
//! poll-style and `BufMut` methods.

use std::io;
use std::path::Path;
use std::task::{ready, Context, Poll};

use bytes::BufMut;

use super::SocketAddr;
use crate::io::{Interest, ReadBuf, Ready};
use crate::net::{fill_spare, fill_spare_len};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::{Direction, WRITABLE};

/// A Unix-domain datagram socket.
pub struct UnixDatagram {
    pub(super) io: PollEvented<mio::net::UnixDatagram>,
}

impl UnixDatagram {
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram { io: PollEvented::new(mio::net::UnixDatagram::bind(path)?)? })
    }
    /// Wraps a std socket (switched to non-blocking). Needs a runtime with I/O.
    #[track_caller]
    pub fn from_std(datagram: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        datagram.set_nonblocking(true)?;
        Ok(UnixDatagram { io: PollEvented::new(mio::net::UnixDatagram::from_std(datagram))? })
    }
    #[track_caller]
    pub fn unbound() -> io::Result<UnixDatagram> {
        Ok(UnixDatagram { io: PollEvented::new(mio::net::UnixDatagram::unbound()?)? })
    }
    #[track_caller]
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        let (a, b) = (UnixDatagram { io: PollEvented::new(a)? }, UnixDatagram { io: PollEvented::new(b)? });
        // A fresh pair can send at once (tokio 1.54 assumes it too); a `WouldBlock` clears it.
        a.io.registration().assume_ready(WRITABLE);
        b.io.registration().assume_ready(WRITABLE);
        Ok((a, b))
    }
    pub fn connect(&self, path: impl AsRef<Path>) -> io::Result<()> {
        self.io.get_ref().connect(path)
    }
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.registration().async_io(Interest::WRITABLE, || self.io.get_ref().send(buf)).await
    }
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().recv(buf)).await
    }
    pub async fn send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        self.io.registration().async_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, path)).await
    }
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().recv_from(buf)).await
    }
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().send(buf))
    }
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().recv(buf))
    }
    pub fn try_send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, path))
    }
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().recv_from(buf))
    }

    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.registration().ready(interest).await
    }
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Read).map_ok(drop)
    }
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Write).map_ok(drop)
    }
    /// Runs `f` (a non-blocking call on this socket) if `interest` is ready now; clears the
    /// readiness when `f` reports `WouldBlock`.
    pub fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.io.registration().try_io(interest, f)
    }
    /// Waits for `interest`, runs `f`, and retries while it reports `WouldBlock`.
    pub async fn async_io<R>(&self, interest: Interest, f: impl FnMut() -> io::Result<R>) -> io::Result<R> {
        self.io.registration().async_io(interest, f).await
    }

    /// Receives one datagram from the connected peer into `buf`.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let io = self.io.get_ref();
        let n = ready!(self.io.registration().poll_io(cx, Direction::Read, || io.recv(buf.initialize_unfilled())))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }

    /// Receives one datagram into `buf`; returns its sender's address.
    pub fn poll_recv_from(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<SocketAddr>> {
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
    pub fn poll_send_to(&self, cx: &mut Context<'_>, buf: &[u8], target: impl AsRef<Path>) -> Poll<io::Result<usize>> {
        let target = target.as_ref();
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send_to(buf, target))
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
