//! `BufWriter`: adds an in-memory write buffer to any `AsyncWrite`.
//!
//! Small writes are gathered and sent in one larger write; a write at least as large as the
//! buffer goes straight to the inner writer (after what is buffered). Data is written out on
//! `flush`, on `shutdown`, when a write would overflow the buffer, and before any seek; a
//! dropped `BufWriter` does *not* flush (there is no async drop), so callers must flush or
//! shut down. Partial progress of an interrupted flush is remembered in `written`, so nothing
//! is sent twice.

use super::write_futures::write_zero;
use super::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use pin_project_lite::pin_project;
use std::fmt;
use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

#[derive(Debug, Clone, Copy)]
enum SeekState {
    Init,
    Start(SeekFrom),
    Pending,
}

pin_project! {
    /// Buffered writer; see the module documentation.
    pub struct BufWriter<W> {
        #[pin]
        inner: W,
        buf: Vec<u8>,
        cap: usize,
        written: usize,
        seek_state: SeekState,
    }
}

impl<W: AsyncWrite> BufWriter<W> {
    /// Wraps `inner` with a default-sized (8 KiB) buffer.
    pub fn new(inner: W) -> Self {
        Self::with_capacity(super::buf_reader::DEFAULT_BUF_SIZE, inner)
    }

    /// Wraps `inner` with a buffer of `cap` bytes.
    pub fn with_capacity(cap: usize, inner: W) -> Self {
        Self::from_parts(inner, Vec::with_capacity(cap), cap, 0)
    }

    inner_accessors!(
        W,
        "writer",
        get_mut: "Writing to it directly bypasses (and reorders against) buffered data.",
        into_inner: "Buffered data that was not flushed is lost."
    );

    /// The buffered bytes not yet written to the inner writer.
    pub fn buffer(&self) -> &[u8] {
        &self.buf[self.written..]
    }
}

impl<W> BufWriter<W> {
    pub(crate) fn from_parts(inner: W, buf: Vec<u8>, cap: usize, written: usize) -> Self {
        BufWriter { inner, buf, cap, written, seek_state: SeekState::Init }
    }

    pub(crate) fn into_parts(self) -> (W, Vec<u8>, usize, usize) {
        (self.inner, self.buf, self.cap, self.written)
    }
}

impl<W: AsyncWrite> BufWriter<W> {
    /// Writes the whole buffer to the inner writer (without flushing the inner writer).
    fn flush_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut me = self.project();
        let mut ret = Ok(());
        while *me.written < me.buf.len() {
            match ready!(me.inner.as_mut().poll_write(cx, &me.buf[*me.written..])) {
                Ok(0) => {
                    ret = Err(write_zero());
                    break;
                }
                Ok(n) => *me.written += n,
                Err(e) => {
                    ret = Err(e);
                    break;
                }
            }
        }
        me.buf.drain(..*me.written);
        *me.written = 0;
        Poll::Ready(ret)
    }
}

impl<W: AsyncWrite> AsyncWrite for BufWriter<W> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.buf.len() + buf.len() > self.cap {
            ready!(self.as_mut().flush_buf(cx))?;
        }
        let me = self.project();
        if buf.len() >= *me.cap {
            me.inner.poll_write(cx, buf)
        } else {
            me.buf.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.inner.is_write_vectored() {
            let total = bufs.iter().fold(0usize, |acc, b| acc.saturating_add(b.len()));
            if self.buf.len() + total > self.cap {
                ready!(self.as_mut().flush_buf(cx))?;
            }
            let me = self.project();
            if total >= *me.cap {
                return me.inner.poll_write_vectored(cx, bufs);
            }
            for b in bufs {
                me.buf.extend_from_slice(b);
            }
            return Poll::Ready(Ok(total));
        }
        // The inner writer gains nothing from vectors: buffer as many whole or partial slices
        // as fit, and send only an oversized first slice straight through.
        let mut slices = bufs.iter().map(|b| &**b).filter(|b| !b.is_empty());
        let Some(first) = slices.next() else {
            return Poll::Ready(Ok(0));
        };
        if self.buf.len() + first.len() > self.cap {
            ready!(self.as_mut().flush_buf(cx))?;
        }
        let me = self.project();
        if first.len() >= *me.cap {
            return me.inner.poll_write(cx, first);
        }
        me.buf.extend_from_slice(first);
        let mut total = first.len();
        for b in slices {
            let n = b.len().min(*me.cap - me.buf.len());
            me.buf.extend_from_slice(&b[..n]);
            total += n;
            if n < b.len() {
                break;
            }
        }
        Poll::Ready(Ok(total))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().flush_buf(cx))?;
        self.project().inner.poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().flush_buf(cx))?;
        self.project().inner.poll_shutdown(cx)
    }
}

impl<W: AsyncWrite + AsyncSeek> AsyncSeek for BufWriter<W> {
    /// Records the seek; `poll_complete` writes the buffer out first, then seeks.
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        *self.project().seek_state = SeekState::Start(position);
        Ok(())
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let pos = match self.seek_state {
            SeekState::Init => return self.project().inner.poll_complete(cx),
            SeekState::Start(pos) => Some(pos),
            SeekState::Pending => None,
        };
        if let Err(e) = ready!(self.as_mut().flush_buf(cx)) {
            *self.project().seek_state = SeekState::Init;
            return Poll::Ready(Err(e));
        }
        let mut me = self.project();
        if let Some(pos) = pos {
            if let Err(e) = me.inner.as_mut().start_seek(pos) {
                *me.seek_state = SeekState::Init;
                return Poll::Ready(Err(e));
            }
            *me.seek_state = SeekState::Pending;
        }
        let res = ready!(me.inner.poll_complete(cx));
        *me.seek_state = SeekState::Init;
        Poll::Ready(res)
    }
}

impl<W: AsyncWrite + AsyncRead> AsyncRead for BufWriter<W> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_read(cx, buf)
    }
}

impl<W: AsyncWrite + AsyncBufRead> AsyncBufRead for BufWriter<W> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.project().inner.poll_fill_buf(cx)
    }
    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.project().inner.consume(amt)
    }
}

impl<W: fmt::Debug> fmt::Debug for BufWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufWriter")
            .field("writer", &self.inner)
            .field("buffer", &format_args!("{}/{}", self.buf.len() - self.written, self.cap))
            .finish()
    }
}
