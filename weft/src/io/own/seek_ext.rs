//! `AsyncSeekExt`: `seek`, `rewind` and `stream_position` for every `AsyncSeek`.
//!
//! `AsyncSeek` is a two-step protocol (`start_seek`, then `poll_complete`). The `Seek` future
//! first drives any seek someone else left in flight to completion, so that its own
//! `start_seek` cannot be rejected as "already seeking", then starts and completes its own.

use super::AsyncSeek;
use std::future::Future;
use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Future for [`seek`](AsyncSeekExt::seek) and [`stream_position`](AsyncSeekExt::stream_position).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Seek<'a, S: ?Sized> {
    seeker: &'a mut S,
    pos: Option<SeekFrom>,
}

impl<S: AsyncSeek + Unpin + ?Sized> Future for Seek<'_, S> {
    type Output = io::Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let me = self.get_mut();
        if let Some(pos) = me.pos {
            ready!(Pin::new(&mut *me.seeker).poll_complete(cx))?;
            Pin::new(&mut *me.seeker).start_seek(pos)?;
            me.pos = None;
        }
        Pin::new(&mut *me.seeker).poll_complete(cx)
    }
}

/// Future for [`rewind`](AsyncSeekExt::rewind).
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Rewind<'a, S: ?Sized> {
    inner: Seek<'a, S>,
}

impl<S: AsyncSeek + Unpin + ?Sized> Future for Rewind<'_, S> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.get_mut().inner).poll(cx).map_ok(drop)
    }
}

/// Seeking helpers for every [`AsyncSeek`].
pub trait AsyncSeekExt: AsyncSeek {
    /// Seeks to `pos`, returning the new position from the start of the stream.
    ///
    /// If the future is dropped after the seek started, the seek may still take effect.
    fn seek(&mut self, pos: SeekFrom) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        Seek { seeker: self, pos: Some(pos) }
    }

    /// Seeks to the start of the stream.
    fn rewind(&mut self) -> Rewind<'_, Self>
    where
        Self: Unpin,
    {
        Rewind { inner: self.seek(SeekFrom::Start(0)) }
    }

    /// Returns the current position from the start of the stream (a `SeekFrom::Current(0)`
    /// seek; on buffered readers this discards the read buffer).
    fn stream_position(&mut self) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        self.seek(SeekFrom::Current(0))
    }
}

impl<S: AsyncSeek + ?Sized> AsyncSeekExt for S {}
