//! Split halves of a `TcpStream`: borrowed (`split`, free) and owned (`into_split`, one
//! `Arc`). The types, their shared methods and I/O impls come from `net/split.rs` (the same
//! expansion as `UnixStream`'s halves); the read halves' `peek`s, which only TCP has, are
//! here.

use std::io;
use std::task::{Context, Poll};

use super::TcpStream;
use crate::io::ReadBuf;

crate::net::split::stream_halves!(TcpStream, std::net::SocketAddr);

impl ReadHalf<'_> {
    /// Receives data without removing it from the queue.
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.peek(buf).await
    }

    /// Receives data into `buf` without removing it from the queue; registers `cx`'s waker
    /// if there is none.
    pub fn poll_peek(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<usize>> {
        self.0.poll_peek(cx, buf)
    }
}

impl OwnedReadHalf {
    /// Receives data without removing it from the queue.
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.peek(buf).await
    }

    /// Receives data into `buf` without removing it from the queue; registers `cx`'s waker
    /// if there is none.
    pub fn poll_peek(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<usize>> {
        self.inner.poll_peek(cx, buf)
    }
}
