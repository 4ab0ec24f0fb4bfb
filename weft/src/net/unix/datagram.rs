//! `UnixDatagram`: a Unix-domain datagram socket on the I/O driver (tokio's names), bound to a
//! path, unbound, or one of a connected pair. Its readiness methods and its sends to and
//! receives from the connected peer come from `net/socket_methods.rs` (shared with
//! `UdpSocket`); here are its constructors and its sends to a path.

use std::io;
use std::path::Path;
use std::task::{Context, Poll};

use super::SocketAddr;
use crate::io::Interest;
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
    crate::net::socket_methods::address_methods!(SocketAddr);

    crate::net::socket_methods::readiness_methods!(poll_recv_ready, poll_send_ready);
    crate::net::socket_methods::datagram_methods!(SocketAddr);

    /// Sends one datagram to the socket at `path`.
    pub async fn send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        self.io.registration().async_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, path)).await
    }
    /// `send_to` if the socket can send now; `WouldBlock` otherwise.
    pub fn try_send_to(&self, buf: &[u8], path: impl AsRef<Path>) -> io::Result<usize> {
        let path = path.as_ref();
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, path))
    }
    /// Sends one datagram to the socket at `target`.
    pub fn poll_send_to(&self, cx: &mut Context<'_>, buf: &[u8], target: impl AsRef<Path>) -> Poll<io::Result<usize>> {
        let target = target.as_ref();
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send_to(buf, target))
    }
}
