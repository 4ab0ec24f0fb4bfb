//! `ToSocketAddrs` and `lookup_host`: address arguments that may need DNS.
//!
//! Literal addresses (`SocketAddr`, `"127.0.0.1:80"`, `(IpAddr, u16)`) resolve without a
//! thread hop; anything that needs the system resolver (`getaddrinfo`, a blocking call) runs
//! on the blocking pool. The trait is sealed: its one method is an implementation detail.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::task::JoinHandle;

/// Types that name one or more socket addresses (tokio's `ToSocketAddrs`).
pub trait ToSocketAddrs: sealed::Sealed {}

pub(crate) mod sealed {
    use super::*;

    /// The resolution step of `ToSocketAddrs` (not public API).
    pub trait Sealed {
        #[doc(hidden)]
        fn to_addrs(&self) -> Resolve;
    }

    /// Resolved addresses, now or from a blocking-pool lookup.
    #[doc(hidden)]
    pub enum Resolve {
        Ready(Option<io::Result<Vec<SocketAddr>>>),
        Blocking(JoinHandle<io::Result<Vec<SocketAddr>>>),
    }
}

use sealed::Resolve;

impl Future for Resolve {
    type Output = io::Result<Vec<SocketAddr>>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Resolve::Ready(r) => Poll::Ready(r.take().expect("Resolve polled after completion")),
            Resolve::Blocking(join) => match Pin::new(join).poll(cx) {
                Poll::Ready(Ok(r)) => Poll::Ready(r),
                Poll::Ready(Err(e)) => Poll::Ready(Err(io::Error::other(format!("DNS lookup task failed: {e}")))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

fn ready(addrs: Vec<SocketAddr>) -> Resolve {
    Resolve::Ready(Some(Ok(addrs)))
}

fn blocking(host: String) -> Resolve {
    Resolve::Blocking(crate::task::spawn_blocking(move || {
        std::net::ToSocketAddrs::to_socket_addrs(&host).map(|it| it.collect())
    }))
}

fn blocking_pair(host: String, port: u16) -> Resolve {
    Resolve::Blocking(crate::task::spawn_blocking(move || {
        std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port)).map(|it| it.collect())
    }))
}

macro_rules! literal {
    ($($t:ty),*) => {$(
        impl ToSocketAddrs for $t {}
        impl sealed::Sealed for $t {
            fn to_addrs(&self) -> Resolve {
                ready(std::net::ToSocketAddrs::to_socket_addrs(self).map(|it| it.collect()).unwrap_or_default())
            }
        }
    )*};
}
literal!(SocketAddr, SocketAddrV4, SocketAddrV6, (IpAddr, u16), (Ipv4Addr, u16), (Ipv6Addr, u16));

impl ToSocketAddrs for &[SocketAddr] {}
impl sealed::Sealed for &[SocketAddr] {
    fn to_addrs(&self) -> Resolve {
        ready(self.to_vec())
    }
}

impl ToSocketAddrs for str {}
impl sealed::Sealed for str {
    fn to_addrs(&self) -> Resolve {
        match self.parse::<SocketAddr>() {
            Ok(a) => ready(vec![a]),
            Err(_) => blocking(self.to_owned()),
        }
    }
}

impl ToSocketAddrs for String {}
impl sealed::Sealed for String {
    fn to_addrs(&self) -> Resolve {
        self.as_str().to_addrs()
    }
}

impl ToSocketAddrs for (&str, u16) {}
impl sealed::Sealed for (&str, u16) {
    fn to_addrs(&self) -> Resolve {
        match self.0.parse::<IpAddr>() {
            Ok(ip) => ready(vec![SocketAddr::new(ip, self.1)]),
            Err(_) => blocking_pair(self.0.to_owned(), self.1),
        }
    }
}

impl ToSocketAddrs for (String, u16) {}
impl sealed::Sealed for (String, u16) {
    fn to_addrs(&self) -> Resolve {
        (self.0.as_str(), self.1).to_addrs()
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: sealed::Sealed + ?Sized> sealed::Sealed for &T {
    fn to_addrs(&self) -> Resolve {
        (**self).to_addrs()
    }
}

/// Resolves `host` (e.g. `"example.com:80"`) to socket addresses, on the blocking pool when a
/// lookup is needed.
pub async fn lookup_host<T: ToSocketAddrs>(host: T) -> io::Result<impl Iterator<Item = SocketAddr>> {
    Ok(resolve(&host).await?.into_iter())
}

pub(crate) async fn resolve<T: ToSocketAddrs + ?Sized>(addr: &T) -> io::Result<Vec<SocketAddr>> {
    addr.to_addrs().await
}

/// Runs `f` on each resolved address until one succeeds; the last error otherwise.
pub(crate) async fn each_addr<A, T, F, Fut>(addr: A, mut f: F) -> io::Result<T>
where
    A: ToSocketAddrs,
    F: FnMut(SocketAddr) -> Fut,
    Fut: Future<Output = io::Result<T>>,
{
    let addrs = resolve(&addr).await?;
    let mut last = None;
    for a in addrs {
        match f(a).await {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "could not resolve to any address")))
}
