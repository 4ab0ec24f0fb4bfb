//! The blocking pool behind `weft::task::spawn_blocking`: a bounded set of plain threads
//! that run closures which would otherwise block a worker (DNS lookups, file I/O, CPU-heavy
//! or foreign blocking calls).
//!
//! Shaped as one mutex-protected FIFO plus a condvar, because blocking work is by definition
//! slow (micro- to milliseconds and up), so a lock per task costs nothing measurable and
//! keeps the pool obviously correct. Each closure runs as an ordinary weft task (so it
//! returns a normal `JoinHandle`, panics become `JoinError`s, and aborting a queued closure
//! cancels it) whose future completes in its one and only poll.
//!
//! # Size
//! At most `default_max_threads()` threads (`Builder::max_blocking_threads` to change it):
//! 8 × the CPU cores, at least 16 and at most 128 (the `WEFT_MAX_BLOCKING_THREADS`
//! environment variable overrides it). Why not tokio's 512: a published tokio tuning guide (one
//! of the reports this project started from, not in this repository) calls 512 "dangerously
//! large" (resource exhaustion under a burst of blocking calls) and rarely sizes a pool above
//! 100, and a published file-search benchmark was fastest with smol's blocking pool bounded
//! by the core count. Why not the cores alone: most blocking work
//! *waits* (DNS, disk, a pipe) rather than computes, and a pool too small for the waiting is a
//! trap — blocking tasks that wait on each other (a reader of a pipe whose writer is also a
//! blocking task; a DNS lookup queued behind slow file copies) stall or deadlock once it is
//! full; the floor of 16 keeps that rare. Threads
//! are spawned on demand (only when no idle thread is waiting) and exit after
//! `DEFAULT_KEEP_ALIVE` (10 s) idle, so an idle runtime holds no blocking threads.
//!
//! # Shutdown, as steps
//! 1. `Runtime` shutdown closes the pool: queued closures that have not started are
//!    cancelled (their `JoinHandle`s report cancellation); new spawns are refused likewise.
//! 2. Idle threads are woken and exit.
//! 3. Running closures cannot be interrupted: `Runtime::drop` waits for them (like tokio),
//!    `shutdown_timeout` waits at most its timeout and then detaches them, and
//!    `shutdown_background` detaches at once. A detached thread finishes its closure and exits.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::loom::lock;
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::runtime::{context, scheduler};
use crate::task::{JoinHandle, Runnable, Schedule, Task, TaskRef};

/// The default bound of the pool; see the module comment for the reasoning.
pub(crate) fn default_max_threads() -> usize {
    if let Some(n) = std::env::var("WEFT_MAX_BLOCKING_THREADS").ok().and_then(|v| v.parse::<usize>().ok()) {
        if n > 0 {
            return n;
        }
    }
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    (8 * cores).clamp(16, 128)
}
pub(crate) const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Cloneable handle to one runtime's pool.
#[derive(Clone)]
pub(crate) struct BlockingPool {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Idle threads wait here for work or shutdown.
    work: Condvar,
    /// `shutdown` waits here for running threads to exit.
    exited: Condvar,
    max_threads: usize,
    keep_alive: Duration,
}

struct State {
    queue: VecDeque<Runnable<BlockingSchedule>>,
    threads: usize,
    idle: usize,
    /// Wake-ups handed to idle threads and not yet consumed.
    notified: usize,
    shutdown: bool,
}

/// The `Schedule` of blocking tasks. Their future completes in its first poll, so they are
/// never woken, never go idle and never join an owned list.
pub(crate) struct BlockingSchedule;

impl Schedule for BlockingSchedule {
    fn schedule(&self, task: Runnable<Self>) {
        // Never reached: a queued closure is already NOTIFIED (an abort only adds CANCELLED,
        // which the pool thread's poll observes) and a running one completes in that poll, so
        // no wake or abort submits it again. Should that change, cancelling is the safe answer.
        task.shutdown();
    }
    fn release(&self, _task: TaskRef<'_>) -> Option<Task<Self>> {
        None
    }
    fn bind(&self, task: Task<Self>) -> bool {
        drop(task);
        false
    }
}

/// The closure as a future: runs it on its first poll, inside the runtime's context.
struct BlockingTask<F> {
    f: Option<F>,
    handle: scheduler::Handle,
    /// When `spawn_blocking` queued it (for the queue-latency histogram, `runtime/metrics`).
    queued_at: Instant,
}

impl<F> Unpin for BlockingTask<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingTask<F> {
    type Output = R;
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<R> {
        let f = self.f.take().expect("a blocking task is polled once");
        self.handle.metrics().record_blocking_queue_latency(self.queued_at);
        let _enter = context::enter(self.handle.clone());
        // Unconstrained: blocking code may drive leaf futures via `Handle::block_on`.
        let _budget = crate::task::coop::BudgetGuard::new(None);
        Poll::Ready(f())
    }
}

impl BlockingPool {
    pub(crate) fn new(max_threads: usize, keep_alive: Duration) -> BlockingPool {
        BlockingPool {
            inner: Arc::new(Inner {
                state: Mutex::new(State { queue: VecDeque::new(), threads: 0, idle: 0, notified: 0, shutdown: false }),
                work: Condvar::new(),
                exited: Condvar::new(),
                max_threads,
                keep_alive,
            }),
        }
    }

    #[track_caller]
    pub(crate) fn spawn<F, R>(&self, f: F, handle: scheduler::Handle) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let queued_at = Instant::now();
        let task = BlockingTask { f: Some(f), handle, queued_at };
        let (notified, join) = crate::task::new_task(task, BlockingSchedule, crate::task::Id::next());
        let mut state = lock(&self.inner.state);
        if state.shutdown {
            drop(state);
            notified.shutdown();
            return join;
        }
        state.queue.push_back(notified);
        if state.idle > 0 {
            state.idle -= 1;
            state.notified += 1;
            drop(state);
            self.inner.work.notify_one();
        } else if state.threads < self.inner.max_threads {
            state.threads += 1;
            drop(state);
            let inner = self.inner.clone();
            let spawned =
                crate::loom::thread::Builder::new().name("weft-blocking".into()).spawn(move || run_thread(inner));
            if let Err(e) = spawned {
                lock(&self.inner.state).threads -= 1;
                panic!(
                    "weft: could not spawn a blocking-pool thread ({e}); lower the load or raise the OS thread limit"
                );
            }
        }
        // Otherwise all threads are busy: the task waits in the queue for the first free one.
        join
    }

    /// (threads, idle threads, queued closures) now, for the runtime metrics.
    pub(crate) fn metrics_snapshot(&self) -> (usize, usize, usize) {
        let state = lock(&self.inner.state);
        (state.threads, state.idle, state.queue.len())
    }

    /// Closes the pool (steps in the module doc); waits for running closures up to `timeout`
    /// (`None` = for as long as they take).
    pub(crate) fn shutdown(&self, timeout: Option<Duration>) {
        let queued: Vec<_> = {
            let mut state = lock(&self.inner.state);
            if state.shutdown {
                return;
            }
            state.shutdown = true;
            state.queue.drain(..).collect()
        };
        self.inner.work.notify_all();
        for task in queued {
            task.shutdown();
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut state = lock(&self.inner.state);
        while state.threads > 0 {
            match deadline {
                None => state = self.inner.exited.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return; // detach the rest
                    }
                    state = self.inner.exited.wait_timeout(state, d - now).unwrap_or_else(|p| p.into_inner()).0;
                }
            }
        }
    }
}

fn run_thread(inner: Arc<Inner>) {
    let mut state = lock(&inner.state);
    loop {
        if let Some(task) = state.queue.pop_front() {
            drop(state);
            task.run();
            state = lock(&inner.state);
            continue;
        }
        if state.shutdown {
            break;
        }
        state.idle += 1;
        let (s, timeout) = inner.work.wait_timeout(state, inner.keep_alive).unwrap_or_else(|p| p.into_inner());
        state = s;
        if state.notified > 0 {
            state.notified -= 1; // the spawner already took us off `idle`
        } else {
            state.idle -= 1;
            if timeout.timed_out() && state.queue.is_empty() {
                break;
            }
        }
    }
    state.threads -= 1;
    drop(state);
    inner.exited.notify_all();
}
