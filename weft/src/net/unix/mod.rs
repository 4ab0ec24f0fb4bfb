//! Unix-domain sockets and pipes (tokio's `net::unix` and the `Unix*` types of `net`), on the
//! I/O driver. A file per type:
//!
//! - `listener.rs`: [`UnixListener`], accepting streams (by path, or by `SocketAddr` for an
//!   abstract name on Linux).
//! - `stream.rs`: [`UnixStream`] (a byte stream with tokio's and futures-io's
//!   `AsyncRead`/`AsyncWrite`) and its borrowed [`ReadHalf`]/[`WriteHalf`].
//! - `datagram.rs`: [`UnixDatagram`].
//! - `socket.rs`: `UnixSocket` (re-exported as `net::UnixSocket`), a socket not yet
//!   listening or connected.
//! - `ucred.rs`: [`UCred`], the peer's credentials (`UnixStream::peer_cred`; Linux/Android).
//! - `pipe.rs`: anonymous pipes and FIFOs ([`pipe`]).
//!
//! Addresses are std's [`SocketAddr`], re-exported here as tokio does.

mod datagram;
mod listener;
pub mod pipe;
pub(super) mod socket;
mod stream;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod ucred;

pub use datagram::UnixDatagram;
pub use listener::UnixListener;
pub use std::os::unix::net::SocketAddr;
pub use stream::{ReadHalf, UnixStream, WriteHalf};
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use ucred::UCred;

crate::net::socket_methods::debug_and_as_raw_fd!(UnixListener, UnixStream, UnixDatagram);
