//! UDP: `UdpSocket`, datagrams on the I/O driver. Each `send`/`recv` is one datagram;
//! readiness is cleared by tick on `WouldBlock` like every other socket.
//!
//! This file holds the type, its construction, its socket options and its sends; the
//! readiness methods and the sends to and receives from the connected peer come from
//! `net/socket_methods.rs` (shared with `UnixDatagram`); `peek.rs` holds the peeks (reading
//! the next datagram, or only its sender, without removing it).

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::task::{Context, Poll};

use crate::io::Interest;
use crate::net::addr::{each_addr, resolve, ToSocketAddrs};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::Direction;

mod peek;

/// A UDP socket (tokio's `UdpSocket`).
pub struct UdpSocket {
    io: PollEvented<mio::net::UdpSocket>,
}

impl UdpSocket {
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        each_addr(addr, |a| async move { UdpSocket::new(mio::net::UdpSocket::bind(a)?) }).await
    }

    #[track_caller]
    fn new(s: mio::net::UdpSocket) -> io::Result<UdpSocket> {
        Ok(UdpSocket { io: PollEvented::new(s)? })
    }

    /// Wraps a std socket (switched to non-blocking). Needs a runtime with I/O.
    #[track_caller]
    pub fn from_std(s: std::net::UdpSocket) -> io::Result<UdpSocket> {
        s.set_nonblocking(true)?;
        UdpSocket::new(mio::net::UdpSocket::from_std(s))
    }

    /// Deregisters the socket from the I/O driver and returns it as a std socket. As with
    /// tokio, it is left in non-blocking mode; call `set_nonblocking(false)` on it for
    /// blocking calls.
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        use std::os::fd::{FromRawFd, IntoRawFd};
        let mio = self.io.into_inner()?;
        // SAFETY: `into_raw_fd` hands over sole ownership of the open UDP socket's fd (it is
        // deregistered from the driver already), which the std socket then owns and closes.
        Ok(unsafe { std::net::UdpSocket::from_raw_fd(mio.into_raw_fd()) })
    }

    /// Sets the default peer for `send`/`recv` (first address that works).
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        let addrs = resolve(&addr).await?;
        let mut last = None;
        for a in addrs {
            match self.io.get_ref().connect(a) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no addresses to connect to")))
    }

    crate::net::socket_methods::address_methods!(SocketAddr);

    fn sock(&self) -> socket2::SockRef<'_> {
        socket2::SockRef::from(self.io.get_ref())
    }

    /// `SO_BROADCAST`.
    pub fn broadcast(&self) -> io::Result<bool> {
        self.io.get_ref().broadcast()
    }
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_broadcast(on)
    }
    /// `IP_TTL`.
    pub fn ttl(&self) -> io::Result<u32> {
        self.io.get_ref().ttl()
    }
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_ttl(ttl)
    }
    /// `IP_MULTICAST_LOOP`.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v4()
    }
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v4(on)
    }
    /// `IP_MULTICAST_TTL`.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        self.io.get_ref().multicast_ttl_v4()
    }
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.io.get_ref().set_multicast_ttl_v4(ttl)
    }
    /// `IPV6_MULTICAST_LOOP`.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        self.io.get_ref().multicast_loop_v6()
    }
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.io.get_ref().set_multicast_loop_v6(on)
    }
    /// `IP_TOS` of an IPv4 socket.
    pub fn tos_v4(&self) -> io::Result<u32> {
        self.sock().tos()
    }
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.sock().set_tos(tos)
    }
    /// `IPV6_TCLASS` of an IPv6 socket.
    pub fn tclass_v6(&self) -> io::Result<u32> {
        self.sock().tclass_v6()
    }
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.sock().set_tclass_v6(tclass)
    }

    /// The interface this socket is bound to (`SO_BINDTODEVICE`), `None` if it is not bound
    /// to one.
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    pub fn device(&self) -> io::Result<Option<Vec<u8>>> {
        self.sock().device()
    }
    /// Binds the socket to the interface named `interface` (`SO_BINDTODEVICE`): it then
    /// processes only packets that arrive on that interface. `None` or an empty name removes
    /// the binding. Binding to a device may need `CAP_NET_RAW`; removing one does not.
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    pub fn bind_device(&self, interface: Option<&[u8]>) -> io::Result<()> {
        self.sock().bind_device(interface)
    }

    /// Joins the IPv4 multicast group `multiaddr` (`IP_ADD_MEMBERSHIP`) on the local
    /// interface whose address is `interface`; `Ipv4Addr::UNSPECIFIED` lets the system pick.
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get_ref().join_multicast_v4(&multiaddr, &interface)
    }
    /// Joins the IPv6 multicast group `multiaddr` (`IPV6_ADD_MEMBERSHIP`) on the interface
    /// with index `interface`; 0 lets the system pick.
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get_ref().join_multicast_v6(multiaddr, interface)
    }
    /// Leaves a group joined with [`join_multicast_v4`](Self::join_multicast_v4)
    /// (`IP_DROP_MEMBERSHIP`).
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.io.get_ref().leave_multicast_v4(&multiaddr, &interface)
    }
    /// Leaves a group joined with [`join_multicast_v6`](Self::join_multicast_v6)
    /// (`IPV6_DROP_MEMBERSHIP`).
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.io.get_ref().leave_multicast_v6(multiaddr, interface)
    }

    crate::net::socket_methods::readiness_methods!(poll_recv_ready, poll_send_ready);
    crate::net::socket_methods::datagram_methods!(SocketAddr);

    /// Sends one datagram to the first address `target` resolves to.
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let addrs = resolve(&target).await?;
        let Some(&a) = addrs.first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no addresses to send data to"));
        };
        self.io.registration().async_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, a)).await
    }

    /// `send_to` if the socket can send now; `WouldBlock` otherwise.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, target))
    }

    /// Sends one datagram to `target`.
    pub fn poll_send_to(&self, cx: &mut Context<'_>, buf: &[u8], target: SocketAddr) -> Poll<io::Result<usize>> {
        self.io.registration().poll_io(cx, Direction::Write, || self.io.get_ref().send_to(buf, target))
    }
}

crate::net::socket_methods::debug_and_as_raw_fd!(UdpSocket);
