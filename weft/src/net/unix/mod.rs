//! Unix-domain sockets and pipes (tokio's `net::unix` and the `Unix*` types of `net`), on the
//! I/O driver. A file per type:
//!
//! - `listener.rs`: [`UnixListener`], accepting streams (by path, or by `SocketAddr` for an
//!   abstract name on Linux).
//! - `stream.rs`: [`UnixStream`] (a byte stream with tokio's and futures-io's
//!   `AsyncRead`/`AsyncWrite`).
//! - `split.rs`: its borrowed ([`ReadHalf`]/[`WriteHalf`]) and owned
//!   ([`OwnedReadHalf`]/[`OwnedWriteHalf`], [`ReuniteError`]) halves, the expansion of
//!   `net/split.rs` shared with TCP.
//! - `datagram.rs`: [`UnixDatagram`].
//! - `socket.rs`: `UnixSocket` (re-exported as `net::UnixSocket`), a socket not yet
//!   listening or connected.
//! - `ucred.rs`: [`UCred`], the peer's credentials (`UnixStream::peer_cred`; Linux/Android),
//!   in the [`uid_t`]/[`gid_t`]/[`pid_t`] integer types defined here (tokio's aliases).
//! - `pipe.rs`: anonymous pipes and FIFOs ([`pipe`]).
//! - `socketaddr.rs`: [`SocketAddr`], weft's own address type as tokio's (a wrapper of
//!   std's, with `From` both ways), taken and returned by every API above.

mod datagram;
mod listener;
pub mod pipe;
pub(super) mod socket;
mod socketaddr;
mod split;
mod stream;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod ucred;

pub use datagram::UnixDatagram;
pub use listener::UnixListener;
pub use socketaddr::SocketAddr;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::UnixStream;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use ucred::UCred;

/// A user id (tokio's alias; the same integer type as `libc::uid_t` on Linux).
#[allow(non_camel_case_types)]
pub type uid_t = u32;

/// A group id (tokio's alias; the same integer type as `libc::gid_t` on Linux).
#[allow(non_camel_case_types)]
pub type gid_t = u32;

/// A process id (tokio's alias; the same integer type as `libc::pid_t` on Linux).
#[allow(non_camel_case_types)]
pub type pid_t = i32;

crate::net::socket_methods::debug_and_as_raw_fd!(UnixListener, UnixStream, UnixDatagram);
