//! `TcpListener`: a listening socket whose `accept` waits on the I/O driver.

use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use super::TcpStream;
use crate::io::Interest;
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::{Direction, READABLE, WRITABLE};

/// A TCP listener (tokio's `TcpListener`).
pub struct TcpListener {
    io: PollEvented<mio::net::TcpListener>,
}

impl TcpListener {
    /// Binds to the first of `addr`'s addresses that works (SO_REUSEADDR set, backlog 1024).
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        each_addr(addr, |a| async move { TcpListener::new(mio::net::TcpListener::bind(a)?) }).await
    }

    #[track_caller]
    fn new(listener: mio::net::TcpListener) -> io::Result<TcpListener> {
        Ok(TcpListener { io: PollEvented::new(listener)? })
    }

    /// Wraps a std listener (it is switched to non-blocking mode). Must be called inside a
    /// runtime with I/O enabled.
    #[track_caller]
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        TcpListener::new(mio::net::TcpListener::from_std(listener))
    }

    /// Deregisters and returns the std listener (still non-blocking).
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands over sole ownership of a valid listening socket fd.
        Ok(unsafe { std::net::TcpListener::from_raw_fd(mio.into_raw_fd()) })
    }

    /// Accepts a connection.
    ///
    /// Waits through the registration's waiter list (not the single `poll_accept` slot), so
    /// any number of tasks may wait in `accept` on one listener and each is woken when a
    /// connection arrives, as with tokio.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, addr) = self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().accept()).await?;
        Ok((Self::accepted(stream)?, addr))
    }

    /// Polls for a connection (for hand-written futures and accept loops).
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        let (stream, addr) =
            std::task::ready!(self.io.registration().poll_io(cx, Direction::Read, || self.io.get_ref().accept()))?;
        Poll::Ready(Ok((Self::accepted(stream)?, addr)))
    }

    fn accepted(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        let stream = TcpStream::new(stream)?;
        // An accepted socket may already hold data (and is writable) before the driver's
        // first event for it: assume both, as tokio does; a `WouldBlock` clears them.
        stream.io.registration().assume_ready(READABLE | WRITABLE);
        Ok(stream)
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }

    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }
}

crate::net::socket_methods::debug_and_as_raw_fd!(TcpListener);
