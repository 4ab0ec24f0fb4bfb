//! `UnixDatagram`: a Unix-domain datagram socket on the I/O driver (tokio's names), bound to a
//! path, unbound, or one of a connected pair. Its readiness methods and its sends to and
//! receives from the connected peer come from `net/socket_methods.rs` (shared with
//! `UdpSocket`); here are its constructors and its sends to a path.
//!
//! The socket on the driver is `Datagram`, mio's socket whose address-returning calls give
//! weft's [`SocketAddr`] (as tokio's `UnixDatagram` does), so the shared macro bodies,
//! which call `local_addr`, `peer_addr` and `recv_from` on it, return weft's type.

use std::io;
use std::path::Path;
use std::task::{Context, Poll};

use super::SocketAddr;
use crate::io::Interest;
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::{Direction, WRITABLE};

/// A Unix-domain datagram socket.
pub struct UnixDatagram {
    pub(super) io: PollEvented<Datagram>,
}

/// mio's datagram socket, with weft's [`SocketAddr`] from the calls that return an address;
/// the others forward unchanged.
pub(super) struct Datagram(mio::net::UnixDatagram);

impl Datagram {
    #[track_caller]
    fn new(io: mio::net::UnixDatagram) -> io::Result<PollEvented<Datagram>> {
        PollEvented::new(Datagram(io))
    }
    fn connect(&self, path: &Path) -> io::Result<()> {
        self.0.connect(path)
    }
    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.send(buf)
    }
    fn send_to(&self, buf: &[u8], path: &Path) -> io::Result<usize> {
        self.0.send_to(buf, path)
    }
    fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.recv(buf)
    }
    fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.0.recv_from(buf).map(|(n, addr)| (n, SocketAddr::from(addr)))
    }
    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr().map(SocketAddr::from)
    }
    fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr().map(SocketAddr::from)
    }
    fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.0.take_error()
    }
}

impl mio::event::Source for Datagram {
    fn register(&mut self, registry: &mio::Registry, token: mio::Token, interests: mio::Interest) -> io::Result<()> {
        self.0.register(registry, token, interests)
    }
    fn reregister(&mut self, registry: &mio::Registry, token: mio::Token, interests: mio::Interest) -> io::Result<()> {
        self.0.reregister(registry, token, interests)
    }
    fn deregister(&mut self, registry: &mio::Registry) -> io::Result<()> {
        self.0.deregister(registry)
    }
}

/// mio's `Debug` (so `UnixDatagram`'s is unchanged).
impl std::fmt::Debug for Datagram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::os::fd::AsRawFd for Datagram {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }
}

impl UnixDatagram {
    #[track_caller]
    pub fn bind<P: AsRef<Path>>(path: P) -> io::Result<UnixDatagram> {
        Ok(UnixDatagram { io: Datagram::new(mio::net::UnixDatagram::bind(path)?)? })
    }
    /// Wraps a std socket (switched to non-blocking). Needs a runtime with I/O.
    #[track_caller]
    pub fn from_std(datagram: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        datagram.set_nonblocking(true)?;
        Ok(UnixDatagram { io: Datagram::new(mio::net::UnixDatagram::from_std(datagram))? })
    }
    #[track_caller]
    pub fn unbound() -> io::Result<UnixDatagram> {
        Ok(UnixDatagram { io: Datagram::new(mio::net::UnixDatagram::unbound()?)? })
    }
    #[track_caller]
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        let (a, b) = (UnixDatagram { io: Datagram::new(a)? }, UnixDatagram { io: Datagram::new(b)? });
        // A fresh pair can send at once (tokio 1.54 assumes it too); a `WouldBlock` clears it.
        a.io.registration().assume_ready(WRITABLE);
        b.io.registration().assume_ready(WRITABLE);
        Ok((a, b))
    }
    pub fn connect<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        self.io.get_ref().connect(path.as_ref())
    }
    crate::net::socket_methods::address_methods!(SocketAddr);

    crate::net::socket_methods::readiness_methods!(poll_recv_ready, poll_send_ready);
    crate::net::socket_methods::datagram_methods!(SocketAddr);

    /// Sends one datagram to the socket at `path`.
    pub async fn send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        let path = path.as_ref();
        self.io.registration().async_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, path)).await
    }
    /// `send_to` if the socket can send now; `WouldBlock` otherwise.
    pub fn try_send_to<P: AsRef<Path>>(&self, buf: &[u8], path: P) -> io::Result<usize> {
        let path = path.as_ref();
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, path))
    }
    /// Sends one datagram to the socket at `target`.
    pub fn poll_send_to<P: AsRef<Path>>(&self, cx: &mut Context<'_>, buf: &[u8], target: P) -> Poll<io::Result<usize>> {
        let target = target.as_ref();
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send_to(buf, target))
    }
}
