//! `TcpStream`: a connected TCP socket; implements tokio's and futures-io's
//! `AsyncRead`/`AsyncWrite`.

use std::io;
use std::net::{Shutdown, SocketAddr};
use std::task::{ready, Context, Poll};

use super::split::{split, split_owned, OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use crate::io::{Interest, ReadBuf};
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

    crate::net::socket_methods::address_methods!(SocketAddr);

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

    crate::net::socket_methods::readiness_methods!(poll_read_ready, poll_write_ready);
    crate::net::socket_methods::byte_stream_try_methods!();

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
}

crate::net::socket_methods::byte_stream_io_traits!(TcpStream);
crate::net::socket_methods::debug_and_as_raw_fd!(TcpStream);
