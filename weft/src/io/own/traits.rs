//! The four poll-based I/O traits (`AsyncRead`, `AsyncWrite`, `AsyncBufRead`, `AsyncSeek`)
//! and the impls tokio ships for standard types.
//!
//! The traits are the low-level contract every transport implements; users normally call the
//! `*Ext` futures instead. The forwarding impls for `&mut T`, `Box<T>` and `Pin<P>` let
//! borrowed, boxed and pinned-boxed I/O objects be passed anywhere an owned one is, and the
//! in-memory impls (`&[u8]`, `Vec<u8>`, `std::io::Cursor`) are always ready, which is what the
//! helpers' tests and many users' tests rely on. They are gathered here because they must sit
//! beside the trait definitions (coherence) and share one forwarding macro per trait.

use super::ReadBuf;
use std::io::{self, Cursor, IoSlice, SeekFrom};
use std::ops::DerefMut;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Reads bytes from a source asynchronously.
///
/// `poll_read` either fills some of `buf`'s unfilled region and returns `Ready(Ok(()))`
/// (filling nothing, with `buf.remaining() > 0`, means end of stream), returns `Pending` after
/// arranging for `cx`'s waker to be woken when data may be available, or returns an error.
pub trait AsyncRead {
    /// Attempts to read from the source into `buf`.
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>>;
}

/// Writes bytes to a sink asynchronously.
pub trait AsyncWrite {
    /// Attempts to write bytes from `buf`, returning how many were written (`0` usually means
    /// the sink can take no more, or that `buf` was empty).
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>>;

    /// Attempts to flush buffered data to its destination.
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Initiates or continues shutting the writer down; `Ready(Ok(()))` once it is shut down.
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Like `poll_write`, from several buffers. The default writes the first non-empty one.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let first = bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| &**b);
        self.poll_write(cx, first)
    }

    /// Whether `poll_write_vectored` is more efficient than writing the buffers one by one.
    fn is_write_vectored(&self) -> bool {
        false
    }
}

/// Reads bytes asynchronously through an internal buffer.
pub trait AsyncBufRead: AsyncRead {
    /// Returns the buffered data, reading more from the source if the buffer is empty. An
    /// empty slice means end of stream.
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>>;

    /// Marks `amt` bytes of the buffer as consumed; they will not be returned again.
    fn consume(self: Pin<&mut Self>, amt: usize);
}

/// Seeks asynchronously, in two steps: `start_seek` then `poll_complete`.
pub trait AsyncSeek {
    /// Starts a seek to `position`. Returns an error if a seek is already in progress or the
    /// position is invalid. A call to `poll_complete` must follow before the seek takes effect.
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()>;

    /// Waits for the last started seek to finish, returning the new position from the start
    /// of the stream. With no seek in progress it returns the current position.
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>>;
}

macro_rules! forward_all {
    ($($ty:ty => [$($gen:tt)*]),* $(,)?) => {$(
        impl<$($gen)*> AsyncRead for $ty where T: ?Sized + AsyncRead + Unpin {
            fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut **self).poll_read(cx, buf)
            }
        }
        impl<$($gen)*> AsyncWrite for $ty where T: ?Sized + AsyncWrite + Unpin {
            fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                Pin::new(&mut **self).poll_write(cx, buf)
            }
            fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
                Pin::new(&mut **self).poll_write_vectored(cx, bufs)
            }
            fn is_write_vectored(&self) -> bool {
                (**self).is_write_vectored()
            }
            fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut **self).poll_flush(cx)
            }
            fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut **self).poll_shutdown(cx)
            }
        }
        impl<$($gen)*> AsyncBufRead for $ty where T: ?Sized + AsyncBufRead + Unpin {
            fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
                Pin::new(&mut **self.get_mut()).poll_fill_buf(cx)
            }
            fn consume(mut self: Pin<&mut Self>, amt: usize) {
                Pin::new(&mut **self).consume(amt)
            }
        }
        impl<$($gen)*> AsyncSeek for $ty where T: ?Sized + AsyncSeek + Unpin {
            fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
                Pin::new(&mut **self).start_seek(position)
            }
            fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
                Pin::new(&mut **self).poll_complete(cx)
            }
        }
    )*};
}

forward_all!(Box<T> => [T], &mut T => [T]);

impl<P> AsyncRead for Pin<P>
where
    P: DerefMut,
    P::Target: AsyncRead,
{
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.as_deref_mut().poll_read(cx, buf)
    }
}

impl<P> AsyncWrite for Pin<P>
where
    P: DerefMut,
    P::Target: AsyncWrite,
{
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.as_deref_mut().poll_write(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.as_deref_mut().poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        (**self).is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.as_deref_mut().poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.as_deref_mut().poll_shutdown(cx)
    }
}

impl<P> AsyncBufRead for Pin<P>
where
    P: DerefMut,
    P::Target: AsyncBufRead,
{
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.as_deref_mut().poll_fill_buf(cx)
    }
    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.as_deref_mut().consume(amt)
    }
}

impl<P> AsyncSeek for Pin<P>
where
    P: DerefMut,
    P::Target: AsyncSeek,
{
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        self.as_deref_mut().start_seek(position)
    }
    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        self.as_deref_mut().poll_complete(cx)
    }
}

impl AsyncRead for &[u8] {
    fn poll_read(mut self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let n = self.len().min(buf.remaining());
        let (head, tail) = self.split_at(n);
        buf.put_slice(head);
        *self = tail;
        Poll::Ready(Ok(()))
    }
}

impl AsyncBufRead for &[u8] {
    fn poll_fill_buf(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        Poll::Ready(Ok(*self.get_mut()))
    }
    fn consume(mut self: Pin<&mut Self>, amt: usize) {
        *self = &self[amt.min(self.len())..];
    }
}

impl<T: AsRef<[u8]> + Unpin> AsyncRead for Cursor<T> {
    fn poll_read(mut self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let pos = self.position();
        let data = self.get_ref().as_ref();
        let start = usize::try_from(pos).unwrap_or(usize::MAX).min(data.len());
        let n = (data.len() - start).min(buf.remaining());
        buf.put_slice(&data[start..start + n]);
        self.set_position(pos + n as u64);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsRef<[u8]> + Unpin> AsyncBufRead for Cursor<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        Poll::Ready(io::BufRead::fill_buf(self.get_mut()))
    }
    fn consume(self: Pin<&mut Self>, amt: usize) {
        io::BufRead::consume(self.get_mut(), amt)
    }
}

impl<T: AsRef<[u8]> + Unpin> AsyncSeek for Cursor<T> {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        io::Seek::seek(self.get_mut(), position).map(drop)
    }
    fn poll_complete(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Poll::Ready(Ok(self.position()))
    }
}

macro_rules! write_via_std {
    ($($ty:ty),* $(,)?) => {$(
        impl AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                Poll::Ready(io::Write::write(self.get_mut(), buf))
            }
            fn poll_write_vectored(self: Pin<&mut Self>, _cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
                Poll::Ready(io::Write::write_vectored(self.get_mut(), bufs))
            }
            fn is_write_vectored(&self) -> bool {
                true
            }
            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(io::Write::flush(self.get_mut()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.poll_flush(cx)
            }
        }
    )*};
}

write_via_std!(Vec<u8>, Cursor<&mut [u8]>, Cursor<&mut Vec<u8>>, Cursor<Vec<u8>>, Cursor<Box<[u8]>>);
