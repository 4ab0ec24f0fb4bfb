//! Unix-domain sockets: `UnixListener`, `UnixStream` (byte streams, with tokio's and
//! futures-io's `AsyncRead`/`AsyncWrite`) and `UnixDatagram`, on the I/O driver.

use std::fmt;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::path::Path;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pub mod pipe;
pub(super) mod socket;
mod stream;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod ucred;

#[cfg(any(target_os = "linux", target_os = "android"))]
pub use ucred::UCred;
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::{Direction, READABLE, WRITABLE};
pub use std::os::unix::net::SocketAddr;

/// A Unix-domain listening socket.
pub struct UnixListener {
    pub(super) io: PollEvented<mio::net::UnixListener>,
}

impl UnixListener {
    /// Binds to `path` (which must not exist). Needs a runtime with I/O; not `async`, like
    /// tokio's.
    #[track_caller]
    pub fn bind(path: impl AsRef<Path>) -> io::Result<UnixListener> {
        Ok(UnixListener { io: PollEvented::new(mio::net::UnixListener::bind(path)?)? })
    }

    #[track_caller]
    pub fn from_std(l: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        l.set_nonblocking(true)?;
        Ok(UnixListener { io: PollEvented::new(mio::net::UnixListener::from_std(l))? })
    }

    /// Any number of tasks may wait here on one listener (the registration's waiter list).
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (s, addr) = self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().accept()).await?;
        Ok((UnixStream::accepted(s)?, addr))
    }

    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        let (s, addr) = ready!(self.io.registration().poll_io(cx, Direction::Read, || self.io.get_ref().accept()))?;
        Poll::Ready(Ok((UnixStream::accepted(s)?, addr)))
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }
}

/// A connected Unix-domain byte stream.
pub struct UnixStream {
    pub(super) io: PollEvented<mio::net::UnixStream>,
}

impl UnixStream {
    pub async fn connect(path: impl AsRef<Path>) -> io::Result<UnixStream> {
        UnixStream::connect_finish(UnixStream::new(mio::net::UnixStream::connect(path)?)?).await
    }

    /// Waits for a non-blocking `connect` to finish; its error, if it failed.
    pub(crate) async fn connect_finish(s: UnixStream) -> io::Result<UnixStream> {
        s.io.registration().readiness(Interest::WRITABLE).await?;
        if let Some(e) = s.io.get_ref().take_error()? {
            return Err(e);
        }
        Ok(s)
    }

    /// Wraps an accepted stream. As for TCP, it may hold data before the driver's first event
    /// for it, so it starts out assumed readable and writable.
    fn accepted(s: mio::net::UnixStream) -> io::Result<UnixStream> {
        let stream = UnixStream::new(s)?;
        stream.io.registration().assume_ready(READABLE | WRITABLE);
        Ok(stream)
    }

    #[track_caller]
    pub(super) fn from_mio(s: mio::net::UnixStream) -> io::Result<UnixStream> {
        UnixStream::new(s)
    }

    #[track_caller]
    fn new(s: mio::net::UnixStream) -> io::Result<UnixStream> {
        Ok(UnixStream { io: PollEvented::new(s)? })
    }

    #[track_caller]
    pub fn from_std(s: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        s.set_nonblocking(true)?;
        UnixStream::new(mio::net::UnixStream::from_std(s))
    }

    /// The credentials of the process at the other end (`SO_PEERCRED`).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn peer_cred(&self) -> io::Result<UCred> {
        ucred::peer_cred(self.io.get_ref())
    }

    /// A connected pair.
    #[track_caller]
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = mio::net::UnixStream::pair()?;
        let (a, b) = (UnixStream::new(a)?, UnixStream::new(b)?);
        // A fresh pair is writable at once (tokio assumes it too).
        a.io.registration().assume_ready(WRITABLE);
        b.io.registration().assume_ready(WRITABLE);
        Ok((a, b))
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
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
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().read(buf))
    }
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().write(buf))
    }
    /// Shuts down one or both directions.
    pub fn shutdown_std(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }
    /// Borrowed read and write halves, usable from two futures at once (no locking: both
    /// directions of the socket are independent).
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        (ReadHalf(self), WriteHalf(self))
    }
}

/// The read half of [`UnixStream::split`].
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a UnixStream);

/// The write half of [`UnixStream::split`]; `shutdown` shuts the write direction.
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a UnixStream);

impl AsyncRead for ReadHalf<'_> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.0.io.poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteHalf<'_> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.io.poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.shutdown_std(Shutdown::Write))
    }
}

impl AsRef<UnixStream> for ReadHalf<'_> {
    fn as_ref(&self) -> &UnixStream {
        self.0
    }
}

impl AsRef<UnixStream> for WriteHalf<'_> {
    fn as_ref(&self) -> &UnixStream {
        self.0
    }
}

impl AsyncRead for UnixStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.io.poll_read(cx, buf)
    }
}

impl AsyncWrite for UnixStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.poll_write(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        true
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown_std(Shutdown::Write))
    }
}

impl futures_io::AsyncRead for UnixStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut rb = ReadBuf::new(buf);
        ready!(self.io.poll_read(cx, &mut rb))?;
        Poll::Ready(Ok(rb.filled().len()))
    }
}

impl futures_io::AsyncWrite for UnixStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown_std(Shutdown::Write))
    }
}

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
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
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
}

macro_rules! debug_fd {
    ($($t:ty),*) => {$(
        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.io.get_ref().fmt(f)
            }
        }
        impl std::os::fd::AsRawFd for $t {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }
    )*};
}
debug_fd!(UnixListener, UnixStream, UnixDatagram);
