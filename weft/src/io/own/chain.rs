//! `Chain`: a reader adapter that reads one reader to EOF, then another.
//!
//! The switch happens the first time the first reader reports EOF (a read that fills nothing
//! into a buffer with room, or an empty `poll_fill_buf`); after that the first reader is never
//! polled again.

use super::{AsyncBufRead, AsyncRead, ReadBuf};
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// Reader adapter chaining two readers, from [`AsyncReadExt::chain`](super::AsyncReadExt::chain).
    #[derive(Debug)]
    #[must_use = "readers do nothing unless polled"]
    pub struct Chain<T, U> {
        #[pin]
        first: T,
        #[pin]
        second: U,
        done_first: bool,
    }
}

pub(crate) fn chain<T: AsyncRead, U: AsyncRead>(first: T, second: U) -> Chain<T, U> {
    Chain { first, second, done_first: false }
}

impl<T: AsyncRead, U: AsyncRead> Chain<T, U> {
    /// The two underlying readers.
    pub fn get_ref(&self) -> (&T, &U) {
        (&self.first, &self.second)
    }

    /// The two underlying readers, mutably.
    pub fn get_mut(&mut self) -> (&mut T, &mut U) {
        (&mut self.first, &mut self.second)
    }

    /// The two underlying readers, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> (Pin<&mut T>, Pin<&mut U>) {
        let me = self.project();
        (me.first, me.second)
    }

    /// Returns the two underlying readers.
    pub fn into_inner(self) -> (T, U) {
        (self.first, self.second)
    }
}

impl<T: AsyncRead, U: AsyncRead> AsyncRead for Chain<T, U> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let me = self.project();
        if !*me.done_first {
            let before = buf.remaining();
            ready!(me.first.poll_read(cx, buf))?;
            if buf.remaining() != before || before == 0 {
                return Poll::Ready(Ok(()));
            }
            *me.done_first = true;
        }
        me.second.poll_read(cx, buf)
    }
}

impl<T: AsyncBufRead, U: AsyncBufRead> AsyncBufRead for Chain<T, U> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.project();
        if !*me.done_first {
            match ready!(me.first.poll_fill_buf(cx))? {
                [] => *me.done_first = true,
                available => return Poll::Ready(Ok(available)),
            }
        }
        me.second.poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.project();
        if *me.done_first {
            me.second.consume(amt)
        } else {
            me.first.consume(amt)
        }
    }
}
