//! Per-thread runtime context: which runtime this thread is in, and on which worker.
//!
//! * `handle` — the runtime entered with `Handle::enter` / `block_on` / a worker thread;
//!   `weft::spawn`, `sleep` and `Handle::current` read it.
//! * `scheduler` — a pointer to the running scheduler's per-thread context (a worker's core,
//!   or the current-thread core inside `block_on`); when set, spawns go straight to the local
//!   run queue. Always consistent with `handle`: `Handle::enter` clears it.
//! * `entered` — true inside `block_on` or on a worker: a nested `block_on` would deadlock, so
//!   it panics instead.
//! * `task_id` — the task being polled (for `task::id()`).

use std::cell::{Cell, RefCell};
use std::future::Future;

use super::scheduler;
use crate::task::{Id, JoinHandle};

struct Context {
    handle: RefCell<Option<scheduler::Handle>>,
    scheduler: Cell<Option<*const scheduler::Context>>,
    entered: Cell<bool>,
    task_id: Cell<Option<Id>>,
    /// Live `EnterGuard`s on this thread; each guard remembers its level so dropping them
    /// out of order is caught (it would restore the wrong runtime).
    enter_depth: Cell<usize>,
}

thread_local! {
    static CONTEXT: Context = const {
        Context {
            handle: RefCell::new(None),
            scheduler: Cell::new(None),
            entered: Cell::new(false),
            task_id: Cell::new(None),
            enter_depth: Cell::new(0),
        }
    };
}

/// Starts with tokio's exact text (tokio's tests match it as a substring), then says how to fix it.
const NO_RUNTIME: &str = "there is no reactor running, must be called from the context of a Tokio \
1.x runtime (weft: there is no weft runtime on this thread; call this from inside \
`Runtime::block_on`, from a task spawned on a runtime, under `#[weft::main]`/`#[weft::test]`, \
or after `let _guard = runtime.enter();`)";

/// Spawns on the current runtime: the local worker's queue when on a worker.
#[track_caller]
pub(crate) fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let id = Id::next();
    // The spawn itself happens outside the `try_with` closure, so that `#[track_caller]`
    // carries the user's location down to `new_task` (closures do not forward it).
    enum Target {
        Scheduler(*const scheduler::Context),
        Handle(scheduler::Handle),
    }
    let target = CONTEXT.try_with(|c| match c.scheduler.get() {
        Some(sched) => Some(Target::Scheduler(sched)),
        None => c.handle.borrow().clone().map(Target::Handle),
    });
    match target {
        Ok(Some(Target::Scheduler(sched))) => {
            // SAFETY: the pointer is set by a scheduler for the duration of its run loop on
            // this thread (`SchedulerGuard`) and cleared before that context is dropped; we
            // are on this thread, inside that run loop (it is what called us).
            unsafe { &*sched }.spawn(future, id)
        }
        Ok(Some(Target::Handle(handle))) => handle.spawn(future, id),
        _ => panic!("{NO_RUNTIME}; failed call: `weft::spawn`"),
    }
}

/// The current runtime's handle, if any.
pub(crate) fn try_current() -> Option<scheduler::Handle> {
    try_current_checked().ok().flatten()
}

/// The current runtime's handle, if any; `Err` once this thread's context has been destroyed
/// (a call from another thread-local's destructor), which `Handle::try_current` reports apart.
pub(crate) fn try_current_checked() -> Result<Option<scheduler::Handle>, std::thread::AccessError> {
    CONTEXT.try_with(|c| c.handle.borrow().clone())
}

/// The current runtime's task arena, if this thread is in a runtime that has one (what an
/// `ArenaArc` made here allocates from).
pub(crate) fn current_arena() -> Option<crate::task::arena::TaskArena> {
    CONTEXT.try_with(|c| c.handle.borrow().as_ref().and_then(|h| h.task_arena().cloned())).ok().flatten()
}

/// The current runtime's handle, or a panic naming `what` and how to enter a runtime.
#[track_caller]
pub(crate) fn current_or_panic(what: &str) -> scheduler::Handle {
    match try_current() {
        Some(h) => h,
        None => panic!("{NO_RUNTIME}; failed call: {what}"),
    }
}

/// Inline always: it is a thread-local read around `f`, on every wake's path (`schedule_task`),
/// and LLVM's choice flips with unrelated changes elsewhere (out of line, it costs every
/// `ping_pong` hop of `weft-lab actors --workers 1`).
#[inline(always)]
pub(crate) fn with_scheduler<R>(f: impl FnOnce(Option<&scheduler::Context>) -> R) -> R {
    let ptr = CONTEXT.try_with(|c| c.scheduler.get()).ok().flatten();
    // SAFETY: a non-null `scheduler` pointer was set by `SchedulerGuard::enter`, whose contract
    // keeps the context valid until the guard drops, and the guard's drop restores the
    // previous pointer. The guard belongs to a run loop further up this thread's stack (it is
    // what called us), so it outlives this call, and the borrow does not escape `f`.
    f(ptr.map(|p| unsafe { &*p }))
}

pub(crate) fn current_task_id() -> Option<Id> {
    CONTEXT.try_with(|c| c.task_id.get()).ok().flatten()
}

/// Makes `handle` the current runtime for this thread until dropped.
pub(crate) struct EnterGuard {
    prev_handle: Option<scheduler::Handle>,
    prev_scheduler: Option<*const scheduler::Context>,
    depth: usize,
}

/// Outside the thread-local's lifetime (a `Runtime` dropped from another thread-local's
/// destructor shuts down through here) the guard is inert: depth 0, nothing to restore.
pub(crate) fn enter(handle: scheduler::Handle) -> EnterGuard {
    CONTEXT
        .try_with(|c| {
            let depth = c.enter_depth.get() + 1;
            c.enter_depth.set(depth);
            EnterGuard { prev_handle: c.handle.replace(Some(handle)), prev_scheduler: c.scheduler.replace(None), depth }
        })
        .unwrap_or(EnterGuard { prev_handle: None, prev_scheduler: None, depth: 0 })
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        if self.depth == 0 {
            return; // inert: made while the thread-local was being destroyed
        }
        let in_order = CONTEXT
            .try_with(|c| {
                *c.handle.borrow_mut() = self.prev_handle.take();
                c.scheduler.set(self.prev_scheduler);
                let in_order = c.enter_depth.get() == self.depth;
                c.enter_depth.set(self.depth - 1);
                in_order
            })
            .unwrap_or(true);
        if !in_order && !std::thread::panicking() {
            panic!(
                "`EnterGuard` values dropped out of order. Guards returned by \
                 `Handle::enter()` / `Runtime::enter()` must be dropped in the reverse order \
                 as they were acquired."
            );
        }
    }
}

/// Marks the thread as running a scheduler's loop (worker, or `block_on` holding the core).
pub(crate) struct SchedulerGuard {
    prev: Option<*const scheduler::Context>,
}

impl SchedulerGuard {
    /// # Safety
    /// `cx` must stay valid until the guard is dropped.
    pub(crate) unsafe fn enter(cx: *const scheduler::Context) -> SchedulerGuard {
        SchedulerGuard { prev: CONTEXT.with(|c| c.scheduler.replace(Some(cx))) }
    }
}

impl Drop for SchedulerGuard {
    fn drop(&mut self) {
        let _ = CONTEXT.try_with(|c| c.scheduler.set(self.prev));
    }
}

/// Marks the thread as inside a runtime (`block_on` or a worker) until dropped.
pub(crate) struct RuntimeGuard {
    _p: (),
}

/// Enters "runtime" mode, or panics if the thread is already in a runtime.
#[track_caller]
pub(crate) fn enter_runtime(what: &str) -> RuntimeGuard {
    let already = CONTEXT.with(|c| c.entered.replace(true));
    if already {
        panic!(
            "{what}: cannot start a runtime from within a runtime. This happens when \
             `block_on` is called from an async context (a task, or another `block_on`), \
             which would block the thread that drives the outer runtime. Await the future \
             instead, or run the blocking code with `spawn_blocking` or on a plain thread."
        );
    }
    RuntimeGuard { _p: () }
}

impl Drop for RuntimeGuard {
    fn drop(&mut self) {
        let _ = CONTEXT.try_with(|c| c.entered.set(false));
    }
}

/// Runs `f` with the thread marked as *not* inside a runtime (`block_in_place`: the closure
/// may block, and may even start and `block_on` another runtime), restoring the mark after,
/// also on unwind.
pub(crate) fn exit_runtime<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = CONTEXT.try_with(|c| c.entered.set(self.0));
        }
    }
    let _reset = Reset(CONTEXT.try_with(|c| c.entered.replace(false)).unwrap_or(false));
    f()
}

/// True inside `block_on` or on a worker thread (where blocking the thread would stall the
/// runtime); the `blocking_*` methods of `weft::sync` panic there.
pub(crate) fn is_entered() -> bool {
    CONTEXT.try_with(|c| c.entered.get()).unwrap_or(false)
}

/// Set while a task is being polled: its id, and a fresh coop budget.
pub(crate) struct TaskGuard {
    _id: TaskIdGuard,
    _budget: crate::task::coop::BudgetGuard,
}

impl TaskGuard {
    #[inline]
    pub(crate) fn enter(id: Id) -> TaskGuard {
        TaskGuard {
            _id: TaskIdGuard::enter(id),
            _budget: crate::task::coop::BudgetGuard::new(Some(crate::task::coop::BUDGET)),
        }
    }
}

/// Makes `id` the current task id (no coop budget): part of `TaskGuard` for a poll, and alone
/// while a task's future or output is dropped outside a poll (completion, cancellation, or by
/// its `JoinHandle`).
pub(crate) struct TaskIdGuard {
    prev_id: Option<Id>,
}

impl TaskIdGuard {
    #[inline]
    pub(crate) fn enter(id: Id) -> TaskIdGuard {
        TaskIdGuard { prev_id: CONTEXT.try_with(|c| c.task_id.replace(Some(id))).ok().flatten() }
    }
}

impl Drop for TaskIdGuard {
    fn drop(&mut self) {
        let _ = CONTEXT.try_with(|c| c.task_id.set(self.prev_id));
    }
}
