//! `split`: turns one `AsyncRead + AsyncWrite` value into a read half and a write half that
//! can be used from different tasks.
//!
//! Both halves share the stream through an `Arc<Mutex<T>>`; each poll locks it briefly, so a
//! read and a write never run at the same instant but neither blocks the other for longer
//! than one poll. Because the stream sits in the shared allocation and is only moved out by
//! `unsplit` (which requires `T: Unpin`), it may be polled pinned even when `T: !Unpin`.
//! Streams that support concurrent halves natively (TCP's `split`/`into_split`) should be
//! preferred; this is the generic fallback.

use super::{AsyncRead, AsyncWrite, ReadBuf};
use crate::loom::sync::{Arc, Mutex};
use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::PoisonError;
use std::task::{Context, Poll};

struct Shared<T> {
    stream: Mutex<T>,
}

impl<T> Shared<T> {
    fn with_pinned<O>(&self, f: impl FnOnce(Pin<&mut T>) -> O) -> O {
        // A panic in an earlier poll poisons the mutex but leaves the stream usable as far as
        // memory safety goes; carry on as tokio does rather than panicking in the other half.
        let mut guard = self.stream.lock().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: the stream lives in the `Arc` allocation and is never moved while it may have
        // been pinned: the only move out is `ReadHalf::unsplit`, which requires `T: Unpin`, and
        // otherwise it is dropped in place when the last half is dropped.
        let stream = unsafe { Pin::new_unchecked(&mut *guard) };
        f(stream)
    }
}

/// The readable half returned by [`split`].
pub struct ReadHalf<T> {
    shared: Arc<Shared<T>>,
}

/// The writable half returned by [`split`].
pub struct WriteHalf<T> {
    shared: Arc<Shared<T>>,
}

// SAFETY: through `&self` a half reaches the stream only in `WriteHalf::is_write_vectored`,
// which calls `T::is_write_vectored(&T)` under the mutex: a shared use of `T`, which `T: Sync`
// allows from any thread. `is_pair_of` compares the `Arc`s' addresses and `Debug` prints none
// of `T`. tokio asks `T: Sync` here too, so a program valid on one is valid on the other.
unsafe impl<T: Sync> Sync for ReadHalf<T> {}
// SAFETY: through `&self` a `WriteHalf` reaches the stream only in `is_write_vectored`, which
// calls `T::is_write_vectored(&T)` under the mutex: a shared use of `T`, which `T: Sync` allows
// from any thread; `is_pair_of` and `Debug` touch no `T`.
unsafe impl<T: Sync> Sync for WriteHalf<T> {}

/// Splits `stream` into a read half and a write half; see the module documentation.
pub fn split<T>(stream: T) -> (ReadHalf<T>, WriteHalf<T>)
where
    T: AsyncRead + AsyncWrite,
{
    let shared = Arc::new(Shared { stream: Mutex::new(stream) });
    (ReadHalf { shared: shared.clone() }, WriteHalf { shared })
}

impl<T> ReadHalf<T> {
    /// Whether `other` is the write half split from the same stream as this one.
    pub fn is_pair_of(&self, other: &WriteHalf<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Rejoins the two halves into the original stream.
    ///
    /// # Panics
    ///
    /// Panics if `wr` was not split from the same stream as this half.
    #[track_caller]
    pub fn unsplit(self, wr: WriteHalf<T>) -> T
    where
        T: Unpin,
    {
        assert!(self.is_pair_of(&wr), "ReadHalf::unsplit: the WriteHalf belongs to a different stream");
        drop(wr);
        let shared = Arc::into_inner(self.shared).expect("ReadHalf::unsplit: halves are the only owners");
        shared.stream.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> WriteHalf<T> {
    /// Whether `other` is the read half split from the same stream as this one.
    pub fn is_pair_of(&self, other: &ReadHalf<T>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl<T: AsyncRead> AsyncRead for ReadHalf<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.shared.with_pinned(|s| s.poll_read(cx, buf))
    }
}

impl<T: AsyncWrite> AsyncWrite for WriteHalf<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.shared.with_pinned(|s| s.poll_write(cx, buf))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.shared.with_pinned(|s| s.poll_write_vectored(cx, bufs))
    }
    fn is_write_vectored(&self) -> bool {
        self.shared.with_pinned(|s| s.is_write_vectored())
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.with_pinned(|s| s.poll_flush(cx))
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.with_pinned(|s| s.poll_shutdown(cx))
    }
}

impl<T> fmt::Debug for ReadHalf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("split::ReadHalf").finish()
    }
}

impl<T> fmt::Debug for WriteHalf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("split::WriteHalf").finish()
    }
}
