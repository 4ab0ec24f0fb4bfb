//! `UnixSocket`: an unconnected Unix-domain socket, for binding (to a path) before `listen`,
//! `connect` or use as a datagram socket (tokio's `UnixSocket`), built on `socket2`.

use std::io;
use std::path::Path;

use super::{UnixDatagram, UnixListener, UnixStream};

/// A Unix-domain socket not yet listening, connected or wrapped as a datagram socket.
#[derive(Debug)]
pub struct UnixSocket {
    inner: socket2::Socket,
}

impl UnixSocket {
    /// A new stream (`SOCK_STREAM`) socket.
    pub fn new_stream() -> io::Result<UnixSocket> {
        UnixSocket::new(socket2::Type::STREAM)
    }

    /// A new datagram (`SOCK_DGRAM`) socket.
    pub fn new_datagram() -> io::Result<UnixSocket> {
        UnixSocket::new(socket2::Type::DGRAM)
    }

    fn new(ty: socket2::Type) -> io::Result<UnixSocket> {
        let inner = socket2::Socket::new(socket2::Domain::UNIX, ty.nonblocking().cloexec(), None)?;
        Ok(UnixSocket { inner })
    }

    fn ty(&self) -> io::Result<socket2::Type> {
        self.inner.r#type()
    }

    /// Binds the socket to `path`.
    pub fn bind(&self, path: impl AsRef<Path>) -> io::Result<()> {
        self.inner.bind(&socket2::SockAddr::unix(path)?)
    }

    /// Starts listening (stream sockets only); needs a runtime with I/O.
    #[track_caller]
    pub fn listen(self, backlog: u32) -> io::Result<UnixListener> {
        if self.ty()? == socket2::Type::DGRAM {
            return Err(io::Error::other("listen cannot be called on a datagram socket"));
        }
        self.inner.listen(backlog.min(i32::MAX as u32) as i32)?;
        UnixListener::from_std(self.inner.into())
    }

    /// Connects to `path` (stream sockets only); needs a runtime with I/O.
    pub async fn connect(self, path: impl AsRef<Path>) -> io::Result<UnixStream> {
        if self.ty()? == socket2::Type::DGRAM {
            return Err(io::Error::other("connect cannot be called on a datagram socket"));
        }
        match self.inner.connect(&socket2::SockAddr::unix(path)?) {
            Ok(()) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINPROGRESS) | Some(libc::EAGAIN)) => {}
            Err(e) => return Err(e),
        }
        UnixStream::connect_finish(UnixStream::from_std(self.inner.into())?).await
    }

    /// Wraps the socket as a [`UnixDatagram`] (datagram sockets only); needs a runtime with
    /// I/O.
    #[track_caller]
    pub fn datagram(self) -> io::Result<UnixDatagram> {
        if self.ty()? == socket2::Type::STREAM {
            return Err(io::Error::other("datagram cannot be called on a stream socket"));
        }
        UnixDatagram::from_std(self.inner.into())
    }
}

impl std::os::fd::AsRawFd for UnixSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.inner.as_raw_fd()
    }
}

impl std::os::fd::FromRawFd for UnixSocket {
    /// Wraps an open socket descriptor, as tokio's: nothing is checked or registered until the
    /// socket connects or listens.
    ///
    /// # Safety
    /// `fd` must be an open socket that nothing else owns or closes.
    unsafe fn from_raw_fd(fd: std::os::fd::RawFd) -> UnixSocket {
        // SAFETY: the caller hands over sole ownership of the open socket `fd`.
        UnixSocket { inner: unsafe { <socket2::Socket as std::os::fd::FromRawFd>::from_raw_fd(fd) } }
    }
}

impl std::os::fd::IntoRawFd for UnixSocket {
    /// Gives up the descriptor without closing it.
    fn into_raw_fd(self) -> std::os::fd::RawFd {
        std::os::fd::IntoRawFd::into_raw_fd(self.inner)
    }
}
