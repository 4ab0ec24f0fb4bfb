//! `copy_bidirectional`: pumps bytes both ways between two streams until both directions
//! reach EOF, as a proxy does.
//!
//! Each direction is an independent `CopyBuffer`; when one direction's reader reaches EOF its
//! writer (the *other* stream) is shut down, propagating the half-close, and that direction
//! then waits for the other. The first error in either direction ends the whole copy.

use super::buf_reader::DEFAULT_BUF_SIZE;
use super::copy_buffer::CopyBuffer;
use super::{AsyncRead, AsyncWrite};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

enum Direction {
    Copying(CopyBuffer),
    ShuttingDown(u64),
    Done(u64),
}

fn poll_direction<R, W>(
    cx: &mut Context<'_>,
    state: &mut Direction,
    reader: &mut R,
    writer: &mut W,
) -> Poll<io::Result<u64>>
where
    R: AsyncRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    loop {
        match state {
            Direction::Copying(buf) => {
                let n = ready!(buf.poll_copy(cx, Pin::new(&mut *reader), Pin::new(&mut *writer)))?;
                *state = Direction::ShuttingDown(n);
            }
            Direction::ShuttingDown(n) => {
                ready!(Pin::new(&mut *writer).poll_shutdown(cx))?;
                *state = Direction::Done(*n);
            }
            Direction::Done(n) => return Poll::Ready(Ok(*n)),
        }
    }
}

/// Copies data in both directions between `a` and `b` until both reach EOF.
///
/// When `a` reaches EOF, `b` is shut down (and vice versa); the future completes once both
/// directions are done, returning `(bytes a→b, bytes b→a)`. An error in either direction is
/// returned at once. Uses an 8 KiB buffer per direction.
///
/// Not cancel safe in the sense that bytes read but not yet written are lost if dropped.
pub async fn copy_bidirectional<A, B>(a: &mut A, b: &mut B) -> io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin + ?Sized,
    B: AsyncRead + AsyncWrite + Unpin + ?Sized,
{
    copy_bidirectional_with_sizes(a, b, DEFAULT_BUF_SIZE, DEFAULT_BUF_SIZE).await
}

/// Like [`copy_bidirectional`], with the buffer size of each direction given.
pub async fn copy_bidirectional_with_sizes<A, B>(
    a: &mut A,
    b: &mut B,
    a_to_b_buf_size: usize,
    b_to_a_buf_size: usize,
) -> io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin + ?Sized,
    B: AsyncRead + AsyncWrite + Unpin + ?Sized,
{
    let mut a_to_b = Direction::Copying(CopyBuffer::new(a_to_b_buf_size));
    let mut b_to_a = Direction::Copying(CopyBuffer::new(b_to_a_buf_size));
    std::future::poll_fn(|cx| {
        let forward = poll_direction(cx, &mut a_to_b, a, b)?;
        let backward = poll_direction(cx, &mut b_to_a, b, a)?;
        let forward = ready!(forward);
        let backward = ready!(backward);
        Poll::Ready(Ok((forward, backward)))
    })
    .await
}
