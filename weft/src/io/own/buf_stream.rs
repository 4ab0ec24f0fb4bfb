//! `BufStream`: read *and* write buffering for one bidirectional stream.
//!
//! It is simply a `BufReader` around a `BufWriter` around the stream, wrapped so the type
//! reads as one thing. Reads are buffered by the outer layer, writes by the inner one; a seek
//! discards the read buffer and writes out the write buffer before moving the stream.

use super::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, BufReader, BufWriter, ReadBuf};
use pin_project_lite::pin_project;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project! {
    /// A stream buffered in both directions; see the module documentation.
    #[derive(Debug)]
    pub struct BufStream<RW> {
        #[pin]
        inner: BufReader<BufWriter<RW>>,
    }
}

impl<RW: AsyncRead + AsyncWrite> BufStream<RW> {
    /// Wraps `stream` with default-sized (8 KiB) read and write buffers.
    pub fn new(stream: RW) -> BufStream<RW> {
        BufStream { inner: BufReader::new(BufWriter::new(stream)) }
    }

    /// Wraps `stream` with buffers of the given sizes.
    pub fn with_capacity(reader_capacity: usize, writer_capacity: usize, stream: RW) -> BufStream<RW> {
        BufStream {
            inner: BufReader::with_capacity(reader_capacity, BufWriter::with_capacity(writer_capacity, stream)),
        }
    }

    /// The underlying stream.
    pub fn get_ref(&self) -> &RW {
        self.inner.get_ref().get_ref()
    }

    /// The underlying stream, mutably. Using it directly bypasses both buffers.
    pub fn get_mut(&mut self) -> &mut RW {
        self.inner.get_mut().get_mut()
    }

    /// The underlying stream, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut RW> {
        self.project().inner.get_pin_mut().get_pin_mut()
    }

    /// Returns the underlying stream; data in either buffer is lost.
    pub fn into_inner(self) -> RW {
        self.inner.into_inner().into_inner()
    }
}

impl<RW> From<BufReader<BufWriter<RW>>> for BufStream<RW> {
    fn from(inner: BufReader<BufWriter<RW>>) -> Self {
        BufStream { inner }
    }
}

impl<RW> From<BufWriter<BufReader<RW>>> for BufStream<RW> {
    /// Swaps the layers, keeping both buffers' contents.
    fn from(outer: BufWriter<BufReader<RW>>) -> Self {
        let (reader, wbuf, wcap, written) = outer.into_parts();
        let (stream, rbuf, pos, cap) = reader.into_parts();
        let writer = BufWriter::from_parts(stream, wbuf, wcap, written);
        BufStream { inner: BufReader::from_parts(writer, rbuf, pos, cap) }
    }
}

super::forward::forward_async_write!([RW] BufStream<RW> => inner where RW: AsyncRead + AsyncWrite);

impl<RW: AsyncRead + AsyncWrite> AsyncRead for BufStream<RW> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_read(cx, buf)
    }
}

impl<RW: AsyncRead + AsyncWrite> AsyncBufRead for BufStream<RW> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.project().inner.poll_fill_buf(cx)
    }
    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.project().inner.consume(amt)
    }
}

impl<RW: AsyncRead + AsyncWrite + AsyncSeek> AsyncSeek for BufStream<RW> {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        self.project().inner.start_seek(position)
    }
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        self.project().inner.poll_complete(cx)
    }
}
