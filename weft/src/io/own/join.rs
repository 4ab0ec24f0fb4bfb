//! `join`: the inverse of `split` for two separate values, one reader and one writer, made
//! into a single `AsyncRead + AsyncWrite` handle (for APIs that want one stream).
//!
//! No sharing or locking is needed: reads go to the reader, writes to the writer, and
//! `AsyncBufRead` is forwarded when the reader has it.

use super::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Joins `reader` and `writer` into one handle.
pub fn join<R, W>(reader: R, writer: W) -> Join<R, W>
where
    R: AsyncRead,
    W: AsyncWrite,
{
    Join { reader, writer }
}

pin_project! {
    /// A reader and a writer joined into one handle, from [`join`].
    #[derive(Debug)]
    pub struct Join<R, W> {
        #[pin]
        reader: R,
        #[pin]
        writer: W,
    }
}

impl<R: AsyncRead, W: AsyncWrite> Join<R, W> {
    /// Returns the reader and the writer.
    pub fn into_inner(self) -> (R, W) {
        (self.reader, self.writer)
    }

    /// The reader.
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// The writer.
    pub fn writer(&self) -> &W {
        &self.writer
    }

    /// The reader, mutably.
    pub fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The writer, mutably.
    pub fn writer_mut(&mut self) -> &mut W {
        &mut self.writer
    }

    /// The reader, pinned.
    pub fn reader_pin_mut(self: Pin<&mut Self>) -> Pin<&mut R> {
        self.project().reader
    }

    /// The writer, pinned.
    pub fn writer_pin_mut(self: Pin<&mut Self>) -> Pin<&mut W> {
        self.project().writer
    }
}

impl<R: AsyncRead, W> AsyncRead for Join<R, W> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.project().reader.poll_read(cx, buf)
    }
}

super::forward::forward_async_write!([R, W] Join<R, W> => writer where W: AsyncWrite);

impl<R: AsyncBufRead, W> AsyncBufRead for Join<R, W> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.project().reader.poll_fill_buf(cx)
    }
    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.project().reader.consume(amt)
    }
}
