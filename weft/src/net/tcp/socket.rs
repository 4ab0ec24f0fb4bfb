//! `TcpSocket`: an unconnected TCP socket for setting options before `bind`/`listen`/
//! `connect` (tokio's `TcpSocket`), built on `socket2`.

use std::io;
use std::net::SocketAddr;

use super::{TcpListener, TcpStream};

/// A TCP socket not yet connected or listening.
#[derive(Debug)]
pub struct TcpSocket {
    inner: socket2::Socket,
}

impl TcpSocket {
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(socket2::Domain::IPV4)
    }
    pub fn new_v6() -> io::Result<TcpSocket> {
        TcpSocket::new(socket2::Domain::IPV6)
    }
    fn new(domain: socket2::Domain) -> io::Result<TcpSocket> {
        let inner =
            socket2::Socket::new(domain, socket2::Type::STREAM.nonblocking().cloexec(), Some(socket2::Protocol::TCP))?;
        Ok(TcpSocket { inner })
    }
    pub fn set_reuseaddr(&self, on: bool) -> io::Result<()> {
        self.inner.set_reuse_address(on)
    }
    pub fn reuseaddr(&self) -> io::Result<bool> {
        self.inner.reuse_address()
    }
    pub fn set_reuseport(&self, on: bool) -> io::Result<()> {
        self.inner.set_reuse_port(on)
    }
    pub fn reuseport(&self) -> io::Result<bool> {
        self.inner.reuse_port()
    }
    /// `SO_KEEPALIVE`.
    pub fn set_keepalive(&self, on: bool) -> io::Result<()> {
        self.inner.set_keepalive(on)
    }
    pub fn keepalive(&self) -> io::Result<bool> {
        self.inner.keepalive()
    }
    /// `IP_TOS` of an IPv4 socket.
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.inner.set_tos(tos)
    }
    pub fn tos_v4(&self) -> io::Result<u32> {
        self.inner.tos()
    }
    /// `IPV6_TCLASS` of an IPv6 socket.
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.inner.set_tclass_v6(tclass)
    }
    pub fn tclass_v6(&self) -> io::Result<u32> {
        self.inner.tclass_v6()
    }
    /// Sets `SO_LINGER` to zero: closing the socket then resets the connection (RST) rather
    /// than sending the unsent data and a FIN.
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.inner.set_linger(Some(std::time::Duration::ZERO))
    }
    /// A socket from a std stream (already connected or not), to set options on it.
    pub fn from_std_stream(stream: std::net::TcpStream) -> TcpSocket {
        TcpSocket { inner: stream.into() }
    }
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_send_buffer_size(size as usize)
    }
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        self.inner.send_buffer_size().map(|n| n as u32)
    }
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_recv_buffer_size(size as usize)
    }
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        self.inner.recv_buffer_size().map(|n| n as u32)
    }
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        self.inner.set_nodelay(on)
    }
    pub fn set_linger(&self, dur: Option<std::time::Duration>) -> io::Result<()> {
        self.inner.set_linger(dur)
    }
    pub fn linger(&self) -> io::Result<Option<std::time::Duration>> {
        self.inner.linger()
    }
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.nodelay()
    }
    /// `TCP_QUICKACK` (Linux).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn quickack(&self) -> io::Result<bool> {
        self.inner.quickack()
    }
    /// Sets `TCP_QUICKACK` (Linux).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn set_quickack(&self, on: bool) -> io::Result<()> {
        self.inner.set_quickack(on)
    }
    /// The interface this socket is bound to (`SO_BINDTODEVICE`), `None` if it is not bound
    /// to one.
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    pub fn device(&self) -> io::Result<Option<Vec<u8>>> {
        self.inner.device()
    }
    /// Binds the socket to the interface named `interface` (`SO_BINDTODEVICE`): it then
    /// processes only packets that arrive on that interface. `None` or an empty name removes
    /// the binding. Binding to a device may need `CAP_NET_RAW`; removing one does not.
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    pub fn bind_device(&self, interface: Option<&[u8]>) -> io::Result<()> {
        self.inner.bind_device(interface)
    }
    /// Takes the socket's pending error (`SO_ERROR`), clearing it.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.inner.take_error()
    }
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()?.as_socket().ok_or_else(|| io::Error::other("not an IP socket"))
    }
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        self.inner.bind(&addr.into())
    }
    /// Starts listening; needs a runtime with I/O.
    #[track_caller]
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        self.inner.listen(backlog.min(i32::MAX as u32) as i32)?;
        TcpListener::from_std(self.inner.into())
    }
    /// Connects; needs a runtime with I/O.
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        match self.inner.connect(&addr.into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        let std: std::net::TcpStream = self.inner.into();
        let stream = TcpStream::new(mio::net::TcpStream::from_std(std))?;
        stream.connect_finish().await?;
        Ok(stream)
    }
}

impl std::os::fd::AsRawFd for TcpSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.inner.as_raw_fd()
    }
}

impl std::os::fd::FromRawFd for TcpSocket {
    /// Wraps an open socket descriptor, as tokio's: nothing is checked or registered until the
    /// socket connects or listens.
    ///
    /// # Safety
    /// `fd` must be an open socket that nothing else owns or closes.
    unsafe fn from_raw_fd(fd: std::os::fd::RawFd) -> TcpSocket {
        // SAFETY: the caller hands over sole ownership of the open socket `fd`.
        TcpSocket { inner: unsafe { <socket2::Socket as std::os::fd::FromRawFd>::from_raw_fd(fd) } }
    }
}

impl std::os::fd::IntoRawFd for TcpSocket {
    /// Gives up the descriptor without closing it.
    fn into_raw_fd(self) -> std::os::fd::RawFd {
        std::os::fd::IntoRawFd::into_raw_fd(self.inner)
    }
}
