//! `Take`: a reader adapter that reports EOF after a byte limit.
//!
//! Reads go through a sub-`ReadBuf` no longer than the remaining limit, so the inner reader
//! can never hand back more than allowed; the bytes it filled are then adopted by the caller's
//! buffer. As an `AsyncBufRead` it exposes at most `limit` bytes of the inner buffer.

use super::read_futures::assert_same_buffer;
use super::{AsyncBufRead, AsyncRead, ReadBuf};
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// Reader adapter limiting the bytes read, from
    /// [`AsyncReadExt::take`](super::AsyncReadExt::take).
    #[derive(Debug)]
    #[must_use = "readers do nothing unless polled"]
    pub struct Take<R> {
        #[pin]
        inner: R,
        limit: u64,
    }
}

pub(crate) fn take<R: AsyncRead>(inner: R, limit: u64) -> Take<R> {
    Take { inner, limit }
}

impl<R: AsyncRead> Take<R> {
    /// Bytes that can still be read before this reader reports EOF.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Sets the number of bytes that can still be read (read so far does not count).
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit
    }

    inner_accessors!(R, "reader", get_mut: "Reading from it directly does not count to the limit.", into_inner: "");
}

impl<R: AsyncRead> AsyncRead for Take<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let me = self.project();
        if *me.limit == 0 {
            return Poll::Ready(Ok(()));
        }
        let max = usize::try_from(*me.limit).unwrap_or(usize::MAX);
        let n = {
            let mut sub = buf.take(max);
            let start = sub.filled().as_ptr();
            ready!(me.inner.poll_read(cx, &mut sub))?;
            assert_same_buffer(start, &sub);
            sub.filled().len()
        };
        // SAFETY: the inner reader filled, hence initialised, the first `n` bytes of the
        // sub-buffer, which is a prefix of `buf`'s unfilled region (checked above).
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        *me.limit -= n as u64;
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncBufRead> AsyncBufRead for Take<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.project();
        if *me.limit == 0 {
            return Poll::Ready(Ok(&[]));
        }
        let available = ready!(me.inner.poll_fill_buf(cx))?;
        let n = usize::try_from(*me.limit).unwrap_or(usize::MAX).min(available.len());
        Poll::Ready(Ok(&available[..n]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.project();
        let amt = (amt as u64).min(*me.limit);
        *me.limit -= amt;
        me.inner.consume(amt as usize);
    }
}
