//! `simplex`: a one-way, in-memory byte pipe with a bounded buffer.
//!
//! Writes append to the buffer until it holds `max_buf_size` bytes, then return `Pending`
//! until a read makes room (backpressure); reads return `Pending` while the buffer is empty,
//! and EOF once it is empty and the writer has shut down. Each side stores at most one waker
//! and wakes the other side whenever it changes the buffer. `simplex()` hands out the two
//! halves through the generic `split`; `SimplexStream::new_unsplit` gives one handle that both
//! writes and reads.

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
pub fn simplex(max_buf_size: usize) -> (ReadHalf<SimplexStream>, WriteHalf<SimplexStream>) {
    split(SimplexStream::new_unsplit(max_buf_size))
}

fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

fn wake(slot: &mut Option<Waker>) {
    if let Some(w) = slot.take() {
        w.wake();
    }
}

impl SimplexStream {
    /// Creates a pipe that buffers at most `max_buf_size` bytes, as a single handle that both
    /// writes and reads.
    pub fn new_unsplit(max_buf_size: usize) -> SimplexStream {
        SimplexStream {
            data: VecDeque::new(),
            max_buf_size,
            write_closed: false,
            read_closed: false,
            reader: None,
            writer: None,
        }
    }

    /// The writing end is gone: the reader drains the buffer, then reads EOF.
    pub(crate) fn close_write(&mut self) {
        self.write_closed = true;
        wake(&mut self.reader);
    }

    /// The reading end is gone: buffered bytes are dropped and writes fail with `BrokenPipe`.
    pub(crate) fn close_read(&mut self) {
        self.read_closed = true;
        self.data.clear();
        wake(&mut self.writer);
    }

    fn poll_room(&mut self, cx: &Context<'_>) -> Poll<io::Result<usize>> {
        if self.read_closed {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the reading end was dropped")));
        }
        if self.write_closed {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "simplex stream was shut down")));
        }
        let room = self.max_buf_size.saturating_sub(self.data.len());
        if room == 0 {
            register(&mut self.writer, cx);
            return Poll::Pending;
        }
        Poll::Ready(Ok(room))
    }
}

impl AsyncRead for SimplexStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        if me.data.is_empty() {
            if me.write_closed {
                return Poll::Ready(Ok(()));
            }
            register(&mut me.reader, cx);
            return Poll::Pending;
        }
        let n = me.data.len().min(buf.remaining());
        let (front, back) = me.data.as_slices();
        let from_front = n.min(front.len());
        buf.put_slice(&front[..from_front]);
        buf.put_slice(&back[..n - from_front]);
        me.data.drain(..n);
        if n > 0 {
            wake(&mut me.writer);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for SimplexStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let room = std::task::ready!(me.poll_room(cx))?;
        let n = room.min(buf.len());
        me.data.extend(&buf[..n]);
        wake(&mut me.reader);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        if bufs.iter().all(|b| b.is_empty()) {
            return Poll::Ready(Ok(0));
        }
        let mut room = std::task::ready!(me.poll_room(cx))?;
        let mut total = 0;
        for b in bufs {
            let n = room.min(b.len());
            me.data.extend(&b[..n]);
            total += n;
            room -= n;
            if room == 0 {
                break;
            }
        }
        wake(&mut me.reader);
        Poll::Ready(Ok(total))
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
        let me = self.get_mut();
        me.write_closed = true;
        wake(&mut me.reader);
        wake(&mut me.writer);
        Poll::Ready(Ok(()))
    }
}
