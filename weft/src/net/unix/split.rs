//! Split halves of a `UnixStream`: borrowed (`split`, free) and owned (`into_split`, one
//! `Arc`), with `ReuniteError`. All of it is the `net/split.rs` expansion shared with
//! `TcpStream`'s halves.

use super::{SocketAddr, UnixStream};

crate::net::split::stream_halves!(UnixStream, SocketAddr);
