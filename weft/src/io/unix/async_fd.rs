//! `AsyncFd<T>`: registers any `AsRawFd` object (a pipe, an eventfd, a device, a socket
//! weft does not wrap) with the I/O driver and reports its readiness, tokio's
//! `io::unix::AsyncFd` API.
//!
//! It is a thin shell over `Registration` (the same edge-triggered readiness every weft
//! socket uses): a ready guard carries the `ReadyEvent` it observed, and `clear_ready` clears
//! readiness *for that tick only*, so an edge that arrived after the caller's `WouldBlock` is
//! never lost. The fd must be non-blocking (as in tokio; a blocking fd would stall a worker),
//! and `AsyncFd` does not close it: dropping deregisters it and drops `T`, which owns it.

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::task::{ready, Context, Poll};

use mio::unix::SourceFd;

use crate::io::{Interest, Ready};
use crate::runtime::io::registration::Registration;
use crate::runtime::io::scheduled_io::{Direction, ReadyEvent};

/// An fd registered with the current runtime's I/O driver.
pub struct AsyncFd<T: AsRawFd> {
    registration: Registration,
    interest: Interest,
    /// `None` only after `into_inner` moved it out.
    inner: Option<T>,
}

/// The error of a guard's `try_io` when the operation would have blocked (readiness has been
/// cleared; wait again).
#[derive(Debug)]
pub struct TryIoError(());

impl fmt::Display for TryIoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("operation would block")
    }
}

impl std::error::Error for TryIoError {}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner` for reading and writing. Panics outside a runtime with I/O enabled.
    #[track_caller]
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        AsyncFd::with_interest(inner, Interest::READABLE.add(Interest::WRITABLE))
    }

    /// Registers `inner`; the guards report readiness only for `interest`.
    #[track_caller]
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
        let registration = AsyncFd::<T>::register_fd(inner.as_raw_fd(), interest)?;
        Ok(AsyncFd::from_parts(registration, interest, inner))
    }

    /// Registers `fd` with the current runtime's driver (`register.rs` builds on it).
    #[track_caller]
    pub(super) fn register_fd(fd: std::os::fd::RawFd, interest: Interest) -> io::Result<Registration> {
        Registration::with_interest(&mut SourceFd(&fd), interest)
    }

    pub(super) fn from_parts(registration: Registration, interest: Interest, inner: T) -> AsyncFd<T> {
        AsyncFd { registration, interest, inner: Some(inner) }
    }

    pub fn get_ref(&self) -> &T {
        self.inner.as_ref().expect("AsyncFd used after into_inner")
    }

    pub fn get_mut(&mut self) -> &mut T {
        self.inner.as_mut().expect("AsyncFd used after into_inner")
    }

    /// Deregisters and returns the inner object (the fd stays open).
    pub fn into_inner(mut self) -> T {
        let inner = self.inner.take().expect("AsyncFd used after into_inner");
        let _ = self.registration.deregister(&mut SourceFd(&inner.as_raw_fd()));
        inner
    }

    fn poll_dir(&self, cx: &mut Context<'_>, dir: Direction) -> Poll<io::Result<ReadyEvent>> {
        self.registration.poll_ready(cx, dir)
    }

    pub fn poll_read_ready<'a>(&'a self, cx: &mut Context<'_>) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_dir(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyGuard { async_fd: self, event: Some(event) }))
    }

    pub fn poll_write_ready<'a>(&'a self, cx: &mut Context<'_>) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_dir(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyGuard { async_fd: self, event: Some(event) }))
    }

    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_dir(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard { async_fd: self, event: Some(event) }))
    }

    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_dir(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard { async_fd: self, event: Some(event) }))
    }

    /// Waits until any bit of `interest` is ready.
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.registration.readiness(interest).await?;
        Ok(AsyncFdReadyGuard { async_fd: self, event: Some(event) })
    }

    pub async fn ready_mut(&mut self, interest: Interest) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let event = self.registration.readiness(interest).await?;
        Ok(AsyncFdReadyMutGuard { async_fd: self, event: Some(event) })
    }

    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::READABLE).await
    }

    pub async fn readable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::WRITABLE).await
    }

    pub async fn writable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Runs `f` once if `interest` is ready now; `WouldBlock` (and readiness cleared)
    /// otherwise.
    pub fn try_io<R>(&self, interest: Interest, f: impl FnOnce(&T) -> io::Result<R>) -> io::Result<R> {
        self.registration.try_io(interest, || f(self.get_ref()))
    }

    /// [`try_io`](Self::try_io) with `&mut T`, for I/O that needs exclusive access.
    pub fn try_io_mut<R>(&mut self, interest: Interest, f: impl FnOnce(&mut T) -> io::Result<R>) -> io::Result<R> {
        let AsyncFd { registration, inner, .. } = self;
        let inner = inner.as_mut().expect("an AsyncFd holds its inner value until into_inner");
        registration.try_io(interest, || f(inner))
    }

    /// Waits for `interest`, runs `f`, and retries while it reports `WouldBlock`.
    pub async fn async_io<R>(&self, interest: Interest, mut f: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        let inner = self.get_ref();
        self.registration.async_io(interest, || f(inner)).await
    }

    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let AsyncFd { registration, inner, .. } = self;
        let inner = inner.as_mut().expect("AsyncFd used after into_inner");
        registration.async_io(interest, || f(inner)).await
    }

    /// The interest given at registration.
    pub fn interest(&self) -> Interest {
        self.interest
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.get_ref().as_raw_fd()
    }
}

impl<T: AsRawFd> std::os::fd::AsFd for AsyncFd<T> {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        // SAFETY: the descriptor belongs to the wrapped `T`, which the `AsyncFd` owns until it
        // is dropped or `into_inner`; the borrow is tied to `&self`, so it cannot outlive it.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd").field("inner", &self.inner).finish()
    }
}

impl<T: AsRawFd> Drop for AsyncFd<T> {
    fn drop(&mut self) {
        if let Some(inner) = &self.inner {
            // Deregister before `T` (and with it the fd) is dropped.
            let _ = self.registration.deregister(&mut SourceFd(&inner.as_raw_fd()));
        }
    }
}

macro_rules! guard {
    ($name:ident, $($mut_:ident)?) => {
        impl<'a, T: AsRawFd> $name<'a, T> {
            /// What was ready when the guard was made.
            pub fn ready(&self) -> Ready {
                self.event.map(|e| e.ready).unwrap_or(Ready::EMPTY)
            }

            /// Declares the fd not ready (the caller saw `WouldBlock`): the next wait sleeps
            /// until a new edge. Only the readiness observed by this guard is cleared.
            pub fn clear_ready(&mut self) {
                if let Some(event) = self.event.take() {
                    self.async_fd.registration.clear_readiness(event);
                }
            }

            /// Clears only the bits of `ready` (readable/writable) this guard observed.
            pub fn clear_ready_matching(&mut self, ready: Ready) {
                if let Some(mut event) = self.event.take() {
                    let keep = event.ready.as_usize() & !ready.as_usize();
                    event.ready = Ready::from_usize(event.ready.as_usize() & ready.as_usize());
                    self.async_fd.registration.clear_readiness(event);
                    if keep != 0 {
                        event.ready = Ready::from_usize(keep);
                        self.event = Some(event);
                    }
                }
            }

            /// Keeps the readiness (the default when the guard is dropped).
            pub fn retain_ready(&mut self) {}

            pub fn get_ref(&self) -> &AsyncFd<T> {
                &*self.async_fd
            }

            pub fn get_inner(&self) -> &T {
                self.async_fd.get_ref()
            }

            /// Runs `f`; on `WouldBlock` clears the readiness and returns `Err(TryIoError)`.
            pub fn try_io<R>(
                &mut self,
                f: impl FnOnce(&$($mut_)? AsyncFd<T>) -> io::Result<R>,
            ) -> Result<io::Result<R>, TryIoError> {
                let res = f(&$($mut_)? *self.async_fd);
                match res {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        self.clear_ready();
                        Err(TryIoError(()))
                    }
                    other => Ok(other),
                }
            }
        }

        impl<T: AsRawFd + fmt::Debug> fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name)).field("ready", &self.ready()).finish_non_exhaustive()
            }
        }
    };
}

/// Readiness observed on an [`AsyncFd`] (shared borrow). Dropping it keeps the readiness;
/// call [`clear_ready`](Self::clear_ready) after `WouldBlock`.
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    async_fd: &'a AsyncFd<T>,
    event: Option<ReadyEvent>,
}

/// Readiness observed on an [`AsyncFd`] (exclusive borrow, for `&mut T` I/O).
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    async_fd: &'a mut AsyncFd<T>,
    event: Option<ReadyEvent>,
}

guard!(AsyncFdReadyGuard,);
guard!(AsyncFdReadyMutGuard, mut);

impl<T: AsRawFd> AsyncFdReadyMutGuard<'_, T> {
    /// The `AsyncFd` this guard borrows, exclusively.
    pub fn get_mut(&mut self) -> &mut AsyncFd<T> {
        self.async_fd
    }

    pub fn get_inner_mut(&mut self) -> &mut T {
        self.async_fd.get_mut()
    }
}
