//! Tasks: the unit of work the schedulers run.
//!
//! # Glossary
//! * **task** — one spawned future in one heap cell (`core.rs`), plus its state word
//!   (`state.rs`). A task is polled by at most one thread at a time (`RUNNING`).
//! * **scheduler** (`S: Schedule`) — the run-queue owner the task is submitted to when woken:
//!   the multi-thread or current-thread runtime, or a `LocalSet`.
//! * **reference** — the state word counts the owning pointers: the owned-task list (`Task`),
//!   a run queue entry (`Runnable`), the `JoinHandle`, each `AbortHandle` and each `Waker`.
//!
//! # Life of a task
//! 1. `spawn` allocates the cell with two references (`Runnable`, `JoinHandle`) and pushes the
//!    `Runnable` on a run queue.
//! 2. A worker pops the `Runnable` and calls `run`: `NOTIFIED → RUNNING`, poll the future.
//!    `Pending` → idle (`RUNNING` cleared); the *first* time, the task is bound to the
//!    scheduler's `OwnedTasks` (lazy binding, below). A wake while idle sets `NOTIFIED` and
//!    submits a new `Runnable`; a wake while running sets `NOTIFIED` and the poller
//!    re-submits it.
//! 3. `Ready` (or a panic, or cancellation) → the output goes into the stage, `COMPLETE` is
//!    set, the join waker is woken, the task leaves the owned list, references are released.
//! 4. The last reference to go frees the cell (`harness::dealloc`).
//!
//! # Safety by scenario
//! * *Future access*: only under `RUNNING`, which one CAS grants to one thread.
//! * *Output access*: the completing thread writes it before setting `COMPLETE` (Release);
//!   the `JoinHandle` reads it after observing `COMPLETE` (Acquire), or drops it when the
//!   handle is dropped after completion; without `JOIN_INTEREST` the completer drops it.
//! * *Join waker*: handed back and forth with `JOIN_WAKER` (see `state.rs`).
//! * *Freeing*: the reference count; the scheduler handle `S` inside the cell keeps the
//!   scheduler's shared state alive as long as any task (or waker of a task) exists, so a
//!   wake after the runtime is gone reaches a closed scheduler, which drops the `Runnable`.
//! * *Lazy binding*: a task that completes in its first poll (most short tasks) never touches
//!   the owned list, whose shard lock is the most expensive part of a spawn. This is sound
//!   because until its first `Pending` a task is always either in a run queue or being
//!   polled, and wakers only ever submit tasks that have been polled (hence bound).
//! * *Shutdown*: `OwnedTasks::close_and_shutdown_all` cancels every bound task: an idle task
//!   is cancelled by the shutting-down thread (it claims `RUNNING`), a running one by its
//!   poller when it goes idle (binding fails on a closed list, so a first-time idler cancels
//!   itself). The run queues are then drained with `Runnable::shutdown`, which cancels the
//!   never-polled tasks still queued. Every future is therefore dropped exactly once, on a
//!   runtime thread (or, for a spawn refused by a closed runtime, on the spawning thread).
//!
//! # Files
//! `state` (the word), `core` (cell layout), `raw` (vtable, reference types), `harness`
//! (typed poll/complete/cancel), `waker`, `join`, `abort`, `error`, `id`, `list` (owned
//! tasks), `stats` (per-task poll count, poll time, age), `coop` (budget), `yield_now`,
//! `join_set`, `local` (LocalSet, spawn_local), `block_in_place`, `arena` (the runtime's cell
//! memory).

mod abort;
pub(crate) mod arena;
pub(crate) mod arena_arc;
mod block_in_place;
pub mod coop;
pub(crate) mod core;
mod error;
mod harness;
mod id;
mod join;
pub mod join_set;
pub(crate) mod list;
mod local;
pub(crate) mod panic_hook;
pub(crate) mod raw;
mod state;
pub(crate) mod stats;
mod task_local;
mod waker;
mod yield_now;

#[cfg(all(test, loom))]
mod loom_tests;

pub use abort::AbortHandle;
pub use block_in_place::block_in_place;
pub use coop::{consume_budget, unconstrained, Unconstrained};
pub use error::JoinError;
pub use id::Id;
pub use join::JoinHandle;
pub use join_set::JoinSet;
pub use local::{spawn_local, LocalEnterGuard, LocalSet};
pub use task_local::{AccessError, LocalKey};

/// Task-related futures, at tokio's path (`tokio::task::futures::TaskLocalFuture`).
pub mod futures {
    pub use super::task_local::TaskLocalFuture;
}
pub use yield_now::yield_now;

pub(crate) use list::OwnedTasks;
pub(crate) use raw::{Runnable, Task, TaskRef};

use std::future::Future;

/// The scheduler side of a task: where it goes when woken, and how it leaves the owned list.
///
/// The scheduler handle lives inside the task cell, so `schedule` and `yield_now` are called
/// on a `&self` that the submitted `Runnable` keeps alive: an implementation hands the task on
/// last and does not touch `&self` afterwards (another thread may run the task to completion
/// and free the cell at once). Dereferencing an `Arc` handle before the hand-off, as every
/// implementation here does, satisfies this.
pub(crate) trait Schedule: Sync + Sized + 'static {
    /// Submit a task woken by a waker or an abort (any thread).
    fn schedule(&self, task: Runnable<Self>);

    /// Submit a task that was woken while it was being polled (it yielded): it should go to
    /// the back of the queue, behind the tasks it yielded to.
    fn yield_now(&self, task: Runnable<Self>) {
        self.schedule(task);
    }

    /// The task completed: remove it from the owned list, returning the list's reference.
    fn release(&self, task: TaskRef<'_>) -> Option<Task<Self>>;

    /// The task is going idle for the first time: add it to the owned list (which takes the
    /// given reference). False if the list is closed; the caller then cancels the task.
    fn bind(&self, task: Task<Self>) -> bool;

    /// The runtime's task arena, if it has one: cells whose layout it serves are carved from
    /// it (`arena.rs`), others come from the global allocator. Must return the same arena for
    /// every call on one scheduler value (a cell is freed where it was allocated).
    fn arena(&self) -> Option<&arena::TaskArena> {
        None
    }

    /// The task reached its end (completed, panicked or cancelled); called once per task,
    /// for the runtime metrics' live-task count.
    fn task_terminated(&self) {}

    /// Whether a task that completes with an unpolled `JoinHandle` may take the fast path
    /// (`State::try_complete_fast`), which releases the completer's reference in the same RMW
    /// and calls no scheduler hook after it: once COMPLETE is visible the `JoinHandle` may free
    /// the cell, scheduler included. A scheduler that must act after completion (`release`)
    /// returns false and always gets its `release` call, made while the reference is held.
    const COMPLETES_FAST: bool = true;

    /// Whether polls are timed for the per-task statistics (`stats.rs`): true only when the
    /// runtime times polls anyway (the poll-time histogram is on). Asked once, at spawn.
    fn time_polls(&self) -> bool {
        false
    }

    /// Whether wake → poll latencies are measured (the schedule-latency histogram is on).
    /// Asked once, at spawn.
    fn time_schedules(&self) -> bool {
        false
    }

    /// A task woken `latency` ago starts its poll now (on the calling thread).
    fn record_schedule_latency(&self, _latency: std::time::Duration) {}

    /// Whether panics in this scheduler's tasks skip the process panic hook.
    fn silence_panics(&self) -> bool {
        false
    }
}

/// Allocates a task and returns its two references. The caller's location (through the
/// `#[track_caller]` spawn functions) is recorded as the task's spawn location.
#[track_caller]
pub(crate) fn new_task<T, S>(future: T, scheduler: S, id: Id) -> (Runnable<S>, JoinHandle<T::Output>)
where
    T: Future + 'static,
    S: Schedule,
{
    let (runnable, join) = raw::allocate(future, scheduler, id, std::panic::Location::caller());
    (runnable, JoinHandle::new(join))
}

/// Spawns a future onto the current runtime (see [`crate::spawn`]).
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    crate::runtime::context::spawn(future)
}

/// Runs a blocking closure on the runtime's blocking pool (plain threads: up to the cores on
/// demand, more only while they block, capped by `Builder::max_blocking_threads`) and returns
/// a handle to its result.
/// Use it for work that would stall a worker: DNS, file I/O, long CPU loops, foreign blocking
/// calls. Panics outside a runtime, saying how to enter one.
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let handle = crate::runtime::context::current_or_panic("`weft::task::spawn_blocking`");
    handle.spawn_blocking(f)
}

/// The id of the task currently being polled on this thread, if any.
pub fn try_id() -> Option<Id> {
    crate::runtime::context::current_task_id()
}

/// The id of the task currently being polled. Panics outside a task.
#[track_caller]
pub fn id() -> Id {
    try_id().expect("`weft::task::id()` called outside a task; use `try_id()` to check")
}
