//! smol adapter (`smol`): `async-executor` run by N worker threads, `async-channel` for channels
//! (a `bounded(1)` channel doubles as the oneshot, as smol code usually does), `async-io` timers.
//!
//! This is how a smol application gets a multi-threaded runtime: one shared `Executor` that N
//! threads run until told to stop. The calling thread's `block_on` only polls the main future
//! (like tokio's multi-thread `block_on`), so spawned tasks always run on the N workers.
//!
//! `spawn` is a context function, so the executor lives in a thread-local that each worker and
//! `block_on` set; that is the same kind of lookup `tokio::spawn` does.

use std::cell::RefCell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use async_executor::Executor;
use futures_lite::FutureExt;

use crate::framework::adapter::{Adapter, Net, Panicked, RtConfig};

thread_local! {
    static CURRENT: RefCell<Option<Arc<Executor<'static>>>> = const { RefCell::new(None) };
}

/// Sets the thread's current executor for the guard's lifetime.
struct Enter;

impl Enter {
    fn new(ex: &Arc<Executor<'static>>) -> Enter {
        CURRENT.with(|c| *c.borrow_mut() = Some(ex.clone()));
        Enter
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().take());
    }
}

/// One shared executor and the threads that run it.
pub struct Smol {
    executor: Arc<Executor<'static>>,
    stop: Option<async_channel::Sender<()>>,
    workers: Vec<JoinHandle<()>>,
}

impl Adapter for Smol {
    type Handle<T: Send + 'static> = async_executor::Task<T>;
    type Channels = SmolChannels;
    type Net = SmolNet;

    fn build(config: &RtConfig) -> std::io::Result<Self> {
        let executor = Arc::new(Executor::new());
        let (stop, stopped) = async_channel::bounded::<()>(1);
        let mut workers = Vec::with_capacity(config.workers);
        for i in 0..config.workers.max(1) {
            let ex = executor.clone();
            let stopped = stopped.clone();
            let worker = std::thread::Builder::new().name(format!("smol-lab-{i}")).spawn(move || {
                let _enter = Enter::new(&ex);
                let _ = async_io::block_on(ex.run(stopped.recv()));
            })?;
            workers.push(worker);
        }
        Ok(Smol { executor, stop: Some(stop), workers })
    }

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        let _enter = Enter::new(&self.executor);
        async_io::block_on(fut)
    }

    fn spawn<F>(fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        CURRENT.with(|c| {
            let current = c.borrow();
            let ex = current.as_ref().expect("Smol::spawn called outside the runtime");
            ex.spawn(fut)
        })
    }

    fn detach<T: Send + 'static>(handle: Self::Handle<T>) {
        handle.detach(); // dropping an async-executor task would cancel it
    }

    fn join<T: Send + 'static>(handle: Self::Handle<T>) -> impl Future<Output = Result<T, Panicked>> + Send {
        // async-executor re-raises a task's panic in the awaiter; catching it here is the cost
        // a smol user pays to observe a panic.
        async move { AssertUnwindSafe(handle).catch_unwind().await.map_err(|_| Panicked) }
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        futures_lite::future::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        async move {
            async_io::Timer::after(duration).await;
        }
    }

    type Timer = crate::framework::runtimes::AsyncIoTimer;

    fn timer_at(deadline: std::time::Instant) -> Self::Timer {
        crate::framework::runtimes::AsyncIoTimer(async_io::Timer::at(deadline))
    }

    fn reset_timer(timer: std::pin::Pin<&mut Self::Timer>, deadline: std::time::Instant) {
        timer.get_mut().0.set_at(deadline);
    }
}

impl Drop for Smol {
    fn drop(&mut self) {
        drop(self.stop.take()); // closes the channel: every worker's `run` returns
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

super::async_channel_kit::async_channel_kit!(
    /// `async-channel` bounded mpsc (`bounded(1)` as the oneshot), `async-broadcast`, and
    /// `async-lock`'s `Semaphore` and `Mutex`.
    SmolChannels,
    channel = async_channel,
    mutex = async_lock::Mutex
);

/// `async-io`'s `Async<std::net::TcpListener/TcpStream>` (what `smol::net` wraps).
pub enum SmolNet {}

impl Net for SmolNet {
    type Listener = async_io::Async<std::net::TcpListener>;
    type Stream = async_io::Async<std::net::TcpStream>;
    futures_io_hyper!();

    fn bind_loopback() -> impl Future<Output = std::io::Result<(Self::Listener, std::net::SocketAddr)>> + Send {
        async {
            let l = async_io::Async::<std::net::TcpListener>::bind(([127, 0, 0, 1], 0))?;
            let addr = l.get_ref().local_addr()?;
            Ok((l, addr))
        }
    }
    fn accept(listener: &Self::Listener) -> impl Future<Output = std::io::Result<Self::Stream>> + Send + '_ {
        async move {
            let (s, _) = listener.accept().await?;
            s.get_ref().set_nodelay(true)?;
            Ok(s)
        }
    }
    fn connect(addr: std::net::SocketAddr) -> impl Future<Output = std::io::Result<Self::Stream>> + Send {
        async move {
            let s = async_io::Async::<std::net::TcpStream>::connect(addr).await?;
            s.get_ref().set_nodelay(true)?;
            Ok(s)
        }
    }
    futures_io_read_write!();
}
