//! `copy` and `copy_buf` that spend weft's cooperative budget, and the budget check the
//! in-memory pipes (`simplex`, `duplex`) make on every read and write.
//!
//! tokio's versions consult tokio's budget, which weft never sets, so a loop of
//! `io::copy(&mut &b"hello"[..], &mut vec)` in a weft task would never yield. Rather than
//! re-implementing them, weft runs those loops (tokio's, or weft's own when weft is tokio:
//! `io/own/`) over a [`Coop`] adapter around the reader: every `poll_read` / `poll_fill_buf` first takes one unit of weft's
//! budget and returns `Pending` (after waking the task) when it is spent; a poll that makes no
//! progress gives its unit back. tokio's loops stop at the first `Pending`, so they yield.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};
// The loops underneath: tokio's beside a real tokio, weft's own when weft is tokio.
#[cfg(not(feature = "tokio-traits"))]
use super::own as backend;
#[cfg(feature = "tokio-traits")]
use tokio::io as backend;

use crate::task::coop;

/// Runs `f` (one poll of the inner I/O object) under one unit of coop budget.
pub(super) fn budgeted<T>(cx: &mut Context<'_>, f: impl FnOnce(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
    let restore = ready!(coop::poll_proceed(cx));
    let res = f(cx);
    if res.is_ready() {
        restore.made_progress();
    }
    res
}

/// A reader whose polls spend weft's coop budget.
struct Coop<T>(T);

impl<T: AsyncRead + Unpin> AsyncRead for Coop<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        budgeted(cx, |cx| Pin::new(&mut self.0).poll_read(cx, buf))
    }
}

impl<T: AsyncBufRead + Unpin> AsyncBufRead for Coop<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        budgeted(cx, |cx| Pin::new(&mut this.0).poll_fill_buf(cx))
    }

    fn consume(mut self: Pin<&mut Self>, amt: usize) {
        Pin::new(&mut self.0).consume(amt)
    }
}

/// Copies everything `reader` yields into `writer` (tokio's `io::copy`); returns the byte
/// count. Each read spends one unit of the task's coop budget.
pub async fn copy<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    backend::copy(&mut Coop(reader), writer).await
}

/// Copies from a buffered reader without an intermediate buffer (tokio's `io::copy_buf`).
/// Each fill of the reader's buffer spends one unit of the task's coop budget.
pub async fn copy_buf<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncBufRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    backend::copy_buf(&mut Coop(reader), writer).await
}
