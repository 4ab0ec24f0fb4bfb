//! `Split`: reads a buffered reader segment by segment, cut at a delimiter byte.
//!
//! The byte-level twin of `Lines`: the partial segment is stored in the adapter so that
//! `next_segment` is cancel safe, and no UTF-8 decoding is done.

use super::buf_read_futures::poll_read_until;
use super::AsyncBufRead;
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// Segments of an [`AsyncBufRead`], from [`AsyncBufReadExt::split`](super::AsyncBufReadExt::split).
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct Split<R> {
        #[pin]
        reader: R,
        buf: Vec<u8>,
        delim: u8,
        read: usize,
    }
}

pub(crate) fn split<R: AsyncBufRead>(reader: R, delim: u8) -> Split<R> {
    Split { reader, buf: Vec::new(), delim, read: 0 }
}

impl<R: AsyncBufRead> Split<R> {
    /// Returns the next segment without its delimiter, or `None` at EOF. A final segment
    /// without a trailing delimiter is still returned.
    ///
    /// Cancel safe: a partially read segment is kept and completed by the next call.
    pub async fn next_segment(&mut self) -> io::Result<Option<Vec<u8>>>
    where
        R: Unpin,
    {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next_segment(cx)).await
    }

    /// Polls for the next segment; see [`next_segment`](Self::next_segment).
    pub fn poll_next_segment(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<Option<Vec<u8>>>> {
        let me = self.project();
        ready!(poll_read_until(me.reader, cx, *me.delim, me.buf, me.read))?;
        if me.buf.is_empty() {
            return Poll::Ready(Ok(None));
        }
        let mut segment = std::mem::take(me.buf);
        if segment.last() == Some(me.delim) {
            segment.pop();
        }
        Poll::Ready(Ok(Some(segment)))
    }
}
