//! Split halves of a `TcpStream`: borrowed (`split`, free) and owned (`into_split`, one
//! `Arc`). The driver keeps separate reader and writer waker slots per registration, so one
//! task may read while another writes without stealing each other's wake-ups.

use crate::loom::sync::Arc;
use std::error::Error;
use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::TcpStream;
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};

/// Borrowed read half.
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a TcpStream);

/// Borrowed write half; `poll_shutdown` shuts down the write direction.
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a TcpStream);

/// Owned read half.
#[derive(Debug)]
pub struct OwnedReadHalf {
    inner: Arc<TcpStream>,
}

/// Owned write half. Dropping it shuts down the write direction (like tokio).
#[derive(Debug)]
pub struct OwnedWriteHalf {
    inner: Arc<TcpStream>,
    shutdown_on_drop: bool,
}

pub(crate) fn split(stream: &mut TcpStream) -> (ReadHalf<'_>, WriteHalf<'_>) {
    (ReadHalf(stream), WriteHalf(stream))
}

pub(crate) fn split_owned(stream: TcpStream) -> (OwnedReadHalf, OwnedWriteHalf) {
    let inner = Arc::new(stream);
    (OwnedReadHalf { inner: inner.clone() }, OwnedWriteHalf { inner, shutdown_on_drop: true })
}

/// The halves given to `reunite` came from different streams.
#[derive(Debug)]
pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

impl fmt::Display for ReuniteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tried to reunite halves that are not from the same socket")
    }
}

impl Error for ReuniteError {}

impl ReadHalf<'_> {
    /// Receives data without removing it from the queue.
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.peek(buf).await
    }
    pub fn poll_peek(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<usize>> {
        self.0.poll_peek(cx, buf)
    }
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
    pub async fn readable(&self) -> io::Result<()> {
        self.0.readable().await
    }
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl WriteHalf<'_> {
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
    pub async fn writable(&self) -> io::Result<()> {
        self.0.writable().await
    }
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }
}

impl OwnedReadHalf {
    /// Puts the halves back together; fails if they come from different streams.
    pub fn reunite(self, other: OwnedWriteHalf) -> Result<TcpStream, ReuniteError> {
        if !Arc::ptr_eq(&self.inner, &other.inner) {
            return Err(ReuniteError(self, other));
        }
        let mut other = other;
        other.shutdown_on_drop = false;
        let inner = other.inner.clone();
        drop(other);
        drop(self);
        Ok(Arc::try_unwrap(inner).expect("both halves were just dropped"))
    }
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.peek(buf).await
    }
    pub fn poll_peek(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<usize>> {
        self.inner.poll_peek(cx, buf)
    }
    pub async fn readable(&self) -> io::Result<()> {
        self.inner.readable().await
    }
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.inner.ready(interest).await
    }
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.try_read(buf)
    }
}

impl OwnedWriteHalf {
    pub fn reunite(self, other: OwnedReadHalf) -> Result<TcpStream, ReuniteError> {
        other.reunite(self)
    }
    /// Drops the half without shutting down the write direction.
    pub fn forget(mut self) {
        self.shutdown_on_drop = false;
    }
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.inner.peer_addr()
    }
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
    pub async fn writable(&self) -> io::Result<()> {
        self.inner.writable().await
    }
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.inner.ready(interest).await
    }
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.try_write(buf)
    }
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        if self.shutdown_on_drop {
            let _ = self.inner.shutdown_std(Shutdown::Write);
        }
    }
}

macro_rules! read_impl {
    ($t:ty, $s:ident => $inner:expr) => {
        impl AsyncRead for $t {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
                let $s = self.get_mut();
                $inner.poll_read_priv(cx, buf)
            }
        }
    };
}

macro_rules! write_impl {
    ($t:ty, $s:ident => $inner:expr) => {
        impl AsyncWrite for $t {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                let $s = self.get_mut();
                $inner.poll_write_priv(cx, buf)
            }
            fn poll_write_vectored(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                let $s = self.get_mut();
                $inner.poll_write_vectored_priv(cx, bufs)
            }
            fn is_write_vectored(&self) -> bool {
                true
            }
            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                let $s = self.get_mut();
                Poll::Ready($inner.shutdown_std(Shutdown::Write))
            }
        }
    };
}

read_impl!(ReadHalf<'_>, s => s.0);
write_impl!(WriteHalf<'_>, s => s.0);
read_impl!(OwnedReadHalf, s => s.inner);
write_impl!(OwnedWriteHalf, s => s.inner);
