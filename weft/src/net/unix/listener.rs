//! `UnixListener`: a listening Unix-domain stream socket on the I/O driver, bound to a path
//! or (by `SocketAddr`) to an abstract name on Linux.

use std::io;
use std::path::Path;
use std::task::{ready, Context, Poll};

use super::{SocketAddr, UnixStream};
use crate::io::Interest;
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::Direction;

/// A Unix-domain listening socket.
pub struct UnixListener {
    pub(super) io: PollEvented<mio::net::UnixListener>,
}

impl UnixListener {
    /// Binds to `path` (which must not exist); on Linux and Android a path starting with a NUL
    /// byte names an abstract socket, as in tokio. Needs a runtime with I/O; not `async`, like
    /// tokio's.
    #[track_caller]
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixListener> {
        let addr = super::socketaddr::for_path(path.as_ref())?;
        Ok(UnixListener { io: PollEvented::new(mio::net::UnixListener::bind_addr(&addr)?)? })
    }

    /// Binds to `addr` (a path, or an abstract name on Linux). Needs a runtime with I/O.
    #[track_caller]
    pub fn bind_addr(addr: &SocketAddr) -> io::Result<UnixListener> {
        Ok(UnixListener { io: PollEvented::new(mio::net::UnixListener::bind_addr(addr.as_std())?)? })
    }

    #[track_caller]
    pub fn from_std(l: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        l.set_nonblocking(true)?;
        Ok(UnixListener { io: PollEvented::new(mio::net::UnixListener::from_std(l))? })
    }

    /// Deregisters and returns the std listener (still non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands over sole ownership of the open listening socket.
        Ok(unsafe { std::os::unix::net::UnixListener::from_raw_fd(mio.into_raw_fd()) })
    }

    /// Any number of tasks may wait here on one listener (the registration's waiter list).
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let (s, addr) = self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().accept()).await?;
        Ok((UnixStream::accepted(s)?, SocketAddr::from(addr)))
    }

    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        let (s, addr) = ready!(self.io.registration().poll_io(cx, Direction::Read, || self.io.get_ref().accept()))?;
        Poll::Ready(Ok((UnixStream::accepted(s)?, SocketAddr::from(addr))))
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr().map(SocketAddr::from)
    }

    /// Takes the socket's pending error (`SO_ERROR`), clearing it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }
}
