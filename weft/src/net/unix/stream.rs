//! The less common methods of [`UnixListener`] and [`UnixStream`] (tokio's names): binding and
//! connecting by `SocketAddr` (abstract-namespace addresses on Linux), readiness polling,
//! vectored and `BufMut` `try_*` I/O, and `into_std`. Kept apart from `unix.rs`, which holds
//! the everyday API.

use std::io::{self, Read, Write};
use std::os::unix::net::SocketAddr;
use std::task::{Context, Poll};

use super::{UnixListener, UnixStream};
use crate::net::fill_spare;
use crate::io::Interest;
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::Direction;

impl UnixListener {
    /// Binds to `addr` (a path, or an abstract name on Linux). Needs a runtime with I/O.
    #[track_caller]
    pub fn bind_addr(addr: &SocketAddr) -> io::Result<UnixListener> {
        Ok(UnixListener { io: PollEvented::new(mio::net::UnixListener::bind_addr(addr)?)? })
    }

    /// Deregisters and returns the std listener (still non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands over sole ownership of the open listening socket.
        Ok(unsafe { std::os::unix::net::UnixListener::from_raw_fd(mio.into_raw_fd()) })
    }
}

impl UnixStream {
    /// Connects to `addr` (a path, or an abstract name on Linux). Needs a runtime with I/O.
    pub async fn connect_addr(addr: &SocketAddr) -> io::Result<UnixStream> {
        UnixStream::connect_finish(UnixStream::from_mio(mio::net::UnixStream::connect_addr(addr)?)?).await
    }

    /// Deregisters and returns the std stream (still non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands over sole ownership of the open connected socket.
        Ok(unsafe { std::os::unix::net::UnixStream::from_raw_fd(mio.into_raw_fd()) })
    }

    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Read).map_ok(drop)
    }

    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Write).map_ok(drop)
    }

    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().read_vectored(bufs))
    }

    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().write_vectored(bufs))
    }

    /// Reads what is available now into `buf`'s spare capacity (advancing it).
    pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let io = self.io.get_ref();
        let f = || {
            fill_spare(buf, |dst| {
                {
                    let mut r = io;
                    r.read(dst)
                }
                .map(|n| (n, ()))
            })
            .map(|(n, ())| n)
        };
        self.io.registration().try_io(Interest::READABLE, f)
    }
}
