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
//!
//! A folder per protocol, a file per type: `tcp/`, `udp/` and `unix/` (streams, listeners,
//! datagrams, `UnixSocket`, peer credentials and pipes); `addr.rs` resolves addresses,
//! `std_conv.rs` converts to and from std's sockets for every type at once, and
//! `socket_methods.rs` writes once, as macros, the methods and trait impls several socket
//! types share (readiness, `try_read*`/`try_write*`, datagram sends and receives,
//! `AsyncRead`/`AsyncWrite`, `Debug`), and `split.rs` the borrowed and owned halves of
//! both byte streams (`TcpStream`, `UnixStream`).

mod addr;
mod socket_methods;
mod split;
mod std_conv;
pub mod tcp;
mod udp;
pub mod unix;

pub use addr::{lookup_host, ToSocketAddrs};
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::socket::UnixSocket;
pub use unix::{UnixDatagram, UnixListener, UnixStream};

/// One non-blocking `read` into `buf`'s spare capacity, advancing `buf` by what was read
/// (the `try_read_buf` methods).
pub(crate) fn read_into_buf<R, B>(reader: R, buf: &mut B) -> std::io::Result<usize>
where
    R: std::io::Read,
    B: bytes::BufMut,
{
    let mut reader = reader;
    fill_spare_len(buf, |dst| reader.read(dst))
}

/// [`fill_spare`] for a call that returns only a byte count (`recv`, `read`): the
/// `recv_buf`/`try_recv_buf` methods.
pub(crate) fn fill_spare_len<B>(
    buf: &mut B,
    f: impl FnOnce(&mut [u8]) -> std::io::Result<usize>,
) -> std::io::Result<usize>
where
    B: bytes::BufMut,
{
    fill_spare(buf, |dst| f(dst).map(|n| (n, ()))).map(|(n, ())| n)
}

/// Runs `f` on `buf`'s spare capacity (one chunk), then advances `buf` by the count `f`
/// returns with its other result (the `recv_buf*` methods). `f` needs initialised memory, so
/// the chunk is zeroed first (cheap next to the syscall).
pub(crate) fn fill_spare<B, R>(
    buf: &mut B,
    f: impl FnOnce(&mut [u8]) -> std::io::Result<(usize, R)>,
) -> std::io::Result<(usize, R)>
where
    B: bytes::BufMut,
{
    let chunk = buf.chunk_mut();
    let len = chunk.len();
    // SAFETY: `chunk` is `len` writable bytes owned by `buf`; zeroing them first makes the
    // slice initialised, so viewing it as `&mut [u8]` is sound.
    let dst = unsafe {
        std::ptr::write_bytes(chunk.as_mut_ptr(), 0, len);
        std::slice::from_raw_parts_mut(chunk.as_mut_ptr(), len)
    };
    let (n, r) = f(dst)?;
    assert!(n <= len, "a read reported more bytes than the buffer holds");
    // SAFETY: the first `n <= len` bytes of the spare capacity were zeroed above (and then
    // written by `f`), so they are initialised.
    unsafe { buf.advance_mut(n) };
    Ok((n, r))
}
