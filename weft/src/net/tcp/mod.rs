//! TCP: `TcpListener`, `TcpStream` and its split halves.

mod listener;
mod socket;
mod split;
mod stream;

pub use listener::TcpListener;
pub use socket::TcpSocket;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::TcpStream;
