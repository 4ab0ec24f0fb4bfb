//! hyper 1.x I/O over futures-io streams (smol's `Async<TcpStream>`, async-std's
//! `TcpStream`): what `smol-hyper`-style glue does, kept here so neither runtime needs a
//! tokio bridge. Reads go through an initialized buffer (futures-io's `poll_read` takes
//! `&mut [u8]`), as with those runtimes' usual adapters.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// A futures-io stream as hyper `rt::Read`/`rt::Write`.
pub struct FuturesIo<S>(pub S);

impl<S: futures_lite::AsyncRead + Unpin> hyper::rt::Read for FuturesIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: we only write into the cursor's memory (after zero-filling it below) and
        // advance by exactly the bytes the read reported.
        let raw = unsafe { buf.as_mut() };
        for b in raw.iter_mut() {
            b.write(0);
        }
        // SAFETY: every byte of `raw` was just initialized.
        let slice = unsafe { &mut *(raw as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
        let n = ready!(Pin::new(&mut self.get_mut().0).poll_read(cx, slice))?;
        // SAFETY: `n` bytes were written (and all were initialized).
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

impl<S: futures_lite::AsyncWrite + Unpin> hyper::rt::Write for FuturesIo<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_close(cx)
    }
}

/// The hyper timer of a runtime that has none (no value exists: `Net::hyper_timer` is `None`).
pub enum NoTimer {}

impl hyper::rt::Timer for NoTimer {
    fn sleep(&self, _: std::time::Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        match *self {}
    }

    fn sleep_until(&self, _: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        match *self {}
    }
}
