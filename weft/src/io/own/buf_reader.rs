//! `BufReader`: adds an in-memory read buffer to any `AsyncRead`, making it `AsyncBufRead`.
//!
//! Small reads are served from one large read of the inner reader; a read at least as large
//! as the buffer, arriving while the buffer is empty, bypasses it so large transfers are not
//! copied twice. Seeking always discards the buffer (even if the target lies inside it); a
//! `SeekFrom::Current` offset is corrected by the bytes buffered but not yet consumed, so it
//! is relative to what the caller has read, not to where the inner reader is.

use super::read_futures::assert_same_buffer;
use super::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use pin_project_lite::pin_project;
use std::fmt;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// The buffer size `new` uses (tokio's default, 8 KiB).
pub(crate) const DEFAULT_BUF_SIZE: usize = 8 * 1024;

#[derive(Debug, Clone, Copy)]
enum SeekState {
    /// No seek in progress.
    Init,
    /// `start_seek` was called; nothing sent to the inner reader yet.
    Start(SeekFrom),
    /// A `Current` seek whose buffer correction overflowed `i64`: the inner reader is first
    /// moved back by the buffered remainder, then by the caller's offset.
    PendingOverflowed(i64),
    /// The inner reader's seek has been started.
    Pending,
}

pin_project! {
    /// Buffered reader; see the module documentation.
    pub struct BufReader<R> {
        #[pin]
        inner: R,
        buf: Box<[u8]>,
        pos: usize,
        cap: usize,
        seek_state: SeekState,
    }
}

impl<R: AsyncRead> BufReader<R> {
    /// Wraps `inner` with a default-sized (8 KiB) buffer.
    pub fn new(inner: R) -> Self {
        Self::with_capacity(DEFAULT_BUF_SIZE, inner)
    }

    /// Wraps `inner` with a buffer of `capacity` bytes.
    pub fn with_capacity(capacity: usize, inner: R) -> Self {
        Self::from_parts(inner, vec![0; capacity].into_boxed_slice(), 0, 0)
    }

    inner_accessors!(
        R,
        "reader",
        get_mut: "Reading from it directly skips buffered data.",
        into_inner: "Buffered data is lost."
    );

    /// The buffered bytes not yet consumed.
    pub fn buffer(&self) -> &[u8] {
        &self.buf[self.pos..self.cap]
    }
}

impl<R> BufReader<R> {
    pub(crate) fn from_parts(inner: R, buf: Box<[u8]>, pos: usize, cap: usize) -> Self {
        BufReader { inner, buf, pos, cap, seek_state: SeekState::Init }
    }

    pub(crate) fn into_parts(self) -> (R, Box<[u8]>, usize, usize) {
        (self.inner, self.buf, self.pos, self.cap)
    }
}

impl<R: AsyncRead> AsyncRead for BufReader<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.pos == self.cap && buf.remaining() >= self.buf.len() {
            let me = self.project();
            let res = ready!(me.inner.poll_read(cx, buf));
            *me.pos = 0;
            *me.cap = 0;
            return Poll::Ready(res);
        }
        let available = ready!(self.as_mut().poll_fill_buf(cx))?;
        let n = available.len().min(buf.remaining());
        buf.put_slice(&available[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncRead> AsyncBufRead for BufReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.project();
        if *me.pos >= *me.cap {
            let mut rb = ReadBuf::new(me.buf);
            let start = rb.filled().as_ptr();
            ready!(me.inner.poll_read(cx, &mut rb))?;
            assert_same_buffer(start, &rb);
            *me.cap = rb.filled().len();
            *me.pos = 0;
        }
        Poll::Ready(Ok(&me.buf[*me.pos..*me.cap]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.project();
        *me.pos = (*me.pos + amt).min(*me.cap);
    }
}

impl<R: AsyncRead + AsyncSeek> AsyncSeek for BufReader<R> {
    /// Records the seek; it is sent to the inner reader (and the buffer discarded) by
    /// `poll_complete`.
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        *self.project().seek_state = SeekState::Start(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let mut me = self.project();
        loop {
            match *me.seek_state {
                SeekState::Init => return me.inner.poll_complete(cx),
                SeekState::Start(pos) => {
                    let remainder = (*me.cap - *me.pos) as i64;
                    let (target, next) = match pos {
                        SeekFrom::Current(n) => match n.checked_sub(remainder) {
                            Some(offset) => (SeekFrom::Current(offset), SeekState::Pending),
                            None => (SeekFrom::Current(-remainder), SeekState::PendingOverflowed(n)),
                        },
                        other => (other, SeekState::Pending),
                    };
                    *me.pos = 0;
                    *me.cap = 0;
                    if let Err(e) = me.inner.as_mut().start_seek(target) {
                        *me.seek_state = SeekState::Init;
                        return Poll::Ready(Err(e));
                    }
                    *me.seek_state = next;
                }
                SeekState::PendingOverflowed(n) => {
                    let res = ready!(me.inner.as_mut().poll_complete(cx))
                        .and_then(|_| me.inner.as_mut().start_seek(SeekFrom::Current(n)));
                    if let Err(e) = res {
                        *me.seek_state = SeekState::Init;
                        return Poll::Ready(Err(e));
                    }
                    *me.seek_state = SeekState::Pending;
                }
                SeekState::Pending => {
                    let res = ready!(me.inner.as_mut().poll_complete(cx));
                    *me.seek_state = SeekState::Init;
                    return Poll::Ready(res);
                }
            }
        }
    }
}

super::forward::forward_async_write!([R] BufReader<R> => inner where R: AsyncRead + AsyncWrite);

impl<R: fmt::Debug> fmt::Debug for BufReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufReader")
            .field("reader", &self.inner)
            .field("buffer", &format_args!("{}/{}", self.cap - self.pos, self.buf.len()))
            .finish()
    }
}
