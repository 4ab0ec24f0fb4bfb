//! `TcpStream`: a connected TCP socket; implements tokio's and futures-io's
//! `AsyncRead`/`AsyncWrite`.

use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::split::{split, split_owned, OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::Direction;

/// A TCP connection (tokio's `TcpStream`).
pub struct TcpStream {
    pub(crate) io: PollEvented<mio::net::TcpStream>,
}

impl TcpStream {
    /// Connects to the first of `addr`'s addresses that accepts.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        each_addr(addr, TcpStream::connect_addr).await
    }

    async fn connect_addr(addr: SocketAddr) -> io::Result<TcpStream> {
        let stream = TcpStream::new(mio::net::TcpStream::connect(addr)?)?;
        stream.connect_finish().await?;
        Ok(stream)
    }

    /// Waits for a non-blocking `connect` to finish and reports its outcome.
    pub(crate) async fn connect_finish(&self) -> io::Result<()> {
        // Writable means the handshake finished, one way or the other.
        self.io.registration().readiness(Interest::WRITABLE).await?;
        if let Some(e) = self.io.get_ref().take_error()? {
            return Err(e);
        }
        match self.io.get_ref().peer_addr() {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                Err(io::Error::new(io::ErrorKind::ConnectionRefused, "connection failed"))
            }
            Err(e) => Err(e),
        }
    }

    #[track_caller]
    pub(crate) fn new(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream { io: PollEvented::new(stream)? })
    }

    /// Wraps a connected std stream (switched to non-blocking). Needs a runtime with I/O.
    #[track_caller]
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        TcpStream::new(mio::net::TcpStream::from_std(stream))
    }

    /// Deregisters and returns the std stream (still non-blocking).
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands over sole ownership of a valid connected socket fd.
        Ok(unsafe { std::net::TcpStream::from_raw_fd(mio.into_raw_fd()) })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.get_ref().nodelay()
    }

    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.get_ref().set_nodelay(nodelay)
    }

    /// `SO_LINGER`: how long `close` may block to send unsent data (`None`: not at all).
    pub fn linger(&self) -> io::Result<Option<std::time::Duration>> {
        socket2::SockRef::from(self.io.get_ref()).linger()
    }

    /// Sets `SO_LINGER`; `Some(Duration::ZERO)` makes `close` reset the connection.
    pub fn set_linger(&self, dur: Option<std::time::Duration>) -> io::Result<()> {
        socket2::SockRef::from(self.io.get_ref()).set_linger(dur)
    }

    /// Sets `SO_LINGER` to zero: dropping the stream then resets the connection (RST).
    pub fn set_zero_linger(&self) -> io::Result<()> {
        socket2::SockRef::from(self.io.get_ref()).set_linger(Some(std::time::Duration::ZERO))
    }

    /// `TCP_QUICKACK` (Linux): whether ACKs are sent immediately rather than delayed.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn quickack(&self) -> io::Result<bool> {
        socket2::SockRef::from(self.io.get_ref()).quickack()
    }

    /// Sets `TCP_QUICKACK` (Linux; the kernel may clear it again on its own, as documented
    /// in tcp(7)).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn set_quickack(&self, quickack: bool) -> io::Result<()> {
        socket2::SockRef::from(self.io.get_ref()).set_quickack(quickack)
    }

    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }

    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }

    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    /// Waits until any of `interest` is ready.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.registration().ready(interest).await
    }

    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Read).map_ok(drop)
    }

    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Write).map_ok(drop)
    }

    /// Reads what is available now; `WouldBlock` if nothing is.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::Read;
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().read(buf))
    }

    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        use std::io::Read;
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().read_vectored(bufs))
    }

    /// Reads what is available now into `buf`'s spare capacity (advancing it); `WouldBlock`
    /// if nothing is.
    pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.io.registration().try_io(Interest::READABLE, || crate::net::read_into_buf(self.io.get_ref(), buf))
    }

    /// Writes what fits now; `WouldBlock` if nothing does.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        use std::io::Write;
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().write(buf))
    }

    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        use std::io::Write;
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().write_vectored(bufs))
    }

    /// Runs `f` (a non-blocking operation on the socket) if `interest` is ready; clears the
    /// readiness if it returns `WouldBlock`.
    pub fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.io.registration().try_io(interest, f)
    }

    /// Waits for `interest`, then runs `f`, retrying on `WouldBlock`.
    pub async fn async_io<R>(&self, interest: Interest, f: impl FnMut() -> io::Result<R>) -> io::Result<R> {
        self.io.registration().async_io(interest, f).await
    }

    /// Receives data without removing it from the queue.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().peek(buf)).await
    }

    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<usize>> {
        let n = ready!(self
            .io
            .registration()
            .poll_io(cx, Direction::Read, || { self.io.get_ref().peek(buf.initialize_unfilled()) }))?;
        buf.advance(n);
        Poll::Ready(Ok(n))
    }

    /// Borrowed halves (no allocation, no locking).
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        split(self)
    }

    /// Owned halves (one `Arc`); `reunite` puts them back together.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
    }

    /// `shutdown(2)`, with `NotConnected` reported as success (as tokio does): the peer's
    /// reset may have closed the connection first, and then there is nothing left to shut.
    pub(crate) fn shutdown_std(&self, how: Shutdown) -> io::Result<()> {
        match self.io.get_ref().shutdown(how) {
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            other => other,
        }
    }

    pub(crate) fn poll_read_priv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.io.poll_read(cx, buf)
    }

    pub(crate) fn poll_write_priv(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io.poll_write(cx, buf)
    }

    pub(crate) fn poll_write_vectored_priv(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_write_vectored(cx, bufs)
    }
}

impl AsyncRead for TcpStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.poll_read_priv(cx, buf)
    }
}

impl AsyncWrite for TcpStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_priv(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored_priv(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        true
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    /// Shuts down the write side (sends FIN); reads still work (half-close).
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown_std(Shutdown::Write))
    }
}

impl futures_io::AsyncRead for TcpStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        let mut rb = ReadBuf::new(buf);
        ready!(self.poll_read_priv(cx, &mut rb))?;
        Poll::Ready(Ok(rb.filled().len()))
    }
}

impl futures_io::AsyncWrite for TcpStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_priv(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored_priv(cx, bufs)
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown_std(Shutdown::Write))
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

impl std::os::fd::AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.get_ref().as_raw_fd()
    }
}
