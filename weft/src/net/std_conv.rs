//! Conversions between weft's sockets and std's: `TryFrom<std socket>` (tokio's spelling of
//! `from_std`), `AsFd` (a borrowed fd, for socket2/nix/rustix calls on a weft socket) and
//! `AsRef<Self>` on the streams.
//!
//! Kept apart from the socket files so each socket type gets them from one macro and they
//! stay identical across the seven types.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use super::tcp::{TcpListener, TcpSocket, TcpStream};
use super::{UdpSocket, UnixDatagram, UnixListener, UnixSocket, UnixStream};

macro_rules! try_from_std {
    ($($weft:ty => $std:ty),* $(,)?) => {$(
        /// The same as `from_std`: switches the socket to non-blocking mode and registers it
        /// with the current runtime's I/O driver (panics outside a runtime with I/O enabled).
        impl TryFrom<$std> for $weft {
            type Error = io::Error;

            #[track_caller]
            fn try_from(socket: $std) -> io::Result<Self> {
                <$weft>::from_std(socket)
            }
        }
    )*};
}

try_from_std!(
    TcpStream => std::net::TcpStream,
    TcpListener => std::net::TcpListener,
    UdpSocket => std::net::UdpSocket,
    UnixStream => std::os::unix::net::UnixStream,
    UnixListener => std::os::unix::net::UnixListener,
    UnixDatagram => std::os::unix::net::UnixDatagram,
);

macro_rules! as_fd {
    ($($weft:ty),* $(,)?) => {$(
        impl AsFd for $weft {
            fn as_fd(&self) -> BorrowedFd<'_> {
                // SAFETY: `as_raw_fd` is the fd this socket owns; it stays open until the
                // socket is dropped, which the returned borrow (tied to `&self`) cannot outlive.
                unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
            }
        }
    )*};
}

as_fd!(TcpStream, TcpListener, TcpSocket, UdpSocket, UnixStream, UnixListener, UnixDatagram, UnixSocket);

/// `AsRef<Self>` on the streams, as tokio: code generic over `AsRef<TcpStream>` takes the
/// stream itself as well as its split halves.
macro_rules! as_ref_self {
    ($($weft:ty),* $(,)?) => {$(
        impl AsRef<$weft> for $weft {
            fn as_ref(&self) -> &$weft {
                self
            }
        }
    )*};
}

as_ref_self!(TcpStream, UnixStream);
