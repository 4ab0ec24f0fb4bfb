//! `CopyBuffer`: the state of one reader-to-writer copy, polled to completion.
//!
//! This is the engine behind `copy_bidirectional` (and is generic enough to back a `copy`).
//! It reads into a fixed buffer, writes everything read before reading again, and when the
//! reader has nothing ready it flushes the writer before waiting, so data never sits in a
//! buffered writer while the copy is idle. At EOF it flushes and reports the bytes written.

use super::write_futures::write_zero;
use super::{AsyncRead, AsyncWrite, ReadBuf};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

#[derive(Debug)]
pub(crate) struct CopyBuffer {
    buf: Box<[u8]>,
    /// Next byte to write.
    pos: usize,
    /// End of the bytes read but not yet written.
    cap: usize,
    read_done: bool,
    need_flush: bool,
    amt: u64,
}

impl CopyBuffer {
    pub(crate) fn new(size: usize) -> Self {
        CopyBuffer {
            buf: vec![0; size.max(1)].into_boxed_slice(),
            pos: 0,
            cap: 0,
            read_done: false,
            need_flush: false,
            amt: 0,
        }
    }

    /// Copies until the reader reports EOF, then flushes; returns the total bytes written.
    pub(crate) fn poll_copy<R, W>(
        &mut self,
        cx: &mut Context<'_>,
        mut reader: Pin<&mut R>,
        mut writer: Pin<&mut W>,
    ) -> Poll<io::Result<u64>>
    where
        R: AsyncRead + ?Sized,
        W: AsyncWrite + ?Sized,
    {
        loop {
            if !self.read_done && self.cap < self.buf.len() {
                let mut rb = ReadBuf::new(&mut self.buf[self.cap..]);
                match reader.as_mut().poll_read(cx, &mut rb) {
                    Poll::Ready(Ok(())) => {
                        let n = rb.filled().len();
                        if n == 0 {
                            self.read_done = true;
                        } else {
                            self.cap += n;
                        }
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => {
                        if self.pos == self.cap {
                            if self.need_flush {
                                ready!(writer.as_mut().poll_flush(cx))?;
                                self.need_flush = false;
                            }
                            return Poll::Pending;
                        }
                    }
                }
            }

            while self.pos < self.cap {
                let n = ready!(writer.as_mut().poll_write(cx, &self.buf[self.pos..self.cap]))?;
                if n == 0 {
                    return Poll::Ready(Err(write_zero()));
                }
                self.pos += n;
                self.amt += n as u64;
                self.need_flush = true;
            }
            self.pos = 0;
            self.cap = 0;

            if self.read_done {
                ready!(writer.as_mut().poll_flush(cx))?;
                self.need_flush = false;
                return Poll::Ready(Ok(self.amt));
            }
        }
    }
}
