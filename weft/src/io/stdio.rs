//! `stdin()`, `stdout()`, `stderr()`: the process's standard streams as async I/O, run on
//! the blocking pool as tokio does (a terminal or pipe on fd 0–2 may be shared with other
//! processes, so it cannot safely be made non-blocking and registered with the driver).
//!
//! Each handle wraps its std stream in `Blocking`, which keeps at most one operation in
//! flight: a read hop reads up to 2 MiB (at most the caller's buffer: stdin is interactive,
//! and reading ahead would steal input another reader of fd 0 expects); a write copies the
//! caller's bytes, starts a `write_all` hop and reports them written at once, so the next
//! write, `flush` or `shutdown` waits for it and reports its error. Once the runtime has shut
//! its blocking pool, a write or flush fails at once with the runtime-shutdown error
//! (`is_rt_shutdown_err`), as tokio's do: a write reported done must have a thread to run it.

use std::future::Future;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use crate::task::JoinHandle;

const MAX_BUF: usize = 2 * 1024 * 1024;

type Hop<T> = JoinHandle<(io::Result<usize>, Vec<u8>, T)>;

enum State<T> {
    Idle(Option<(Vec<u8>, T)>),
    Busy(Hop<T>),
}

/// One std stream driven through the blocking pool.
struct Blocking<T> {
    state: State<T>,
    /// Bytes of the last read hop not yet handed out.
    unread: std::ops::Range<usize>,
    /// The hop in flight is a `flush`, started by `poll_flush`.
    flushing: bool,
}

fn failed() -> io::Error {
    io::Error::other("background task failed")
}

/// Starts a hop on the current runtime's blocking pool, or fails when shutdown has closed it.
#[track_caller]
fn hop<F, R>(f: F) -> io::Result<JoinHandle<R>>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    crate::runtime::context::current_or_panic("weft's stdin/stdout/stderr")
        .spawn_mandatory_blocking(f)
        .ok_or_else(crate::runtime::shutdown_error::shutdown_error)
}

impl<T: Send + 'static> Blocking<T> {
    fn new(inner: T) -> Blocking<T> {
        Blocking { state: State::Idle(Some((Vec::new(), inner))), unread: 0..0, flushing: false }
    }

    /// Finishes the hop in flight; returns its result.
    fn poll_done(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let State::Busy(hop) = &mut self.state else { return Poll::Ready(Ok(0)) };
        let res = ready!(Pin::new(hop).poll(cx));
        self.flushing = false;
        Poll::Ready(match res {
            Ok((res, buf, inner)) => {
                self.state = State::Idle(Some((buf, inner)));
                res
            }
            Err(_) => {
                self.state = State::Idle(None);
                Err(failed())
            }
        })
    }

    fn idle(&mut self) -> io::Result<(Vec<u8>, T)> {
        match &mut self.state {
            State::Idle(slot) => slot.take().ok_or_else(failed),
            State::Busy(_) => unreachable!("called after poll_done"),
        }
    }
}

impl<T: Read + Send + 'static> Blocking<T> {
    fn poll_read(&mut self, cx: &mut Context<'_>, dst: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            if !self.unread.is_empty() {
                let State::Idle(Some((buf, _))) = &self.state else { unreachable!("unread only when idle") };
                let n = self.unread.len().min(dst.remaining());
                dst.put_slice(&buf[self.unread.start..self.unread.start + n]);
                self.unread.start += n;
                return Poll::Ready(Ok(()));
            }
            if let State::Busy(_) = self.state {
                let n = ready!(self.poll_done(cx))?;
                if n == 0 {
                    return Poll::Ready(Ok(()));
                }
                self.unread = 0..n;
                continue;
            }
            let (mut buf, mut inner) = self.idle()?;
            let want = dst.remaining().min(MAX_BUF);
            self.state = State::Busy(hop(move || {
                buf.resize(want, 0);
                let res = loop {
                    match inner.read(&mut buf) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        other => break other,
                    }
                };
                (res, buf, inner)
            })?);
        }
    }
}

impl<T: Write + Send + 'static> Blocking<T> {
    fn poll_write(&mut self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.poll_done(cx))?;
        let (mut buf, mut inner) = self.idle()?;
        let n = data.len().min(MAX_BUF);
        buf.clear();
        buf.extend_from_slice(&data[..n]);
        // On refusal the stream goes with the closure: later calls fail too, as after a hop
        // that panicked.
        self.state = State::Busy(hop(move || {
            let res = inner.write_all(&buf).map(|()| 0);
            (res, buf, inner)
        })?);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.flushing {
                return self.poll_done(cx).map_ok(drop);
            }
            ready!(self.poll_done(cx))?;
            let (buf, mut inner) = self.idle()?;
            self.state = State::Busy(hop(move || {
                let res = inner.flush().map(|()| 0);
                (res, buf, inner)
            })?);
            self.flushing = true;
        }
    }
}

macro_rules! std_stream {
    ($(#[$doc:meta])* $name:ident, $ctor:ident, $std:ident) => {
        $(#[$doc])*
        pub struct $name(Blocking<std::io::$std>);

        #[doc = concat!("A handle to the process's ", stringify!($ctor), " (see [`", stringify!($name), "`]).")]
        pub fn $ctor() -> $name {
            $name(Blocking::new(std::io::$ctor()))
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }

        impl std::os::fd::AsRawFd for $name {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                std::os::fd::AsRawFd::as_raw_fd(&std::io::$ctor())
            }
        }

        impl std::os::fd::AsFd for $name {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                // SAFETY: the standard streams' descriptors (0, 1, 2) are open for the whole
                // life of the process, as std's own `Stdin::as_fd` assumes.
                unsafe { std::os::fd::BorrowedFd::borrow_raw(std::os::fd::AsRawFd::as_raw_fd(self)) }
            }
        }
    };
}

std_stream!(
    /// The process's standard input, read on the blocking pool. As in tokio, a read that is
    /// waiting for input keeps a pool thread busy, and a pending read may still consume input
    /// after its future is dropped; for an interactive program, read from one task only.
    Stdin, stdin, Stdin
);
std_stream!(
    /// The process's standard output, written on the blocking pool. Call `flush` before
    /// exiting to be sure the last write has reached the OS.
    Stdout, stdout, Stdout
);
std_stream!(
    /// The process's standard error, written on the blocking pool.
    Stderr, stderr, Stderr
);

impl AsyncRead for Stdin {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.get_mut().0.poll_read(cx, buf)
    }
}

macro_rules! async_write {
    ($name:ident) => {
        impl AsyncWrite for $name {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
                self.get_mut().0.poll_write(cx, data)
            }
            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }
            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.get_mut().0.poll_flush(cx)
            }
        }
    };
}
async_write!(Stdout);
async_write!(Stderr);
