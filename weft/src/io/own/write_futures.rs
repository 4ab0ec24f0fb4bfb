//! The futures `AsyncWriteExt`'s methods return.
//!
//! As with the read futures, each is a named, `Unpin` state machine over `&mut W` so that its
//! auto traits follow its fields; the types are unnameable outside the crate, like tokio's.

use super::AsyncWrite;
use bytes::Buf;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pub(crate) fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "failed to write whole buffer")
}

/// Future for [`write`](super::AsyncWriteExt::write).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Write<'a, W: ?Sized> {
    pub(crate) writer: &'a mut W,
    pub(crate) buf: &'a [u8],
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for Write<'_, W> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        Pin::new(&mut *me.writer).poll_write(cx, me.buf)
    }
}

/// Future for [`write_vectored`](super::AsyncWriteExt::write_vectored).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteVectored<'a, 'b, W: ?Sized> {
    pub(crate) writer: &'a mut W,
    pub(crate) bufs: &'a [IoSlice<'b>],
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for WriteVectored<'_, '_, W> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        Pin::new(&mut *me.writer).poll_write_vectored(cx, me.bufs)
    }
}

/// Future for [`write_all`](super::AsyncWriteExt::write_all).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteAll<'a, W: ?Sized> {
    pub(crate) writer: &'a mut W,
    pub(crate) buf: &'a [u8],
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for WriteAll<'_, W> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        while !me.buf.is_empty() {
            let n = ready!(Pin::new(&mut *me.writer).poll_write(cx, me.buf))?;
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            me.buf = &me.buf[n..];
        }
        Poll::Ready(Ok(()))
    }
}

/// Future for [`write_buf`](super::AsyncWriteExt::write_buf).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteBuf<'a, W, B> {
    pub(crate) writer: &'a mut W,
    pub(crate) buf: &'a mut B,
}

impl<W: AsyncWrite + Unpin, B: Buf> Future for WriteBuf<'_, W, B> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        if !me.buf.has_remaining() {
            return Poll::Ready(Ok(0));
        }
        let n = ready!(Pin::new(&mut *me.writer).poll_write(cx, me.buf.chunk()))?;
        me.buf.advance(n);
        Poll::Ready(Ok(n))
    }
}

/// Future for [`write_all_buf`](super::AsyncWriteExt::write_all_buf).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteAllBuf<'a, W, B> {
    pub(crate) writer: &'a mut W,
    pub(crate) buf: &'a mut B,
}

/// How many chunks a vectored `write_all_buf` hands the writer at once.
const MAX_VECTOR_ELEMENTS: usize = 64;

impl<W: AsyncWrite + Unpin, B: Buf> Future for WriteAllBuf<'_, W, B> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        while me.buf.has_remaining() {
            let n = if me.writer.is_write_vectored() {
                let mut slices = [IoSlice::new(&[]); MAX_VECTOR_ELEMENTS];
                let cnt = me.buf.chunks_vectored(&mut slices);
                ready!(Pin::new(&mut *me.writer).poll_write_vectored(cx, &slices[..cnt]))?
            } else {
                ready!(Pin::new(&mut *me.writer).poll_write(cx, me.buf.chunk()))?
            };
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            me.buf.advance(n);
        }
        Poll::Ready(Ok(()))
    }
}

/// Future for [`flush`](super::AsyncWriteExt::flush).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Flush<'a, W: ?Sized> {
    pub(crate) writer: &'a mut W,
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for Flush<'_, W> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut *self.get_mut().writer).poll_flush(cx)
    }
}

/// Future for [`shutdown`](super::AsyncWriteExt::shutdown).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Shutdown<'a, W: ?Sized> {
    pub(crate) writer: &'a mut W,
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for Shutdown<'_, W> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut *self.get_mut().writer).poll_shutdown(cx)
    }
}

/// Future for the `write_u8`…`write_f64_le` methods: writes all `N` encoded bytes.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteNum<'a, W: ?Sized, const N: usize> {
    pub(crate) writer: &'a mut W,
    pub(crate) buf: [u8; N],
    pub(crate) written: usize,
}

impl<W: AsyncWrite + Unpin + ?Sized, const N: usize> Future for WriteNum<'_, W, N> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        while me.written < N {
            let n = ready!(Pin::new(&mut *me.writer).poll_write(cx, &me.buf[me.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            me.written += n;
        }
        Poll::Ready(Ok(()))
    }
}
