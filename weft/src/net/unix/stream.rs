//! `UnixStream`: a connected Unix-domain byte stream on the I/O driver, with tokio's and
//! futures-io's `AsyncRead`/`AsyncWrite`; its halves (`split`, `into_split`) are in
//! `split.rs`.

use std::io;
use std::net::Shutdown;
use std::path::Path;

use super::split::{split, split_owned, OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use super::SocketAddr;
#[cfg(any(target_os = "linux", target_os = "android"))]
use super::UCred;
use crate::io::Interest;
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::{READABLE, WRITABLE};

/// A connected Unix-domain byte stream.
pub struct UnixStream {
    pub(super) io: PollEvented<mio::net::UnixStream>,
}

impl UnixStream {
    pub async fn connect<P: AsRef<Path>>(path: P) -> io::Result<UnixStream> {
        let addr = super::socketaddr::for_path(path.as_ref())?;
        UnixStream::connect_finish(UnixStream::new(mio::net::UnixStream::connect_addr(&addr)?)?).await
    }

    /// Connects to `addr` (a path, or an abstract name on Linux). Needs a runtime with I/O.
    pub async fn connect_addr(addr: &SocketAddr) -> io::Result<UnixStream> {
        UnixStream::connect_finish(UnixStream::new(mio::net::UnixStream::connect_addr(addr.as_std())?)?).await
    }

    /// Waits for a non-blocking `connect` to finish; its error, if it failed.
    pub(super) async fn connect_finish(s: UnixStream) -> io::Result<UnixStream> {
        s.io.registration().readiness(Interest::WRITABLE).await?;
        if let Some(e) = s.io.get_ref().take_error()? {
            return Err(e);
        }
        Ok(s)
    }

    /// Wraps an accepted stream. As for TCP, it may hold data before the driver's first event
    /// for it, so it starts out assumed readable and writable.
    pub(super) fn accepted(s: mio::net::UnixStream) -> io::Result<UnixStream> {
        let stream = UnixStream::new(s)?;
        stream.io.registration().assume_ready(READABLE | WRITABLE);
        Ok(stream)
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

    /// Deregisters and returns the std stream (still non-blocking).
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands over sole ownership of the open connected socket.
        Ok(unsafe { std::os::unix::net::UnixStream::from_raw_fd(mio.into_raw_fd()) })
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

    /// The credentials of the process at the other end (`SO_PEERCRED`).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn peer_cred(&self) -> io::Result<UCred> {
        super::ucred::peer_cred(self.io.get_ref())
    }

    /// The address this socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr().map(SocketAddr::from)
    }

    /// The address of the connected peer.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr().map(SocketAddr::from)
    }

    /// Takes the socket's pending error (`SO_ERROR`), clearing it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

    crate::net::socket_methods::readiness_methods!(poll_read_ready, poll_write_ready);
    crate::net::socket_methods::byte_stream_try_methods!();

    /// Shuts down one or both directions.
    pub fn shutdown_std(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }
    /// Borrowed read and write halves, usable from two futures at once (no allocation, no
    /// locking: both directions of the socket are independent).
    pub fn split(&mut self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        split(self)
    }

    /// Owned read and write halves (one `Arc`), which can move to different tasks;
    /// `reunite` puts them back together. Dropping the write half shuts down the write
    /// direction unless it is `forget`-ed.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
    }
}

crate::net::socket_methods::byte_stream_io_traits!(UnixStream);
