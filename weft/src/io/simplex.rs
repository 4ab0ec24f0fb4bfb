//! `simplex`: a one-way, in-memory byte pipe with a bounded buffer.
//!
//! Writes append to the buffer until it holds `max_buf_size` bytes, then return `Pending`
//! until a read makes room (backpressure); reads return `Pending` while the buffer is empty,
//! and EOF once it is empty and the writer has shut down. Each side stores at most one waker
//! and wakes the other side whenever it changes the buffer. `simplex()` hands out the two
//! halves through the generic `split`; `SimplexStream::new_unsplit` gives one handle that both
//! writes and reads; `duplex` puts two of them behind locks.
//!
//! One implementation for both builds: it implements whichever I/O traits `weft::io` exports
//! (tokio's or weft's own, same signatures). Every read and write that finds bytes or room
//! spends one unit of weft's coop budget (as tokio's spends tokio's), so a task looping over a
//! pipe that is always ready still yields.
//!
//! Invariant: no waker is woken or dropped while the pipe is borrowed. The operations collect
//! the wakers to wake, and the one a new registration replaces, in a [`Deferred`], which acts
//! when it is dropped, after the caller let go of the pipe (for `duplex`, after its lock): a
//! waker may poll the peer at once, and a replaced one may own the peer, whose drop locks the
//! same pipe.
//!
//! Zero-length operations do not wait: a read into an empty buffer and a write of no bytes
//! return at once, but a write to a pipe whose reader is gone still fails (tokio's rules).

use super::coop_io::budgeted;
use super::{split, AsyncRead, AsyncWrite, ReadBuf, ReadHalf, WriteHalf};
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// A unidirectional in-memory pipe; see the module documentation.
#[derive(Debug)]
pub struct SimplexStream {
    data: VecDeque<u8>,
    max_buf_size: usize,
    write_closed: bool,
    /// Set when the reading end is gone (a dropped `DuplexStream`): writes fail.
    read_closed: bool,
    reader: Option<Waker>,
    writer: Option<Waker>,
}

/// Creates a pipe that buffers at most `max_buf_size` bytes, as a read half and a write half.
/// Panics if `max_buf_size` is 0 (as tokio's).
#[track_caller]
pub fn simplex(max_buf_size: usize) -> (ReadHalf<SimplexStream>, WriteHalf<SimplexStream>) {
    split(SimplexStream::new_unsplit(max_buf_size))
}

/// Wakers taken out of a pipe, to wake (and a replaced one to drop) once the pipe is no longer
/// borrowed: on drop (module invariant).
#[derive(Default)]
pub(super) struct Deferred {
    // At most three: a dropped duplex end closes both its pipes (two wakers, then one).
    wake: [Option<Waker>; 3],
    replaced: Option<Waker>,
}

impl Deferred {
    fn wake(&mut self, slot: &mut Option<Waker>) {
        if let Some(w) = slot.take() {
            let free = self.wake.iter_mut().find(|s| s.is_none()).expect("an operation wakes at most three wakers");
            *free = Some(w);
        }
    }

    fn register(&mut self, slot: &mut Option<Waker>, cx: &Context<'_>) {
        match slot {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => self.replaced = slot.replace(cx.waker().clone()),
        }
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        for w in self.wake.iter_mut().filter_map(Option::take) {
            w.wake();
        }
    }
}

impl SimplexStream {
    /// Creates a pipe that buffers at most `max_buf_size` bytes, as a single handle that both
    /// writes and reads. Panics if `max_buf_size` is 0 (as tokio's).
    #[track_caller]
    pub fn new_unsplit(max_buf_size: usize) -> SimplexStream {
        assert!(max_buf_size > 0, "`max_buf_size` must be greater than 0");
        SimplexStream {
            data: VecDeque::new(),
            max_buf_size,
            write_closed: false,
            read_closed: false,
            reader: None,
            writer: None,
        }
    }

    /// The writing end is gone (or shut down): the reader drains the buffer, then reads EOF.
    pub(super) fn close_write(&mut self, later: &mut Deferred) {
        self.write_closed = true;
        later.wake(&mut self.reader);
        later.wake(&mut self.writer);
    }

    /// The reading end is gone: buffered bytes are dropped and writes fail with `BrokenPipe`.
    pub(super) fn close_read(&mut self, later: &mut Deferred) {
        self.read_closed = true;
        self.data.clear();
        later.wake(&mut self.writer);
    }

    pub(super) fn read(
        &mut self,
        cx: &Context<'_>,
        buf: &mut ReadBuf<'_>,
        later: &mut Deferred,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if self.data.is_empty() {
            if self.write_closed {
                return Poll::Ready(Ok(()));
            }
            later.register(&mut self.reader, cx);
            return Poll::Pending;
        }
        let n = self.data.len().min(buf.remaining());
        let (front, back) = self.data.as_slices();
        let from_front = n.min(front.len());
        buf.put_slice(&front[..from_front]);
        buf.put_slice(&back[..n - from_front]);
        self.data.drain(..n);
        later.wake(&mut self.writer);
        Poll::Ready(Ok(()))
    }

    /// Writes from `bufs` in order, as much as there is room for; a write of no bytes returns
    /// at once unless the pipe is closed.
    pub(super) fn write<'a, B>(&mut self, cx: &Context<'_>, bufs: B, later: &mut Deferred) -> Poll<io::Result<usize>>
    where
        B: IntoIterator<Item = &'a [u8]> + Clone,
    {
        if self.read_closed {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the reading end was dropped")));
        }
        if self.write_closed {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "simplex stream was shut down")));
        }
        if bufs.clone().into_iter().all(|b| b.is_empty()) {
            return Poll::Ready(Ok(0));
        }
        let mut room = self.max_buf_size.saturating_sub(self.data.len());
        if room == 0 {
            later.register(&mut self.writer, cx);
            return Poll::Pending;
        }
        let mut total = 0;
        for b in bufs {
            let n = room.min(b.len());
            self.data.extend(&b[..n]);
            total += n;
            room -= n;
            if room == 0 {
                break;
            }
        }
        later.wake(&mut self.reader);
        Poll::Ready(Ok(total))
    }
}

impl AsyncRead for SimplexStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        budgeted(cx, |cx| me.read(cx, buf, &mut Deferred::default()))
    }
}

impl AsyncWrite for SimplexStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        budgeted(cx, |cx| me.write(cx, [buf], &mut Deferred::default()))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        budgeted(cx, |cx| me.write(cx, bufs.iter().map(|b| &**b), &mut Deferred::default()))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Closes the write side: the reader sees EOF once it has drained the buffer, and further
    /// writes fail with `ErrorKind::BrokenPipe`.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().close_write(&mut Deferred::default());
        Poll::Ready(Ok(()))
    }
}
