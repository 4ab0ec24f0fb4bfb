//! `ChildStdin`, `ChildStdout`, `ChildStderr`: the parent's ends of a child's pipes, set
//! non-blocking and registered with the I/O driver (the same `Registration` sockets use).
//!
//! `from_std` wraps std's ends of a child spawned by `std::process::Command`;
//! `into_owned_fd` deregisters and gives the fd back in blocking mode (what a program the fd
//! is handed to expects, as tokio does).

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
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
            /// Wraps std's end of a child's pipe: sets it non-blocking and registers it with
            /// the current runtime's I/O driver (panics outside a runtime with I/O enabled).
            ///
            /// # Errors
            ///
            /// Setting non-blocking mode or registering with the driver failed.
            #[track_caller]
            pub fn from_std(std: std::process::$std) -> io::Result<$name> {
                let rx = mio::unix::pipe::Receiver::from(std);
                rx.set_nonblocking(true)?;
                Ok($name { io: PollEvented::new(rx)? })
            }

            /// Deregisters the pipe from the I/O driver and returns its fd, switched back to
            /// blocking mode.
            pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
                let rx = self.io.into_inner()?;
                rx.set_nonblocking(false)?;
                Ok(owned_fd(rx))
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

        impl AsFd for $name {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.io.get_ref().as_fd()
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
///
/// weft differs from tokio here: tokio's `shutdown` leaves the pipe open (the child sees end
/// of input only once the `ChildStdin` is dropped). After weft's `shutdown` there is no fd
/// left: `as_raw_fd` returns -1, `as_fd` panics and `into_owned_fd` fails with `BrokenPipe`.
pub struct ChildStdin {
    io: Option<PollEvented<mio::unix::pipe::Sender>>,
}

impl ChildStdin {
    /// Wraps std's end of a child's stdin pipe: sets it non-blocking and registers it with the
    /// current runtime's I/O driver (panics outside a runtime with I/O enabled).
    ///
    /// # Errors
    ///
    /// Setting non-blocking mode or registering with the driver failed.
    #[track_caller]
    pub fn from_std(std: std::process::ChildStdin) -> io::Result<ChildStdin> {
        let tx = mio::unix::pipe::Sender::from(std);
        tx.set_nonblocking(true)?;
        Ok(ChildStdin { io: Some(PollEvented::new(tx)?) })
    }

    /// Deregisters the pipe from the I/O driver and returns its fd, switched back to blocking
    /// mode. Fails with `BrokenPipe` after `shutdown` (which closed the pipe).
    pub fn into_owned_fd(mut self) -> io::Result<OwnedFd> {
        let Some(io) = self.io.take() else { return Err(closed_by_shutdown()) };
        let tx = io.into_inner()?;
        tx.set_nonblocking(false)?;
        Ok(owned_fd(tx))
    }
}

/// What a `ChildStdin` reports once `shutdown` has closed its pipe.
fn closed_by_shutdown() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the child's stdin was closed by `shutdown`")
}

impl AsyncWrite for ChildStdin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let Some(io) = &self.io else { return Poll::Ready(Err(closed_by_shutdown())) };
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
        f.debug_struct("ChildStdin").field("fd", &self.as_raw_fd()).finish()
    }
}

impl std::os::fd::AsRawFd for ChildStdin {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.as_ref().map(|io| io.get_ref().as_raw_fd()).unwrap_or(-1)
    }
}

/// Panics after `shutdown`, which closed the pipe: a `BorrowedFd` cannot be -1 (see
/// [`ChildStdin`]).
impl AsFd for ChildStdin {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match &self.io {
            Some(io) => io.get_ref().as_fd(),
            None => panic!("ChildStdin::as_fd after `shutdown`: the pipe is closed"),
        }
    }
}

/// The pipe end's descriptor, owned. Through `IntoRawFd` rather than mio's `From<_> for OwnedFd`,
/// which mio 1.0 (weft's minimum) does not have.
fn owned_fd(pipe: impl std::os::fd::IntoRawFd) -> OwnedFd {
    // SAFETY: `into_raw_fd` gives up the pipe end's open descriptor, which nothing else owns or
    // closes from here on: `OwnedFd` becomes its only owner.
    unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(pipe.into_raw_fd()) }
}
