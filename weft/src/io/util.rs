//! `empty`, `repeat` and `sink`: the always-ready readers and writers, weft's own so that
//! they spend weft's cooperative budget.
//!
//! tokio's versions of these consult *tokio's* coop budget, which weft never sets (weft
//! depends on tokio only for its traits and `io-util` helpers), so a loop over
//! `tokio::io::repeat` inside a weft task would never yield. Each poll here takes one unit of
//! weft's budget (`task::coop::poll_proceed`) and makes progress; when the budget is spent
//! the poll returns `Pending` after waking the task, exactly like a leaf future that was not
//! ready. Outside a runtime the budget is unconstrained and they are always ready.

use std::fmt;
use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};

use crate::task::coop;

/// Takes one unit of budget and marks it spent (these types always make progress).
fn proceed(cx: &mut Context<'_>) -> Poll<()> {
    let restore = ready!(coop::poll_proceed(cx));
    restore.made_progress();
    Poll::Ready(())
}

/// A reader that is always at end of file and a writer that accepts and discards everything.
/// Returned by [`empty`].
#[derive(Default)]
pub struct Empty {
    _priv: (),
}

/// An empty reader/writer: reads return 0 bytes, writes succeed and discard, seeks return 0.
pub fn empty() -> Empty {
    Empty { _priv: () }
}

impl AsyncRead for Empty {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, _buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        ready!(proceed(cx));
        Poll::Ready(Ok(()))
    }
}

impl AsyncBufRead for Empty {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        ready!(proceed(cx));
        Poll::Ready(Ok(&[]))
    }

    fn consume(self: Pin<&mut Self>, _amt: usize) {}
}

/// `AsyncWrite` for a writer that takes every byte and keeps none (`empty` and `sink`): each
/// poll spends one unit of the coop budget, then succeeds with the whole length.
macro_rules! discarding_writer {
    ($ty:ty) => {
        impl AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                ready!(proceed(cx));
                Poll::Ready(Ok(buf.len()))
            }

            fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                ready!(proceed(cx));
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                ready!(proceed(cx));
                Poll::Ready(Ok(()))
            }

            fn is_write_vectored(&self) -> bool {
                true
            }

            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                ready!(proceed(cx));
                Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum()))
            }
        }
    };
}

discarding_writer!(Empty);

impl AsyncSeek for Empty {
    fn start_seek(self: Pin<&mut Self>, _position: SeekFrom) -> io::Result<()> {
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        ready!(proceed(cx));
        Poll::Ready(Ok(0))
    }
}

impl fmt::Debug for Empty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Empty { .. }")
    }
}

/// A reader that yields one byte over and over. Returned by [`repeat`].
#[derive(Debug)]
pub struct Repeat {
    byte: u8,
}

/// A reader that fills every buffer with `byte`, forever.
pub fn repeat(byte: u8) -> Repeat {
    Repeat { byte }
}

impl AsyncRead for Repeat {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        ready!(proceed(cx));
        let n = buf.remaining();
        buf.initialize_unfilled_to(n).fill(self.byte);
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

/// A writer that accepts and discards everything. Returned by [`sink`].
pub struct Sink {
    _priv: (),
}

/// A writer whose writes all succeed and go nowhere.
pub fn sink() -> Sink {
    Sink { _priv: () }
}

discarding_writer!(Sink);

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Sink { .. }")
    }
}
