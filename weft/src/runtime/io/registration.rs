//! `Registration` (a socket's link to the I/O driver) and `PollEvented<E>` (a mio source
//! plus its registration): the building blocks of every `weft::net` type.
//!
//! The pattern every I/O operation follows: wait until the cached readiness says the
//! direction is ready (`poll_ready`), try the non-blocking syscall, and on `WouldBlock` clear
//! the readiness *for the tick observed* (`ScheduledIo::clear_readiness`) and wait again.
//! Register once, edge-triggered; never re-arm.

use std::io::{self, Read, Write};
use std::task::{ready, Context, Poll};

use super::scheduled_io::{Direction, ReadyEvent, ScheduledIo};
use super::shutdown_error;
use crate::io::{Interest, ReadBuf, Ready};
use crate::loom::sync::Arc;
use crate::runtime::{context, scheduler};

/// A source's registration with the current runtime's I/O driver.
pub(crate) struct Registration {
    handle: scheduler::Handle,
    shared: Arc<ScheduledIo>,
}

#[track_caller]
fn io_handle(handle: &scheduler::Handle) -> &super::Handle {
    match handle.driver().io() {
        Some(io) => io,
        // Starts with tokio's exact text (tokio's tests match it), then says how in weft.
        None => panic!(
            "A Tokio 1.x context was found, but IO is disabled. Call `enable_io` on the runtime \
             builder to enable IO. (weft: `Builder::enable_io()` or `enable_all()`; \
             `#[weft::main]` enables it)"
        ),
    }
}

impl Registration {
    /// Registers `source` with the current runtime. Panics outside a runtime or when I/O is
    /// disabled, saying how to fix it.
    #[track_caller]
    pub(crate) fn new(source: &mut impl mio::event::Source) -> io::Result<Registration> {
        Registration::with_interest(source, Interest::READABLE.add(Interest::WRITABLE))
    }

    /// As [`new`](Registration::new); `interest` decides only whether the kernel is asked for
    /// urgent-data events (`Interest::PRIORITY`): reads and writes are always registered.
    #[track_caller]
    pub(crate) fn with_interest(source: &mut impl mio::event::Source, interest: Interest) -> io::Result<Registration> {
        let handle = context::current_or_panic("creating a weft I/O resource");
        let shared = io_handle(&handle).add_source(source, interest.wants_priority())?;
        Ok(Registration { handle, shared })
    }

    /// Deregisters `source` (call before the fd closes).
    pub(crate) fn deregister(&self, source: &mut impl mio::event::Source) -> io::Result<()> {
        io_handle(&self.handle).deregister_source(&self.shared, source)
    }

    /// Waits (coop-aware) until `dir` is ready.
    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>, dir: Direction) -> Poll<io::Result<ReadyEvent>> {
        let coop = ready!(crate::task::coop::poll_proceed(cx));
        let ev = ready!(self.shared.poll_readiness(cx, dir));
        if ev.is_shutdown {
            return Poll::Ready(Err(shutdown_error()));
        }
        coop.made_progress();
        Poll::Ready(Ok(ev))
    }

    /// See `ScheduledIo::assume_ready`.
    pub(crate) fn assume_ready(&self, ready: usize) {
        self.shared.assume_ready(ready);
    }

    pub(crate) fn clear_readiness(&self, ev: ReadyEvent) {
        self.shared.clear_readiness(ev);
    }

    /// Waits for `dir`, runs `f`, and retries after clearing readiness on `WouldBlock`.
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        dir: Direction,
        mut f: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        loop {
            let ev = ready!(self.poll_ready(cx, dir))?;
            match f() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.clear_readiness(ev),
                res => return Poll::Ready(res),
            }
        }
    }

    /// Runs `f` once if `interest` is ready now; `WouldBlock` otherwise (clearing readiness).
    /// After the runtime shut down, readiness already observed is still used, as tokio's:
    /// the socket outlives its driver, so data already received can be read; the waits
    /// (`readiness`, `poll_ready`) report the shutdown.
    pub(crate) fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        let ev = self.shared.ready_now(interest.mask());
        if ev.ready.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let res = f();
        if matches!(&res, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
            self.clear_readiness(ev);
        }
        res
    }

    /// Waits until any bit of `interest` is ready (the `readable()`/`writable()`/`ready()`
    /// futures; any number may wait at once). Spends no coop budget, as tokio's: a task that
    /// finds the resource ready polls it again at once (`writable()` then `try_write` in a
    /// loop stays ready until a `WouldBlock`); the budget is spent by the I/O itself
    /// (`async_io`, `poll_io`).
    pub(crate) async fn readiness(&self, interest: Interest) -> io::Result<ReadyEvent> {
        struct Wait<'a> {
            shared: &'a ScheduledIo,
            mask: usize,
            id: u64,
        }
        impl Drop for Wait<'_> {
            fn drop(&mut self) {
                self.shared.remove_waiter(&mut self.id);
            }
        }
        let mut wait = Wait { shared: &self.shared, mask: interest.mask(), id: 0 };
        let ev = std::future::poll_fn(|cx| wait.shared.poll_waiter(cx, wait.mask, &mut wait.id)).await;
        if ev.is_shutdown {
            return Err(shutdown_error());
        }
        Ok(ev)
    }

    /// Waits until `interest` is ready and returns what is.
    pub(crate) async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        Ok(self.readiness(interest).await?.ready)
    }

    /// `readable()`/`writable()`-style wait, then `f`, retrying on `WouldBlock`. Each attempt
    /// takes a unit of coop budget (yielding when it is spent) and keeps it only if `f` did
    /// not block, so a loop of always-ready sends or receives lets other tasks run.
    pub(crate) async fn async_io<R>(&self, interest: Interest, mut f: impl FnMut() -> io::Result<R>) -> io::Result<R> {
        loop {
            let ev = self.readiness(interest).await?;
            let coop = std::future::poll_fn(crate::task::coop::poll_proceed).await;
            match f() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.clear_readiness(ev),
                res => {
                    coop.made_progress();
                    return res;
                }
            }
        }
    }
}

/// A mio source registered with the driver; deregistered (before the fd closes) on drop.
pub(crate) struct PollEvented<E: mio::event::Source> {
    io: Option<E>,
    registration: Registration,
}

impl<E: mio::event::Source> PollEvented<E> {
    #[track_caller]
    pub(crate) fn new(mut io: E) -> io::Result<PollEvented<E>> {
        let registration = Registration::new(&mut io)?;
        Ok(PollEvented { io: Some(io), registration })
    }

    pub(crate) fn registration(&self) -> &Registration {
        &self.registration
    }

    pub(crate) fn get_ref(&self) -> &E {
        self.io.as_ref().expect("PollEvented used after into_inner")
    }

    /// Deregisters and returns the source (its fd stays open).
    pub(crate) fn into_inner(mut self) -> io::Result<E> {
        let mut io = self.io.take().expect("PollEvented used after into_inner");
        self.registration.deregister(&mut io)?;
        Ok(io)
    }
}

impl<E: mio::event::Source> PollEvented<E>
where
    for<'a> &'a E: Read + Write,
{
    /// Reads into the unfilled part of `buf` without zero-filling it. Stream sockets and pipes
    /// only (every caller): a read that returns less than asked drained the socket, so the
    /// readiness it observed is cleared and the next read waits for the next edge instead of
    /// paying a `recv` that would fail with `EAGAIN` (one syscall per request in an HTTP
    /// server; tokio does the same). A newer edge is never erased: clearing is per tick. It
    /// halves the `recvfrom` calls per hyper request; server CPU per request stays within the
    /// noise (docs/notes/performance-figures.md, "Socket reads").
    pub(crate) fn poll_read(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let io = self.get_ref();
        loop {
            let ev = ready!(self.registration.poll_ready(cx, Direction::Read))?;
            let want = buf.remaining();
            // SAFETY: `ReadBuf::unfilled_mut` requires that no initialized byte is
            // de-initialized through the slice; a socket read only writes bytes into it.
            let unfilled = unsafe { buf.unfilled_mut() };
            // SAFETY: `MaybeUninit<u8>` and `u8` have the same layout, and `read` only writes
            // into the slice (a socket read never reads its buffer); we then mark exactly the
            // `n` bytes it reported as initialized.
            let slice = unsafe { &mut *(unfilled as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
            let mut r: &E = io;
            match r.read(slice) {
                Ok(n) => {
                    if n > 0 && n < want {
                        self.registration.clear_readiness(ev);
                    }
                    // SAFETY: the read initialized the first `n` bytes of the unfilled region.
                    unsafe { buf.assume_init(n) };
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.registration.clear_readiness(ev),
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    pub(crate) fn poll_write(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let io = self.get_ref();
        self.registration.poll_io(cx, Direction::Write, || {
            let mut w: &E = io;
            w.write(data)
        })
    }

    pub(crate) fn poll_write_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let io = self.get_ref();
        self.registration.poll_io(cx, Direction::Write, || {
            let mut w: &E = io;
            w.write_vectored(bufs)
        })
    }
}

impl<E: mio::event::Source> Drop for PollEvented<E> {
    fn drop(&mut self) {
        if let Some(mut io) = self.io.take() {
            // Deregister first, then close the fd (dropping `io`): see the driver's module doc.
            let _ = self.registration.deregister(&mut io);
            drop(io);
        }
    }
}
