//! `Lines`: reads a buffered reader line by line.
//!
//! The partial line lives inside `Lines` itself (not in a per-call future), so dropping a
//! `next_line` future loses nothing: the next call resumes the same line. That is why
//! `next_line` is cancel safe while `read_line` is not. Bytes are validated as UTF-8 only once
//! a whole line is in hand.

use super::buf_read_futures::poll_read_until;
use super::read_futures::invalid_utf8;
use super::AsyncBufRead;
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// Lines of an [`AsyncBufRead`], from [`AsyncBufReadExt::lines`](super::AsyncBufReadExt::lines).
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct Lines<R> {
        #[pin]
        reader: R,
        buf: Vec<u8>,
        read: usize,
    }
}

pub(crate) fn lines<R: AsyncBufRead>(reader: R) -> Lines<R> {
    Lines { reader, buf: Vec::new(), read: 0 }
}

impl<R: AsyncBufRead> Lines<R> {
    /// Returns the next line without its `\n` or `\r\n`, or `None` at EOF.
    ///
    /// A final line without a newline is still returned. Fails with `ErrorKind::InvalidData`
    /// if a line is not UTF-8.
    ///
    /// Cancel safe: a partially read line is kept and completed by the next call.
    pub async fn next_line(&mut self) -> io::Result<Option<String>>
    where
        R: Unpin,
    {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next_line(cx)).await
    }

    /// Polls for the next line; see [`next_line`](Self::next_line).
    pub fn poll_next_line(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<Option<String>>> {
        let me = self.project();
        ready!(poll_read_until(me.reader, cx, b'\n', me.buf, me.read))?;
        if me.buf.is_empty() {
            return Poll::Ready(Ok(None));
        }
        let mut line = std::mem::take(me.buf);
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        Poll::Ready(String::from_utf8(line).map(Some).map_err(|_| invalid_utf8()))
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The underlying reader, mutably. Reading from it directly may lose or split lines.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// Returns the underlying reader; a partially read line is discarded.
    pub fn into_inner(self) -> R {
        self.reader
    }
}
