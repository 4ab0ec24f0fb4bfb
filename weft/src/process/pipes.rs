//! `ChildStdin`, `ChildStdout`, `ChildStderr`: the parent's ends of a child's pipes, set
//! non-blocking and registered with the I/O driver (the same `Registration` sockets use).

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::Direction;

fn read_into(
    io: &PollEvented<mio::unix::pipe::Receiver>,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    let n = ready!(io.registration().poll_io(cx, Direction::Read, || {
        let mut r = io.get_ref();
        r.read(buf.initialize_unfilled())
    }))?;
    buf.advance(n);
    Poll::Ready(Ok(()))
}

macro_rules! reader {
    ($(#[$doc:meta])* $name:ident, $std:ident) => {
        $(#[$doc])*
        pub struct $name {
            io: PollEvented<mio::unix::pipe::Receiver>,
        }

        impl $name {
            pub(crate) fn new(std: std::process::$std) -> io::Result<$name> {
                let rx = mio::unix::pipe::Receiver::from(std);
                rx.set_nonblocking(true)?;
                Ok($name { io: PollEvented::new(rx)? })
            }
        }

        impl AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
                read_into(&self.io, cx, buf)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("fd", &self.io.get_ref().as_raw_fd()).finish()
            }
        }

        impl std::os::fd::AsRawFd for $name {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }
    };
}

reader!(
    /// The child's standard output, readable without blocking a worker.
    ChildStdout,
    ChildStdout
);
reader!(
    /// The child's standard error, readable without blocking a worker.
    ChildStderr,
    ChildStderr
);

/// The child's standard input; dropping it (or `shutdown`) closes the pipe, which the child
/// sees as end of input.
pub struct ChildStdin {
    io: Option<PollEvented<mio::unix::pipe::Sender>>,
}

impl ChildStdin {
    pub(crate) fn new(std: std::process::ChildStdin) -> io::Result<ChildStdin> {
        let tx = mio::unix::pipe::Sender::from(std);
        tx.set_nonblocking(true)?;
        Ok(ChildStdin { io: Some(PollEvented::new(tx)?) })
    }
}

impl AsyncWrite for ChildStdin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let Some(io) = &self.io else { return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())) };
        io.registration().poll_io(cx, Direction::Write, || {
            let mut w = io.get_ref();
            w.write(data)
        })
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    /// Closes the pipe (the child reads end of input).
    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io = None;
        Poll::Ready(Ok(()))
    }
}

impl std::fmt::Debug for ChildStdin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::os::fd::AsRawFd;
        f.debug_struct("ChildStdin").field("fd", &self.as_raw_fd()).finish()
    }
}

impl std::os::fd::AsRawFd for ChildStdin {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.as_ref().map(|io| io.get_ref().as_raw_fd()).unwrap_or(-1)
    }
}
