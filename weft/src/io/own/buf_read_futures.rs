//! The futures `AsyncBufReadExt`'s methods return, and the delimiter scan they share with
//! `Lines` and `Split`.
//!
//! `poll_read_until` appends straight into the caller's `Vec` and consumes from the reader as
//! it goes, so bytes are never held anywhere the caller cannot see them: that is what makes
//! `read_until`, `Lines::next_line` and `Split::next_segment` cancel safe. `read_line` must
//! not expose invalid UTF-8 in a `String`, so it stages bytes privately and is therefore not
//! cancel safe (staged bytes are lost, the `String` is left as it was).

use super::read_futures::invalid_utf8;
use super::AsyncBufRead;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Appends bytes up to and including `delim` (or up to EOF) to `buf`, consuming them from the
/// reader. `read` accumulates across `Pending`s and errors; on success it is reset and its
/// total returned.
pub(crate) fn poll_read_until<R: AsyncBufRead + ?Sized>(
    mut reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    delim: u8,
    buf: &mut Vec<u8>,
    read: &mut usize,
) -> Poll<io::Result<usize>> {
    loop {
        let (done, used) = {
            let available = ready!(reader.as_mut().poll_fill_buf(cx))?;
            match memchr::memchr(delim, available) {
                Some(i) => {
                    buf.extend_from_slice(&available[..=i]);
                    (true, i + 1)
                }
                None => {
                    buf.extend_from_slice(available);
                    (available.is_empty(), available.len())
                }
            }
        };
        reader.as_mut().consume(used);
        *read += used;
        if done {
            return Poll::Ready(Ok(std::mem::take(read)));
        }
    }
}

/// Future for [`fill_buf`](super::AsyncBufReadExt::fill_buf).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct FillBuf<'a, R: ?Sized> {
    pub(crate) reader: Option<&'a mut R>,
}

impl<'a, R: AsyncBufRead + Unpin + ?Sized> Future for FillBuf<'a, R> {
    type Output = io::Result<&'a [u8]>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        let reader: *mut R = me.reader.take().expect("FillBuf polled after completion");
        // SAFETY: `reader` came from a `&'a mut R` we just took out of `me`, so it is valid
        // and unaliased for `'a`. We turn it back into exactly one live `&'a mut R` at a time:
        // this one for the poll, and, only if the poll returned `Pending` (which holds no
        // borrow of the reader), a fresh one to store again. The returned slice may therefore
        // borrow the reader for `'a`, which the borrow checker cannot see through the branch.
        let poll = Pin::new(unsafe { &mut *reader }).poll_fill_buf(cx);
        if poll.is_pending() {
            // SAFETY: `reader` came from the `&'a mut R` taken out of `me`, so it is valid for
            // `'a`; the poll's `&mut` from it is dead (its result was `Pending`, which borrows
            // nothing) and is never used again, so this is the only live `&mut R`.
            me.reader = Some(unsafe { &mut *reader });
        }
        poll
    }
}

/// Future for [`read_until`](super::AsyncBufReadExt::read_until).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadUntil<'a, R: ?Sized> {
    pub(crate) reader: &'a mut R,
    pub(crate) delimiter: u8,
    pub(crate) buf: &'a mut Vec<u8>,
    pub(crate) read: usize,
}

impl<R: AsyncBufRead + Unpin + ?Sized> Future for ReadUntil<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        poll_read_until(Pin::new(&mut *me.reader), cx, me.delimiter, me.buf, &mut me.read)
    }
}

/// Future for [`read_line`](super::AsyncBufReadExt::read_line).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadLine<'a, R: ?Sized> {
    pub(crate) reader: &'a mut R,
    pub(crate) output: &'a mut String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) read: usize,
}

impl<R: AsyncBufRead + Unpin + ?Sized> Future for ReadLine<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        let res = ready!(poll_read_until(Pin::new(&mut *me.reader), cx, b'\n', &mut me.bytes, &mut me.read));
        let text = String::from_utf8(std::mem::take(&mut me.bytes));
        Poll::Ready(match (res, text) {
            (Ok(n), Ok(text)) => {
                me.output.push_str(&text);
                Ok(n)
            }
            (Ok(_), Err(_)) => Err(invalid_utf8()),
            (Err(e), Ok(text)) => {
                me.output.push_str(&text);
                Err(e)
            }
            (Err(e), Err(_)) => Err(e),
        })
    }
}
