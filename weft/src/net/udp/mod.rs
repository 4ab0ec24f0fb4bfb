//! UDP: `UdpSocket`, datagrams on the I/O driver. Each `send`/`recv` is one datagram;
//! readiness is cleared by tick on `WouldBlock` like every other socket.
//!
//! This file holds the type, its construction, its socket options and the everyday
//! `async`/`try_*` API; `poll.rs` holds the poll-style methods (for hand-written futures),
//! peeking, and receives into a `BufMut`.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use crate::io::{Interest, Ready};
use crate::net::addr::{each_addr, resolve, ToSocketAddrs};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::Direction;

mod poll;

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

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.io.get_ref().take_error()
    }

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

    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.io.registration().ready(interest).await
    }
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Read).map_ok(drop)
    }
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.registration().poll_ready(cx, Direction::Write).map_ok(drop)
    }
    /// Runs `f` (a non-blocking call on this socket) if `interest` is ready now; clears the
    /// readiness when `f` reports `WouldBlock`.
    pub fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.io.registration().try_io(interest, f)
    }
    /// Waits for `interest`, runs `f`, and retries while it reports `WouldBlock`.
    pub async fn async_io<R>(&self, interest: Interest, f: impl FnMut() -> io::Result<R>) -> io::Result<R> {
        self.io.registration().async_io(interest, f).await
    }

    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.registration().async_io(Interest::WRITABLE, || self.io.get_ref().send(buf)).await
    }
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().recv(buf)).await
    }
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        let addrs = resolve(&target).await?;
        let Some(&a) = addrs.first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no addresses to send data to"));
        };
        self.io.registration().async_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, a)).await
    }
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().recv_from(buf)).await
    }
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.registration().async_io(Interest::READABLE, || self.io.get_ref().peek_from(buf)).await
    }

    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().send(buf))
    }
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().recv(buf))
    }
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io.registration().try_io(Interest::WRITABLE, || self.io.get_ref().send_to(buf, target))
    }
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.registration().try_io(Interest::READABLE, || self.io.get_ref().recv_from(buf))
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.io.get_ref().fmt(f)
    }
}

impl std::os::fd::AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.get_ref().as_raw_fd()
    }
}
