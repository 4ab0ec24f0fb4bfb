//! `LocalRuntime`: a current-thread runtime that is `!Send` and runs `!Send` tasks directly.
//!
//! Built as a current-thread [`Runtime`] plus a [`LocalSet`] that every `block_on` runs: the
//! scheduler needs no change, `task::spawn_local` works anywhere inside `block_on`, and
//! `LocalRuntime::spawn_local` queues on the same set. Like tokio's, local tasks only make
//! progress while some `block_on` on this runtime is running.

use std::fmt;
use std::future::Future;
use std::io;
use std::marker::PhantomData;
use std::time::Duration;

use super::{Builder, EnterGuard, Handle, Runtime};
use crate::task::{JoinHandle, LocalSet};

/// Options for [`Builder::build_local`]; none yet (as in tokio). `!Send` and `!Sync`.
#[derive(Default, Debug)]
#[non_exhaustive]
pub struct LocalOptions {
    _not_send: PhantomData<*mut u8>,
}

/// A current-thread runtime bound to the thread that built it; see the module comment.
pub struct LocalRuntime {
    // Declared first: the local tasks are dropped while the runtime (their I/O, timers) lives.
    local: LocalSet,
    rt: Runtime,
    _not_send: PhantomData<*mut u8>,
}

// As `Runtime` (and tokio's `LocalRuntime`): a panic caught around `block_on` leaves the runtime
// usable, since every task's panic is already caught into its `JoinError`.
impl std::panic::UnwindSafe for LocalRuntime {}
impl std::panic::RefUnwindSafe for LocalRuntime {}

impl LocalRuntime {
    /// A local runtime with every driver enabled (`Builder::new_current_thread().enable_all()`).
    pub fn new() -> io::Result<LocalRuntime> {
        Builder::new_current_thread().enable_all().build_local(LocalOptions::default())
    }

    pub(crate) fn from_runtime(rt: Runtime) -> LocalRuntime {
        if let crate::runtime::scheduler::Handle::CurrentThread(h) = &rt.handle().inner {
            h.is_local_runtime.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        LocalRuntime { local: LocalSet::new(), rt, _not_send: PhantomData }
    }

    pub fn handle(&self) -> &Handle {
        self.rt.handle()
    }

    /// Spawns a `!Send` task; it runs during this runtime's `block_on` calls.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.local.spawn_local(future)
    }

    /// Runs `func` on the blocking pool.
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, func: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let _enter = self.rt.enter();
        crate::task::spawn_blocking(func)
    }

    /// Runs `future` to completion on this thread, running the local tasks meanwhile; inside
    /// it, `task::spawn_local` works without a `LocalSet`.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.local.block_on(&self.rt, future)
    }

    /// Enters the runtime and its `LocalSet`: under the guard, `spawn_local` queues onto this
    /// runtime's local tasks (they run in the next `block_on`), as in tokio.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.rt.enter().with_local(self.local.enter())
    }

    pub fn shutdown_timeout(self, timeout: Duration) {
        let LocalRuntime { local, rt, .. } = self;
        drop(local);
        rt.shutdown_timeout(timeout);
    }

    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    pub fn metrics(&self) -> super::RuntimeMetrics {
        self.rt.handle().metrics()
    }
}

impl fmt::Debug for LocalRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalRuntime").finish_non_exhaustive()
    }
}
