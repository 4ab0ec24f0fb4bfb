//! Unix pipes and FIFOs (tokio's `net::unix::pipe`): a [`Sender`] and a [`Receiver`] end,
//! each a non-blocking fd registered with the I/O driver, from `pipe()`, from a named FIFO
//! opened with [`OpenOptions`], or from an fd/`File` the caller already has.
//!
//! Both ends are `mio::unix::pipe` sources in a `PollEvented`, so waiting, `try_*` and
//! readiness work exactly as for sockets. A FIFO is opened with `O_NONBLOCK`: opening the
//! write end with no reader fails with `ENXIO` instead of blocking (as in tokio), and
//! `read_write(true)` opens the read end `O_RDWR` so it never sees end-of-file between writers
//! (Linux). `from_file`/`from_owned_fd` check that the fd is a FIFO opened in a suitable mode
//! (`InvalidInput` otherwise) and switch it to non-blocking.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use crate::runtime::io::registration::PollEvented;
use crate::runtime::io::scheduled_io::Direction;

/// A new anonymous pipe: `(write end, read end)`. Needs a runtime with I/O.
#[track_caller]
pub fn pipe() -> io::Result<(Sender, Receiver)> {
    let (tx, rx) = mio::unix::pipe::new()?;
    Ok((Sender { io: PollEvented::new(tx)? }, Receiver { io: PollEvented::new(rx)? }))
}

/// Options for opening one end of a named FIFO.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    read_write: bool,
    unchecked: bool,
    custom_flags: i32,
}

impl OpenOptions {
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Opens the FIFO `O_RDWR` (Linux): a receiver then never reads end-of-file when the last
    /// writer closes, and a sender can open with no reader present.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn read_write(&mut self, value: bool) -> &mut Self {
        self.read_write = value;
        self
    }

    /// Skips the check that the path is a FIFO.
    pub fn unchecked(&mut self, value: bool) -> &mut Self {
        self.unchecked = value;
        self
    }

    /// Extra `open(2)` flags (`O_NONBLOCK` and `O_CLOEXEC` are always added).
    pub fn custom_flags(&mut self, flags: i32) -> &mut Self {
        self.custom_flags = flags;
        self
    }

    /// Opens the read end of the FIFO at `path`. Needs a runtime with I/O.
    #[track_caller]
    pub fn open_receiver<P: AsRef<Path>>(&self, path: P) -> io::Result<Receiver> {
        let file = self.open(path.as_ref(), PipeEnd::Receiver)?;
        Receiver::from_file_unchecked(file)
    }

    /// Opens the write end of the FIFO at `path`. Fails with `ENXIO` when nobody has it open
    /// for reading (unless `read_write`). Needs a runtime with I/O.
    #[track_caller]
    pub fn open_sender<P: AsRef<Path>>(&self, path: P) -> io::Result<Sender> {
        let file = self.open(path.as_ref(), PipeEnd::Sender)?;
        Sender::from_file_unchecked(file)
    }

    fn open(&self, path: &Path, end: PipeEnd) -> io::Result<File> {
        let mut options = std::fs::OpenOptions::new();
        options.read(end == PipeEnd::Receiver || self.read_write);
        options.write(end == PipeEnd::Sender || self.read_write);
        options.custom_flags(self.custom_flags | libc::O_NONBLOCK | libc::O_CLOEXEC);
        let file = options.open(path)?;
        if !self.unchecked && !is_fifo(&file)? {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a pipe"));
        }
        Ok(file)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PipeEnd {
    Sender,
    Receiver,
}

fn is_fifo(file: &File) -> io::Result<bool> {
    Ok(file.metadata()?.file_type().is_fifo())
}

/// Checks that `fd` is a FIFO whose access mode allows `end`, then makes it non-blocking.
fn check_and_set_nonblocking(fd: BorrowedFd<'_>, end: PipeEnd) -> io::Result<()> {
    let file = std::mem::ManuallyDrop::new(
        // SAFETY: `fd` is borrowed and open for this call; the `File` is never dropped
        // (`ManuallyDrop`), so the fd is not closed here.
        unsafe { File::from_raw_fd(fd.as_raw_fd()) },
    );
    if !is_fifo(&file)? {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a pipe"));
    }
    // SAFETY: F_GETFL on an open fd reads its status flags and touches no memory.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let mode = flags & libc::O_ACCMODE;
    let ok = match end {
        PipeEnd::Receiver => mode == libc::O_RDONLY || mode == libc::O_RDWR,
        PipeEnd::Sender => mode == libc::O_WRONLY || mode == libc::O_RDWR,
    };
    if !ok {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not in a suitable access mode"));
    }
    set_nonblocking(fd.as_raw_fd(), true)
}

fn set_nonblocking(fd: RawFd, nonblocking: bool) -> io::Result<()> {
    // SAFETY: F_GETFL/F_SETFL on an fd the caller owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let new = if nonblocking { flags | libc::O_NONBLOCK } else { flags & !libc::O_NONBLOCK };
        if new != flags && libc::fcntl(fd, libc::F_SETFL, new) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

macro_rules! pipe_end {
    ($name:ident, $mio:ty, $end:expr, $dir:expr, $interest:expr) => {
        impl $name {
            /// Wraps an open FIFO end after checking its type and access mode (`InvalidInput`
            /// otherwise); switches it to non-blocking. Needs a runtime with I/O.
            #[track_caller]
            pub fn from_file(file: File) -> io::Result<$name> {
                $name::from_owned_fd(file.into())
            }

            /// As [`from_file`](Self::from_file), from an owned fd.
            #[track_caller]
            pub fn from_owned_fd(fd: OwnedFd) -> io::Result<$name> {
                check_and_set_nonblocking(fd.as_fd(), $end)?;
                $name::from_owned_fd_unchecked(fd)
            }

            /// Wraps `file` without any check; it must already be non-blocking.
            #[track_caller]
            pub fn from_file_unchecked(file: File) -> io::Result<$name> {
                $name::from_owned_fd_unchecked(file.into())
            }

            /// Wraps `fd` without any check; it must already be non-blocking.
            #[track_caller]
            pub fn from_owned_fd_unchecked(fd: OwnedFd) -> io::Result<$name> {
                // SAFETY: `into_raw_fd` hands over sole ownership of an open fd.
                let end = unsafe { <$mio>::from_raw_fd(fd.into_raw_fd()) };
                Ok($name { io: PollEvented::new(end)? })
            }

            /// Waits until any of `interest` is ready.
            pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
                self.io.registration().ready(interest).await
            }

            /// Runs `f` (a non-blocking operation on the fd) if this end is ready; clears the
            /// readiness when it reports `WouldBlock`.
            pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
                self.io.registration().try_io($interest, f)
            }

            /// Deregisters and returns the fd, switched back to blocking mode.
            pub fn into_blocking_fd(self) -> io::Result<OwnedFd> {
                let fd = self.into_nonblocking_fd()?;
                set_nonblocking(fd.as_raw_fd(), false)?;
                Ok(fd)
            }

            /// Deregisters and returns the fd, still non-blocking.
            pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
                let end = self.io.into_inner()?;
                // SAFETY: `into_raw_fd` hands over sole ownership of the open fd.
                Ok(unsafe { OwnedFd::from_raw_fd(end.into_raw_fd()) })
            }

            fn poll_ready_dir(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.io.registration().poll_ready(cx, $dir).map_ok(drop)
            }
        }

        impl AsRawFd for $name {
            fn as_raw_fd(&self) -> RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }

        impl AsFd for $name {
            fn as_fd(&self) -> BorrowedFd<'_> {
                // SAFETY: the fd is owned by this pipe end and outlives the borrow of `self`.
                unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("fd", &self.as_raw_fd()).finish()
            }
        }
    };
}

/// The write end of a pipe or FIFO.
pub struct Sender {
    io: PollEvented<mio::unix::pipe::Sender>,
}

/// The read end of a pipe or FIFO.
pub struct Receiver {
    io: PollEvented<mio::unix::pipe::Receiver>,
}

pipe_end!(Sender, mio::unix::pipe::Sender, PipeEnd::Sender, Direction::Write, Interest::WRITABLE);
pipe_end!(Receiver, mio::unix::pipe::Receiver, PipeEnd::Receiver, Direction::Read, Interest::READABLE);

impl Sender {
    /// Waits until the pipe can take a write.
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_ready_dir(cx)
    }

    /// Writes what fits now; `WouldBlock` if nothing does.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_io(|| self.io.get_ref().write(buf))
    }

    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.try_io(|| self.io.get_ref().write_vectored(bufs))
    }
}

impl Receiver {
    /// Waits until the pipe has data (or its writers are gone).
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_ready_dir(cx)
    }

    /// Reads what is available now; `WouldBlock` if nothing is.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_io(|| self.io.get_ref().read(buf))
    }

    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.try_io(|| self.io.get_ref().read_vectored(bufs))
    }

    /// Reads what is available now into `buf`'s spare capacity (advancing it).
    pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.try_io(|| crate::net::read_into_buf(self.io.get_ref(), buf))
    }
}

impl AsyncRead for Receiver {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &*self;
        let n = ready!(this
            .io
            .registration()
            .poll_io(cx, Direction::Read, || { this.io.get_ref().read(buf.initialize_unfilled()) }))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Sender {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = &*self;
        this.io.registration().poll_io(cx, Direction::Write, || this.io.get_ref().write(data))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &*self;
        this.io.registration().poll_io(cx, Direction::Write, || this.io.get_ref().write_vectored(bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
