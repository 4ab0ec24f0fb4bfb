//! The futures `AsyncReadExt`'s methods return.
//!
//! Each is a small state machine over a `&mut R` (so `R: Unpin`, and the future itself is
//! `Unpin`), kept as a named type rather than `async fn` so that its `Send`/`Sync`ness follows
//! its fields: a generic caller holding `R: Send` gets a `Send` future, which an opaque
//! `impl Future` in a trait method would not promise. The types are public but live in a
//! private module, so callers can await them but not name them, as with tokio's.

use super::{AsyncRead, ReadBuf};
use bytes::BufMut;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pub(crate) fn eof() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "early eof")
}

/// Fails loudly if a reader replaced the `ReadBuf` it was given with another one, which would
/// make the filled count describe some other memory.
#[track_caller]
pub(crate) fn assert_same_buffer(before: *const u8, rb: &ReadBuf<'_>) {
    assert_eq!(before, rb.filled().as_ptr(), "AsyncRead::poll_read swapped out the ReadBuf it was given");
}

/// Future for [`read`](super::AsyncReadExt::read).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Read<'a, R: ?Sized> {
    pub(crate) reader: &'a mut R,
    pub(crate) buf: &'a mut [u8],
}

impl<R: AsyncRead + Unpin + ?Sized> Future for Read<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        let mut rb = ReadBuf::new(me.buf);
        ready!(Pin::new(&mut *me.reader).poll_read(cx, &mut rb))?;
        Poll::Ready(Ok(rb.filled().len()))
    }
}

/// Future for [`read_buf`](super::AsyncReadExt::read_buf).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadBufFuture<'a, R: ?Sized, B: ?Sized> {
    pub(crate) reader: &'a mut R,
    pub(crate) buf: &'a mut B,
}

impl<R: AsyncRead + Unpin + ?Sized, B: BufMut + ?Sized> Future for ReadBufFuture<'_, R, B> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        if !me.buf.has_remaining_mut() {
            return Poll::Ready(Ok(0));
        }
        let n = {
            // SAFETY: the slice is only reached through a `ReadBuf`, whose safe API never writes
            // an uninitialised value, so nothing the buffer holds gets de-initialised.
            let dst = unsafe { me.buf.chunk_mut().as_uninit_slice_mut() };
            let mut rb = ReadBuf::uninit(dst);
            let start = rb.filled().as_ptr();
            ready!(Pin::new(&mut *me.reader).poll_read(cx, &mut rb))?;
            assert_same_buffer(start, &rb);
            rb.filled().len()
        };
        // SAFETY: the `ReadBuf` was over `chunk_mut()` (checked by `assert_same_buffer`) and its
        // first `n` bytes are filled, hence initialised; `n <= chunk_mut().len()`.
        unsafe { me.buf.advance_mut(n) };
        Poll::Ready(Ok(n))
    }
}

/// Future for [`read_exact`](super::AsyncReadExt::read_exact).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadExact<'a, R: ?Sized> {
    pub(crate) reader: &'a mut R,
    pub(crate) buf: ReadBuf<'a>,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadExact<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        loop {
            let before = me.buf.remaining();
            if before == 0 {
                return Poll::Ready(Ok(me.buf.capacity()));
            }
            ready!(Pin::new(&mut *me.reader).poll_read(cx, &mut me.buf))?;
            if me.buf.remaining() == before {
                return Poll::Ready(Err(eof()));
            }
        }
    }
}

/// Reads until EOF, appending to `buf`; returns the number of bytes appended by this call.
/// Appended bytes stay in `buf` when it returns `Pending` or an error.
pub(crate) fn poll_read_to_end<R: AsyncRead + ?Sized>(
    mut reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    buf: &mut Vec<u8>,
    read: &mut usize,
) -> Poll<io::Result<usize>> {
    loop {
        if buf.capacity() - buf.len() < 32 {
            buf.reserve(32);
        }
        let len = buf.len();
        let n = {
            let mut rb = ReadBuf::uninit(buf.spare_capacity_mut());
            let start = rb.filled().as_ptr();
            ready!(reader.as_mut().poll_read(cx, &mut rb))?;
            assert_same_buffer(start, &rb);
            rb.filled().len()
        };
        if n == 0 {
            return Poll::Ready(Ok(std::mem::take(read)));
        }
        // SAFETY: the reader filled (so initialised) the first `n` bytes of the spare capacity,
        // and `n` cannot exceed that capacity.
        unsafe { buf.set_len(len + n) };
        *read += n;
    }
}

/// Future for [`read_to_end`](super::AsyncReadExt::read_to_end).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadToEnd<'a, R: ?Sized> {
    pub(crate) reader: &'a mut R,
    pub(crate) buf: &'a mut Vec<u8>,
    pub(crate) read: usize,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadToEnd<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        poll_read_to_end(Pin::new(&mut *me.reader), cx, me.buf, &mut me.read)
    }
}

pub(crate) fn invalid_utf8() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8")
}

/// Future for [`read_to_string`](super::AsyncReadExt::read_to_string).
///
/// Bytes are collected apart from the destination and appended only once the whole stream
/// has been read and validated, so the destination is never left holding invalid UTF-8 and is
/// unchanged by an error or by cancellation.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadToString<'a, R: ?Sized> {
    pub(crate) reader: &'a mut R,
    pub(crate) dst: &'a mut String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) read: usize,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadToString<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        let res = ready!(poll_read_to_end(Pin::new(&mut *me.reader), cx, &mut me.bytes, &mut me.read));
        let bytes = std::mem::take(&mut me.bytes);
        let n = res?;
        let text = String::from_utf8(bytes).map_err(|_| invalid_utf8())?;
        if me.dst.is_empty() {
            *me.dst = text;
        } else {
            me.dst.push_str(&text);
        }
        Poll::Ready(Ok(n))
    }
}

/// Future for the `read_u8`…`read_f64_le` methods: reads exactly `N` bytes and decodes them.
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadNum<'a, R: ?Sized, T, const N: usize> {
    pub(crate) reader: &'a mut R,
    pub(crate) buf: [u8; N],
    pub(crate) filled: usize,
    pub(crate) decode: fn([u8; N]) -> T,
}

impl<R: AsyncRead + Unpin + ?Sized, T, const N: usize> Future for ReadNum<'_, R, T, N> {
    type Output = io::Result<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        while me.filled < N {
            let mut rb = ReadBuf::new(&mut me.buf[me.filled..]);
            ready!(Pin::new(&mut *me.reader).poll_read(cx, &mut rb))?;
            let n = rb.filled().len();
            if n == 0 {
                return Poll::Ready(Err(eof()));
            }
            me.filled += n;
        }
        Poll::Ready(Ok((me.decode)(me.buf)))
    }
}
