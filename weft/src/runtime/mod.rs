//! The runtime: a scheduler (current-thread or multi-thread), a driver (timers and the mio
//! I/O poller), the worker threads that run them, and the blocking pool.
//!
//! # Entry points
//! * [`Builder`] configures and builds a [`Runtime`]; `#[weft::main]` does the same.
//! * [`Runtime::block_on`] runs a future to completion on the calling thread.
//! * [`Handle`] is a cloneable reference to a runtime for spawning from anywhere.
//!
//! # Contexts
//! A thread is "in" a runtime when it is a worker, inside `block_on`, or holds an
//! `EnterGuard` (`context.rs`). `weft::spawn` and `weft::time::sleep` use that context and
//! panic with a message explaining how to enter one when there is none. A thread in
//! `block_on` or on a worker cannot call `block_on` again (it would block the thread that
//! drives the outer runtime); it panics instead of deadlocking.
//!
//! # Shutdown
//! Dropping a `Runtime` (or `shutdown_timeout`/`shutdown_background`) starts the scheduler's
//! shutdown (see `scheduler/mod.rs`): every task is cancelled and its future dropped exactly
//! once, on a runtime thread or the dropping thread. Wakers of its tasks stay valid: waking
//! one later is a no-op.

pub(crate) mod blocking;
mod builder;
pub(crate) mod context;
pub(crate) mod driver;
mod env_config;
#[doc(hidden)]
pub use env_config::fuzz_parse as __fuzz_parse_env_config;
mod foreign_tokio;
mod handle;
mod id;
pub(crate) mod io;
mod local_runtime;
pub(crate) mod metrics;
pub(crate) mod park;
pub(crate) mod scheduler;
pub(crate) mod shutdown_error;

#[cfg(all(test, loom))]
mod loom_park;

pub use builder::Builder;
pub use handle::{EnterGuard, Handle, TryCurrentError};
pub use id::Id;
pub use local_runtime::{LocalOptions, LocalRuntime};
pub use metrics::{RuntimeMetrics, TaskInfo, TaskState};
pub use scheduler::multi_thread::LongPoll;
pub use shutdown_error::is_rt_shutdown_err;

/// The index of the worker thread this code runs on (`0..num_workers`), or `None` when it is
/// not running on one of a runtime's workers: outside any runtime, on the blocking pool, or in
/// a `block_on` that does not hold the scheduler (a current-thread runtime's core held by
/// another thread). A current-thread runtime's one worker is index 0.
pub fn worker_index() -> Option<usize> {
    context::with_scheduler(|cx| match cx? {
        scheduler::Context::CurrentThread(_) => Some(0),
        scheduler::Context::MultiThread(cx) => Some(cx.index),
    })
}

use std::fmt;
use std::future::Future;
use std::io as std_io;
use std::time::Duration;

use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::task::JoinHandle;

/// Settings the schedulers read on their hot paths.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) global_queue_interval: u32,
    pub(crate) event_interval: u32,
    pub(crate) silence_task_panics: bool,
    pub(crate) metrics: metrics::MetricsConfig,
    /// `Builder::on_thread_park` / `on_thread_unpark`.
    pub(crate) on_thread_park: Option<ThreadHook>,
    pub(crate) on_thread_unpark: Option<ThreadHook>,
    /// Long-poll detection and compensation (multi-thread flavor).
    pub(crate) monitor: scheduler::multi_thread::monitor::MonitorConfig,
    /// `Builder::name`.
    pub(crate) name: Option<String>,
    /// `Builder::task_arena`: task cells from the runtime's arena.
    pub(crate) task_arena: bool,
}

/// A user thread hook kept by the scheduler. Only ever called, never inspected, so a panic
/// caught across a `&Handle` cannot observe it half-updated: declared unwind-safe (as tokio's
/// `Handle` is) without requiring the user's closure to be.
#[derive(Clone)]
pub(crate) struct ThreadHook(pub(crate) builder::Callback);

impl std::panic::RefUnwindSafe for ThreadHook {}
impl std::panic::UnwindSafe for ThreadHook {}

impl std::ops::Deref for ThreadHook {
    type Target = dyn Fn() + Send + Sync;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

/// The runtime flavor, as reported by [`Handle::runtime_flavor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeFlavor {
    CurrentThread,
    MultiThread,
}

/// A weft runtime: owns its worker threads and its driver.
pub struct Runtime {
    handle: Handle,
    workers: Option<Workers>,
}

/// The worker threads of a multi-thread runtime and a counter of those still running.
struct Workers {
    threads: Vec<crate::loom::thread::JoinHandle<()>>,
    alive: AliveCount,
}

// The join handles are only joined during shutdown (which takes the `Runtime` by value or in
// `Drop`): a panic caught across a `&Runtime` cannot observe them half-updated. Declared
// unwind-safe so `Runtime` is, as tokio's is.
impl std::panic::RefUnwindSafe for Workers {}
impl std::panic::UnwindSafe for Workers {}

/// Number of worker threads still running, and the condvar `Runtime::drop` waits on.
pub(crate) type AliveCount = Arc<(Mutex<usize>, Condvar)>;

impl Runtime {
    /// A multi-thread runtime with all drivers enabled (like `tokio::runtime::Runtime::new`).
    pub fn new() -> std_io::Result<Runtime> {
        Builder::new_multi_thread().enable_all().build()
    }

    pub(crate) fn from_parts(
        handle: scheduler::Handle,
        workers: Option<(Vec<crate::loom::thread::JoinHandle<()>>, AliveCount)>,
    ) -> Runtime {
        Runtime {
            handle: Handle { inner: handle },
            workers: workers.map(|(threads, alive)| Workers { threads, alive }),
        }
    }

    /// Runs `future` to completion on the current thread. On a current-thread runtime this
    /// thread also runs the spawned tasks and the timers meanwhile.
    ///
    /// Panics if called from inside a runtime (a task or another `block_on`).
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }

    /// Spawns a task on this runtime.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Runs a blocking closure on this runtime's blocking pool (see `task::spawn_blocking`).
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, func: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(func)
    }

    /// The runtime's metrics: the same as `self.handle().metrics()`.
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Makes this runtime the current one for this thread until the guard is dropped.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }

    /// Shuts down, waiting at most `timeout` for worker threads to finish their current poll.
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        self.shutdown(Some(timeout));
    }

    /// Shuts down without waiting for the worker threads.
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    fn shutdown(&mut self, timeout: Option<Duration>) {
        match &self.handle.inner {
            scheduler::Handle::CurrentThread(h) => scheduler::current_thread::Handle::shutdown(h),
            scheduler::Handle::MultiThread(h) => h.shutdown(),
        }
        // Blocking threads are not runtime workers: wait for them (or not) as asked.
        self.handle.inner.blocking().shutdown(timeout);
        let Some(workers) = self.workers.take() else { return };
        let (lock, cvar) = &*workers.alive;
        let mut alive = crate::loom::lock(lock);
        let deadline = timeout.and_then(|t| std::time::Instant::now().checked_add(t));
        while *alive > 0 {
            match deadline {
                None => alive = cvar.wait(alive).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = std::time::Instant::now();
                    if now >= d {
                        break;
                    }
                    alive = cvar.wait_timeout(alive, d - now).unwrap_or_else(|p| p.into_inner()).0;
                }
            }
        }
        let all_exited = *alive == 0;
        drop(alive);
        if all_exited {
            for t in workers.threads {
                let _ = t.join();
            }
            // Spares, the monitor and compensating threads (all counted in `alive`).
            if let scheduler::Handle::MultiThread(h) = &self.handle.inner {
                h.threads.join_all();
            }
        }
        // Otherwise the threads are detached; they finish shutting down on their own.
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown(None);
        // After shutdown, so the totals are final (`WEFT_METRICS_DUMP`, `metrics/exit_summary.rs`).
        metrics::exit_summary::write_if_requested(&self.handle);
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime").field("flavor", &self.handle.runtime_flavor()).finish()
    }
}
