//! `duplex`: two connected in-memory streams, each reading what the other writes, with at most
//! `max_buf_size` bytes in flight per direction (tokio's `io::duplex`).
//!
//! Each direction is a `SimplexStream` behind a mutex shared by the two ends. Dropping an end
//! closes both of its directions, as a socket's close would: the peer reads EOF once it has
//! drained what was written, and the peer's writes fail with `BrokenPipe`. A simplex's own
//! `close_write` gives the first half, `close_read` the second.
//!
//! Wakers are woken, and replaced ones dropped, only after the lock is released (the
//! `simplex` module's invariant): a waker that polls the peer at once, or that owns the peer
//! and drops it, would otherwise take the lock its caller holds. Reads and writes spend weft's
//! coop budget.

use crate::loom::sync::{Arc, Mutex, MutexGuard};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::coop_io::budgeted;
use super::simplex::Deferred;
use super::{AsyncRead, AsyncWrite, ReadBuf, SimplexStream};

/// One end of a [`duplex`] pair.
#[derive(Debug)]
pub struct DuplexStream {
    read: Arc<Mutex<SimplexStream>>,
    write: Arc<Mutex<SimplexStream>>,
}

/// Two connected streams: bytes written to one are read from the other, at most
/// `max_buf_size` bytes buffered in each direction (writes wait for reads beyond that).
/// Panics if `max_buf_size` is 0 (as tokio's).
#[track_caller]
pub fn duplex(max_buf_size: usize) -> (DuplexStream, DuplexStream) {
    let one = Arc::new(Mutex::new(SimplexStream::new_unsplit(max_buf_size)));
    let two = Arc::new(Mutex::new(SimplexStream::new_unsplit(max_buf_size)));
    (DuplexStream { read: one.clone(), write: two.clone() }, DuplexStream { read: two, write: one })
}

/// A pipe's lock; a panic while it was held cannot leave the byte queue half-updated (every
/// update is one `VecDeque` call), so a poisoned lock is taken as it is.
fn lock(pipe: &Mutex<SimplexStream>) -> MutexGuard<'_, SimplexStream> {
    pipe.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl AsyncRead for DuplexStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        budgeted(cx, |cx| {
            let mut later = Deferred::default();
            // The guard is a temporary of this statement: released before `later` acts.
            let res = lock(&self.read).read(cx, buf, &mut later);
            drop(later);
            res
        })
    }
}

impl DuplexStream {
    fn write<'a>(&self, cx: &Context<'_>, bufs: impl IntoIterator<Item = &'a [u8]> + Clone) -> Poll<io::Result<usize>> {
        let mut later = Deferred::default();
        let res = lock(&self.write).write(cx, bufs, &mut later);
        drop(later);
        res
    }
}

impl AsyncWrite for DuplexStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        budgeted(cx, |cx| self.write(cx, [buf]))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        budgeted(cx, |cx| self.write(cx, bufs.iter().map(|b| &**b)))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut later = Deferred::default();
        lock(&self.write).close_write(&mut later);
        drop(later);
        Poll::Ready(Ok(()))
    }
}

impl Drop for DuplexStream {
    fn drop(&mut self) {
        let mut later = Deferred::default();
        lock(&self.write).close_write(&mut later);
        lock(&self.read).close_read(&mut later);
        drop(later);
    }
}
