//! The generic copy loops behind weft's `io::copy` and `io::copy_buf` when weft owns its I/O
//! traits (`io/coop_io.rs` wraps them so each read spends the task's coop budget). `copy`
//! moves bytes through a `CopyBuffer` (the writer is flushed before the copy waits on a slow
//! reader); `copy_buf` writes straight out of the reader's own buffer.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::ready;

use super::buf_reader::DEFAULT_BUF_SIZE;
use super::copy_buffer::CopyBuffer;
use super::{AsyncBufRead, AsyncRead, AsyncWrite};

/// Copies `reader` into `writer` until EOF, then flushes; the number of bytes copied.
pub(crate) async fn copy<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut buf = CopyBuffer::new(DEFAULT_BUF_SIZE);
    poll_fn(|cx| buf.poll_copy(cx, Pin::new(&mut *reader), Pin::new(&mut *writer))).await
}

/// Copies a buffered `reader` into `writer` until EOF, then flushes; the number of bytes.
pub(crate) async fn copy_buf<R, W>(reader: &mut R, writer: &mut W) -> io::Result<u64>
where
    R: AsyncBufRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut amt = 0u64;
    poll_fn(|cx| loop {
        let chunk = ready!(Pin::new(&mut *reader).poll_fill_buf(cx))?;
        if chunk.is_empty() {
            ready!(Pin::new(&mut *writer).poll_flush(cx))?;
            return std::task::Poll::Ready(Ok(amt));
        }
        let n = ready!(Pin::new(&mut *writer).poll_write(cx, chunk))?;
        if n == 0 {
            return std::task::Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        Pin::new(&mut *reader).consume(n);
        amt += n as u64;
    })
    .await
}
