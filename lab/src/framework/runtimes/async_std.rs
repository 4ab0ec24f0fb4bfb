//! async-std adapter (`async-std`), with `async_std::channel` (async-channel 1.x; `bounded(1)` as
//! the oneshot).
//!
//! async-std is discontinued upstream but still builds here. Its executor is a process-wide
//! global that cannot be shut down, so this adapter is only ever built in a child process
//! (`weft-lab __sample`, see `measure.rs`; `__agents`, see `agents/child.rs`): the parent sets `ASYNC_STD_THREAD_COUNT` to the
//! worker count before the child starts, and the child's exit is the runtime's drop.
//! Architecture Invariant: `build` refuses to run outside such a child.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_lite::FutureExt;

use crate::framework::adapter::{Adapter, Net, Panicked, RtConfig};

/// The environment variable that marks a `__sample` child process.
pub const CHILD_ENV: &str = "WEFT_LAB_CHILD";

/// The global async-std runtime, reached from a child process.
pub struct AsyncStd(());

impl Adapter for AsyncStd {
    type Handle<T: Send + 'static> = async_std::task::JoinHandle<T>;
    type Channels = AsyncStdChannels;
    type Net = AsyncStdNet;

    /// Every `build` returns the one process-global executor.
    const OWN_RUNTIMES: bool = false;

    fn build(config: &RtConfig) -> std::io::Result<Self> {
        if std::env::var_os(CHILD_ENV).is_none() {
            return Err(std::io::Error::other("async-std's global runtime may only be built in a `__sample` child"));
        }
        let expected = config.workers.to_string();
        if std::env::var("ASYNC_STD_THREAD_COUNT").ok().as_deref() != Some(expected.as_str()) {
            return Err(std::io::Error::other(format!("ASYNC_STD_THREAD_COUNT must be {expected}")));
        }
        Ok(AsyncStd(()))
    }

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        async_std::task::block_on(fut)
    }

    fn spawn<F>(fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        async_std::task::spawn(fut)
    }

    fn join<T: Send + 'static>(handle: Self::Handle<T>) -> impl Future<Output = Result<T, Panicked>> + Send {
        // Like smol, async-std re-raises a task's panic in the awaiter.
        async move { AssertUnwindSafe(handle).catch_unwind().await.map_err(|_| Panicked) }
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        async_std::task::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        async_std::task::sleep(duration)
    }

    // async-std has no movable timer of its own; its users reach for async-io's, which its
    // reactor drives.
    type Timer = crate::framework::runtimes::AsyncIoTimer;

    fn timer_at(deadline: std::time::Instant) -> Self::Timer {
        crate::framework::runtimes::AsyncIoTimer(async_io::Timer::at(deadline))
    }

    fn reset_timer(timer: std::pin::Pin<&mut Self::Timer>, deadline: std::time::Instant) {
        timer.get_mut().0.set_at(deadline);
    }
}

super::async_channel_kit::async_channel_kit!(
    /// `async_std::channel` bounded mpsc (`bounded(1)` as the oneshot), `async_std::sync::Mutex`;
    /// async-std has no semaphore or broadcast, so the closest equivalents of its ecosystem stand
    /// in: `async-lock`'s `Semaphore` and `async-broadcast`.
    AsyncStdChannels,
    channel = async_std::channel,
    mutex = async_std::sync::Mutex
);

/// `async_std::net` TCP.
pub enum AsyncStdNet {}

impl Net for AsyncStdNet {
    type Listener = async_std::net::TcpListener;
    type Stream = async_std::net::TcpStream;
    futures_io_hyper!();

    fn bind_loopback() -> impl Future<Output = std::io::Result<(Self::Listener, std::net::SocketAddr)>> + Send {
        async {
            let l = async_std::net::TcpListener::bind("127.0.0.1:0").await?;
            let addr = l.local_addr()?;
            Ok((l, addr))
        }
    }
    fn accept(listener: &Self::Listener) -> impl Future<Output = std::io::Result<Self::Stream>> + Send + '_ {
        async move {
            let (s, _) = listener.accept().await?;
            s.set_nodelay(true)?;
            Ok(s)
        }
    }
    fn connect(addr: std::net::SocketAddr) -> impl Future<Output = std::io::Result<Self::Stream>> + Send {
        async move {
            let s = async_std::net::TcpStream::connect(addr).await?;
            s.set_nodelay(true)?;
            Ok(s)
        }
    }
    futures_io_read_write!();
}
