//! TCP, UDP and Unix-domain sockets on weft's I/O driver, with tokio's
//! names and methods.
//!
//! Every socket is a `PollEvented<mio::net::…>` (see `runtime/io/registration.rs`): it is
//! registered once with the runtime's driver when created, every operation is "wait for
//! readiness, try the non-blocking syscall, clear readiness by tick on `WouldBlock`", and
//! dropping it deregisters from epoll before the fd closes. Creating a socket needs a runtime
//! with I/O enabled; outside one it panics with a message saying how to enter one.
//!
//! Name resolution (`lookup_host`, and every `impl ToSocketAddrs` argument that is a host
//! name) runs the system resolver on the blocking pool; literal addresses resolve inline.

mod addr;
pub mod tcp;
mod udp;
pub mod unix;

pub use addr::{lookup_host, ToSocketAddrs};
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};
