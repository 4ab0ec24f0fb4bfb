//! `Handle`: a cloneable reference to a runtime, usable from any thread.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use super::{context, park, scheduler, RuntimeFlavor};
use crate::task::{Id, JoinHandle};

/// A reference to a runtime: spawn onto it, enter it, or block on it from any thread.
#[derive(Clone)]
pub struct Handle {
    pub(crate) inner: scheduler::Handle,
}

/// Returned by [`Handle::enter`]; the previous context is restored when it is dropped.
#[must_use = "the runtime is only entered while the guard is alive"]
pub struct EnterGuard<'a> {
    // Declared first, so dropped first: a `LocalRuntime`'s local context is left before the
    // runtime context it was entered inside.
    _local: Option<crate::task::LocalEnterGuard>,
    _guard: context::EnterGuard,
    _p: PhantomData<&'a Handle>,
}

// SAFETY: an `EnterGuard` has no method taking `&self`; a shared reference to it can do
// nothing on any thread (only dropping it, by value, touches the thread's context). tokio's
// guard is `Sync` and `!Send` too.
unsafe impl Sync for EnterGuard<'_> {}

impl std::fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

impl EnterGuard<'_> {
    /// Also enters `local` (`LocalRuntime::enter`: `spawn_local` then works under the guard).
    pub(crate) fn with_local(mut self, local: crate::task::LocalEnterGuard) -> Self {
        self._local = Some(local);
        self
    }
}

/// [`Handle::try_current`] found no runtime: either none is entered on this thread, or the
/// thread's runtime context was already destroyed (a call from another thread-local's
/// destructor while the thread exits). The two methods tell which, as tokio's do.
#[derive(Debug)]
pub struct TryCurrentError {
    kind: TryCurrentErrorKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TryCurrentErrorKind {
    /// The context is alive and holds no runtime.
    NoContext,
    /// The context thread-local has been destroyed (`LocalKey::try_with` failed).
    ThreadLocalDestroyed,
}

impl TryCurrentError {
    /// True if the call failed because no runtime is entered on this thread.
    pub fn is_missing_context(&self) -> bool {
        self.kind == TryCurrentErrorKind::NoContext
    }

    /// True if the call failed because the runtime context thread-local had already been
    /// destroyed: this happens only in the destructor of another thread-local, while the
    /// thread exits.
    pub fn is_thread_local_destroyed(&self) -> bool {
        self.kind == TryCurrentErrorKind::ThreadLocalDestroyed
    }
}

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            TryCurrentErrorKind::NoContext => {
                f.write_str("there is no weft runtime on this thread (not inside block_on, a task, or Handle::enter)")
            }
            // tokio's text, then weft's explanation (as the missing-runtime panic does).
            TryCurrentErrorKind::ThreadLocalDestroyed => f.write_str(
                "The Tokio context thread-local variable has been destroyed. (weft: the runtime \
                 context of this thread was already dropped; this call ran in a thread-local \
                 destructor while the thread exits)",
            ),
        }
    }
}

impl std::error::Error for TryCurrentError {}

impl Handle {
    /// The current runtime's handle. Panics outside a runtime, saying how to enter one.
    #[track_caller]
    pub fn current() -> Handle {
        Handle { inner: context::current_or_panic("`Handle::current()`") }
    }

    /// The current runtime's handle, or an error saying why there is none (see
    /// [`TryCurrentError`]).
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        match context::try_current_checked() {
            Ok(Some(inner)) => Ok(Handle { inner }),
            Ok(None) => Err(TryCurrentError { kind: TryCurrentErrorKind::NoContext }),
            Err(_destroyed) => Err(TryCurrentError { kind: TryCurrentErrorKind::ThreadLocalDestroyed }),
        }
    }

    /// Makes this runtime current on this thread until the guard is dropped.
    pub fn enter(&self) -> EnterGuard<'_> {
        EnterGuard { _local: None, _guard: context::enter(self.inner.clone()), _p: PhantomData }
    }

    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // On one of our own workers, the local fast path applies.
        let local = context::with_scheduler(|cx| match (cx, &self.inner) {
            (Some(scheduler::Context::MultiThread(cx)), scheduler::Handle::MultiThread(h))
                if crate::loom::sync::Arc::ptr_eq(&cx.handle, h) =>
            {
                Some(())
            }
            _ => None,
        });
        match local {
            Some(()) => context::spawn(future),
            None => self.inner.spawn(future, Id::next()),
        }
    }

    /// Runs a blocking closure on this runtime's blocking pool (see `task::spawn_blocking`).
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, func: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.inner.spawn_blocking(func)
    }

    /// Runs `future` to completion on this thread. Panics inside a runtime.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        match &self.inner {
            scheduler::Handle::CurrentThread(h) => scheduler::current_thread::Handle::block_on(h, future),
            scheduler::Handle::MultiThread(h) => {
                let _runtime = context::enter_runtime("Runtime::block_on");
                let _enter = context::enter(self.inner.clone());
                // This thread frees task cells into its own cache (joins, drops): each time its
                // future waits, and when it returns, is its idle point for the task arena's
                // trim, as parking is a worker's (`task/arena.rs`; a few relaxed loads).
                let idle = |leaving| {
                    if h.common.arena.as_ref().is_some_and(|a| a.on_idle(leaving)) {
                        h.unpark_others(usize::MAX);
                    }
                };
                let mut future = std::pin::pin!(future);
                let out = park::block_on(std::future::poll_fn(|cx| {
                    let poll = future.as_mut().poll(cx);
                    if poll.is_pending() {
                        idle(false);
                    }
                    poll
                }));
                idle(true);
                out
            }
        }
    }

    /// This runtime's id, unique among the runtimes currently alive.
    pub fn id(&self) -> super::Id {
        let addr = match &self.inner {
            scheduler::Handle::CurrentThread(h) => &**h as *const _ as usize,
            scheduler::Handle::MultiThread(h) => &**h as *const _ as usize,
        };
        super::Id::from_addr(addr)
    }

    /// The name given with `Builder::name`, if any.
    pub fn name(&self) -> Option<&str> {
        self.inner.config().name.as_deref()
    }

    pub fn runtime_flavor(&self) -> RuntimeFlavor {
        match self.inner {
            scheduler::Handle::CurrentThread(_) => RuntimeFlavor::CurrentThread,
            scheduler::Handle::MultiThread(_) => RuntimeFlavor::MultiThread,
        }
    }

    /// The runtime's metrics (tokio's `Handle::metrics`; every metric stable in weft).
    pub fn metrics(&self) -> super::RuntimeMetrics {
        super::RuntimeMetrics::new(self.inner.clone())
    }

    /// weft only: the runtime's live tasks with their id, spawn location, state, age, poll
    /// count and poll time (tokio's closest is the unstable `Handle::dump`, which needs
    /// `--cfg tokio_unstable` and task tracing). Tasks still waiting for, or inside, their first poll are not listed (see
    /// `runtime/metrics/dump.rs`). Takes each owned-list shard lock briefly.
    pub fn dump_tasks(&self) -> Vec<super::TaskInfo> {
        match &self.inner {
            scheduler::Handle::CurrentThread(h) => h.common.owned.dump(h.common.metrics.config.poll_time_histogram),
            scheduler::Handle::MultiThread(h) => h.common.owned.dump(h.common.metrics.config.poll_time_histogram),
        }
    }

    /// Number of worker threads (1 for the current-thread flavor).
    pub fn num_workers(&self) -> usize {
        self.inner.num_workers()
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").field("flavor", &self.runtime_flavor()).finish()
    }
}
