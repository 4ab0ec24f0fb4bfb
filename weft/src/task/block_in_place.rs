//! `block_in_place`: run blocking code on the current worker thread after handing the worker's
//! core to another thread, so the worker's other tasks keep running (tokio's semantics).
//!
//! Where the call happens decides what it does (the same table as tokio's):
//! * on a multi-thread worker, inside a task: the core (local queue, LIFO slot, parker) goes
//!   to a spare thread (`runtime/scheduler/multi_thread/handoff.rs`), `f` runs here, and the
//!   core is taken back afterwards if no thread picked it up meanwhile; otherwise the rest of
//!   the task's poll runs here without a core and this thread becomes a spare;
//! * inside `block_in_place` already (nested), on a thread outside any runtime, or on a
//!   blocking-pool thread: `f` just runs;
//! * in a multi-thread runtime's `block_on`: `f` runs with the thread marked as outside the
//!   runtime (so it may start and `block_on` another runtime);
//! * on the current-thread flavor or inside a `LocalSet`: panics (blocking there stalls every
//!   task of that scheduler, and there is no other thread to give them to).

use crate::runtime::context;
use crate::runtime::scheduler;

/// Starts with tokio's text, which tokio's own tests match.
const CANNOT_BLOCK: &str = "can call blocking only when running on the multi-threaded runtime";

/// Runs the provided blocking function on the current thread without blocking the
/// executor: on a multi-thread runtime worker, the worker's queued tasks are handed to
/// another thread first. Mirrors `tokio::task::block_in_place`.
///
/// Prefer `spawn_blocking` where the closure can be `'static`; use this when it borrows from
/// the task. The task that calls it does not run anything else until `f` returns (nor do
/// futures it joins with `join!`/`select!`).
///
/// # Panics
/// On a current-thread runtime and inside a `LocalSet` (its tasks cannot move to another
/// thread).
#[track_caller]
pub fn block_in_place<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    if super::local::is_active() {
        panic!(
            "{CANNOT_BLOCK} (weft: `block_in_place` was called inside a `LocalSet`, whose \
             tasks cannot move to another thread; use `spawn_blocking` and await it instead)"
        );
    }
    enum Plan {
        /// Just run `f` (no runtime here, or already inside `block_in_place`).
        Run,
        /// Run `f` marked as outside the runtime (multi-thread `block_on`).
        Exit,
        /// The core was handed off (if `true`): take it back afterwards.
        Worker(bool),
        Refuse,
    }
    let entered = context::is_entered();
    let plan = context::with_scheduler(|cx| match cx {
        Some(scheduler::Context::CurrentThread(_)) => Plan::Refuse,
        Some(scheduler::Context::MultiThread(cx)) if entered => Plan::Worker(cx.hand_off_core()),
        Some(scheduler::Context::MultiThread(_)) => Plan::Run,
        None if !entered => Plan::Run,
        None => match context::try_current() {
            Some(scheduler::Handle::MultiThread(_)) => Plan::Exit,
            _ => Plan::Refuse,
        },
    });
    match plan {
        Plan::Run => f(),
        Plan::Refuse => panic!(
            "{CANNOT_BLOCK} (weft: the current-thread scheduler runs every task on this \
             thread, so blocking it stalls them all; use `spawn_blocking` and await it, or a \
             multi-thread runtime)"
        ),
        Plan::Exit => context::exit_runtime(unconstrained(f)),
        Plan::Worker(took_core) => {
            // Take the core back (or not) even if `f` panics: the task's poll goes on.
            struct Reclaim(bool);
            impl Drop for Reclaim {
                fn drop(&mut self) {
                    if self.0 {
                        context::with_scheduler(|cx| {
                            if let Some(scheduler::Context::MultiThread(cx)) = cx {
                                cx.reclaim_core();
                            }
                        });
                    }
                }
            }
            let _reclaim = Reclaim(took_core);
            context::exit_runtime(unconstrained(f))
        }
    }
}

/// `f` with the cooperative budget lifted (blocking sections are not budgeted, as in tokio),
/// restored afterwards.
fn unconstrained<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    move || {
        let _budget = super::coop::BudgetGuard::new(None);
        f()
    }
}
