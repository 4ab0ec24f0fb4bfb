//! hyper 1.x on weft: `WeftExecutor` (spawns hyper's background tasks, HTTP/2 included),
//! `WeftTimer` (hyper's `rt::Timer`; `reset` reuses the `Sleep` in place), `WeftIo` (hyper's
//! `rt::Read`/`rt::Write` over any weft/tokio-trait stream), and `WeftConnector` (a
//! `tower_service::Service<Uri>` for `hyper_util::client::legacy::Client`, resolving names on
//! the blocking pool).
//!
//! Shaped as thin adapters because hyper 1.x is runtime-agnostic by design: it only needs
//! these four capabilities, and every one maps onto a weft primitive with no buffering or
//! copying in between. `WeftIo::poll_read` hands hyper's *uninitialized* read buffer straight
//! to the socket's read (`ReadBuf::uninit`), so no byte is zero-filled; writes forward
//! `poll_write_vectored`, so hyper's header+body `IoSlice`s go out in one `writev`.
//!
//! What `WeftTimer` costs a server, against a target of 2% of the same server without a
//! timer. hyper 1.12 with a timer arms a header-read timeout for every request head: after
//! each response it polls for the next head at once (`notify_read`), creates a fresh `Sleep`
//! (`sleep_until`, not `reset`: it drops the previous one as soon as a head is parsed), polls
//! it when the head is not there yet, and drops it when the head arrives. So every request
//! pays a `Box`, a runtime-handle clone, a wheel registration and a deregistration, plus
//! hyper's own extra poll and clock read; no syscall is added (`strace -c`: 1 `recvfrom` and
//! 1 `writev` per request either way). The timer costs weft and tokio about the same share of
//! a hello server's throughput and CPU, over the 2% target; the timer's own code is about 2%
//! of the server's CPU and the rest is hyper's extra poll (the `weft-lab http-hello
//! --hyper-timer` and `perf` figures, with their commands: docs/notes/performance-figures.md,
//! "hyper timer"). `reset` to a later deadline and re-polls with the same waker skip the
//! wheel lock (`time/entry.rs`, `time/sleep.rs`), but hyper never calls `reset` in a
//! keep-alive loop and polls each `Sleep` once, so the hello server gains nothing from them.
//!
//! No tokio runtime is needed or created: weft enables only tokio's `io-util` feature (traits
//! and helpers; `net` comes in through hyper-util's legacy client, but never its `rt`), and
//! uses `hyper-util` without its `tokio` feature.
//!
//! ```no_run
//! use http_body_util::Full;
//! use hyper::body::Bytes;
//! use weft::hyper::{WeftIo, WeftTimer};
//!
//! # async fn serve() -> std::io::Result<()> {
//! let listener = weft::net::TcpListener::bind("127.0.0.1:0").await?;
//! loop {
//!     let (stream, _) = listener.accept().await?;
//!     weft::spawn(async move {
//!         let service = hyper::service::service_fn(|_req| async {
//!             Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(Bytes::from("Hello, world!"))))
//!         });
//!         let _ = hyper::server::conn::http1::Builder::new()
//!             .timer(WeftTimer::new())
//!             .serve_connection(WeftIo::new(stream), service)
//!             .await;
//!     });
//! }
//! # }
//! ```

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::ReadBufCursor;
use hyper_util::client::legacy::connect::{Connected, Connection};

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use crate::net::TcpStream;
use crate::runtime::Handle;

/// hyper's `Executor` on weft: spawns on the runtime captured at construction (or, if built
/// outside one, the current runtime at spawn time).
#[derive(Clone, Debug, Default)]
pub struct WeftExecutor {
    handle: Option<Handle>,
}

impl WeftExecutor {
    /// Captures the current runtime, if any.
    pub fn new() -> WeftExecutor {
        WeftExecutor { handle: Handle::try_current().ok() }
    }

    pub fn with_handle(handle: Handle) -> WeftExecutor {
        WeftExecutor { handle: Some(handle) }
    }
}

impl<F> hyper::rt::Executor<F> for WeftExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    #[track_caller]
    fn execute(&self, fut: F) {
        match &self.handle {
            Some(h) => drop(h.spawn(fut)),
            None => drop(crate::spawn(fut)),
        }
    }
}

/// hyper's `Timer` on weft's timer wheel.
#[derive(Clone, Copy, Debug, Default)]
pub struct WeftTimer;

impl WeftTimer {
    pub fn new() -> WeftTimer {
        WeftTimer
    }
}

pin_project_lite::pin_project! {
    /// A `weft::time::Sleep` as a hyper `rt::Sleep`.
    #[derive(Debug)]
    pub struct WeftSleep {
        #[pin]
        inner: crate::time::Sleep,
    }
}

impl Future for WeftSleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().inner.poll(cx)
    }
}

impl hyper::rt::Sleep for WeftSleep {}

impl hyper::rt::Timer for WeftTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(WeftSleep { inner: crate::time::sleep(duration) })
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(WeftSleep { inner: crate::time::sleep_until(crate::time::Instant::from_std(deadline)) })
    }

    /// Re-arms the existing `Sleep` (no new allocation) when it is one of ours.
    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: Instant) {
        if let Some(s) = sleep.as_mut().downcast_mut_pin::<WeftSleep>() {
            s.project().inner.reset(crate::time::Instant::from_std(new_deadline));
        } else {
            *sleep = self.sleep_until(new_deadline);
        }
    }
}

pin_project_lite::pin_project! {
    /// Adapts a stream with tokio's `AsyncRead`/`AsyncWrite` (every weft socket) to hyper's
    /// `rt::Read`/`rt::Write`.
    #[derive(Debug)]
    pub struct WeftIo<T> {
        #[pin]
        inner: T,
    }
}

impl<T> WeftIo<T> {
    pub fn new(inner: T) -> WeftIo<T> {
        WeftIo { inner }
    }
    pub fn inner(&self) -> &T {
        &self.inner
    }
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: AsyncRead> hyper::rt::Read for WeftIo<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, mut buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        // SAFETY: `ReadBufCursor::as_mut` requires that we never de-initialize bytes; the
        // slice is only handed to `ReadBuf::uninit`, whose readers only write into it.
        let raw = unsafe { buf.as_mut() };
        let mut rb = ReadBuf::uninit(raw);
        let res = self.project().inner.poll_read(cx, &mut rb);
        let n = rb.filled().len();
        if let Poll::Ready(Ok(())) = res {
            // SAFETY: the read filled (initialized) exactly the first `n` bytes of the cursor.
            unsafe { buf.advance(n) };
        }
        res
    }
}

impl<T: AsyncWrite> hyper::rt::Write for WeftIo<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write(cx, buf)
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().inner.poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_shutdown(cx)
    }
}

impl Connection for WeftIo<TcpStream> {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

/// A plain-HTTP connector for `hyper_util::client::legacy::Client`: resolves the URI's host
/// (blocking pool for names), connects with an optional timeout, sets `TCP_NODELAY`.
#[derive(Clone, Debug)]
pub struct WeftConnector {
    nodelay: bool,
    connect_timeout: Option<Duration>,
}

impl Default for WeftConnector {
    fn default() -> Self {
        WeftConnector::new()
    }
}

impl WeftConnector {
    /// `TCP_NODELAY` on, no connect timeout.
    pub fn new() -> WeftConnector {
        WeftConnector { nodelay: true, connect_timeout: None }
    }
    pub fn set_nodelay(&mut self, on: bool) -> &mut Self {
        self.nodelay = on;
        self
    }
    /// Fails a connection attempt (per address) that takes longer than `t`.
    pub fn set_connect_timeout(&mut self, t: Option<Duration>) -> &mut Self {
        self.connect_timeout = t;
        self
    }
}

/// Errors of `WeftConnector`.
pub type ConnectError = Box<dyn std::error::Error + Send + Sync>;

impl tower_service::Service<http::Uri> for WeftConnector {
    type Response = WeftIo<TcpStream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<WeftIo<TcpStream>, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            if uri.scheme_str().is_some_and(|s| s != "http") {
                return Err(format!("WeftConnector only speaks plain http, not {uri}").into());
            }
            let host = uri.host().ok_or_else(|| format!("URI has no host: {uri}"))?;
            let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
            let port = uri.port_u16().unwrap_or(80);
            let addrs: Vec<_> = crate::net::lookup_host((host.as_str(), port)).await?.collect();
            let mut last: Option<io::Error> = None;
            for addr in addrs {
                let attempt = TcpStream::connect(addr);
                let res = match this.connect_timeout {
                    Some(t) => match crate::time::timeout(t, attempt).await {
                        Ok(r) => r,
                        Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, format!("connect to {addr} timed out"))),
                    },
                    None => attempt.await,
                };
                match res {
                    Ok(s) => {
                        s.set_nodelay(this.nodelay)?;
                        return Ok(WeftIo::new(s));
                    }
                    Err(e) => last = Some(e),
                }
            }
            Err(last.map(Into::into).unwrap_or_else(|| format!("no addresses for {uri}").into()))
        })
    }
}
