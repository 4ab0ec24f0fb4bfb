//! The typed half of the task: polling, completing, cancelling and freeing one task.
//!
//! Each function here is instantiated per (future, scheduler) pair and reached through the
//! task's `Vtable`. The state transitions (`state.rs`) decide who does what; this file only
//! carries out the decision. A `Harness` stands for the reference the vtable function was
//! handed: its consuming methods (`poll`, `complete`, `release`, `dealloc`) give that
//! reference back, and it lends `TaskRef`s to the scheduler instead of fake owners. Panics from user code (poll, drop of the future, drop of the
//! output, a join waker) are caught here, so a panicking task never unwinds into a worker.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use super::core::{Cell, Core, Header, Stage, Trailer};
use super::raw::{Task, TaskRef, Vtable};
use super::state::{TransitionToIdle, TransitionToRunning};
use super::stats::TaskStats;
use super::{waker, JoinError, Runnable, Schedule};

pub(super) fn vtable<T: Future + 'static, S: Schedule>() -> &'static Vtable {
    &Vtable {
        poll: poll::<T, S>,
        schedule: schedule::<T, S>,
        dealloc: dealloc::<T, S>,
        try_read_output: try_read_output::<T, S>,
        drop_join_handle_slow: drop_join_handle_slow::<T, S>,
        shutdown: shutdown::<T, S>,
        stats: stats::<T, S>,
    }
}

/// Drops a task's future if its `poll` unwinds, while the panic is still in flight, as tokio
/// does: the future's destructor runs with `thread::panicking()` true and inside the task's
/// context, rather than later from `store_output`. (A destructor that panics again then
/// aborts the process, as it would under tokio.) `mem::forget` disarms it after a normal poll.
struct DropFutureOnUnwind<'a, T: Future, S>(&'a Core<T, S>);

impl<T: Future, S> Drop for DropFutureOnUnwind<'_, T, S> {
    fn drop(&mut self) {
        // SAFETY: the guard lives only inside `poll`, whose caller holds RUNNING (exclusive
        // access to the stage); the `with_mut` borrow of the stage ended when `poll` unwound
        // out of it.
        unsafe { self.0.set_stage(Stage::Consumed) }
    }
}

struct Harness<T: Future, S: 'static> {
    cell: NonNull<Cell<T, S>>,
}

impl<T: Future + 'static, S: Schedule> Harness<T, S> {
    /// # Safety
    /// `ptr` is the header of a `Cell<T, S>` that stays allocated while the harness is used:
    /// the caller holds a reference (handed over to the harness for the vtable functions that
    /// consume one, lent for `try_read_output`).
    unsafe fn from_raw(ptr: NonNull<Header>) -> Self {
        Harness { cell: ptr.cast() }
    }

    fn cell(&self) -> &Cell<T, S> {
        // SAFETY: `Harness::from_raw`'s contract: a live `Cell<T, S>` while the harness is used.
        unsafe { self.cell.as_ref() }
    }

    fn header(&self) -> &Header {
        &self.cell().header
    }

    fn core(&self) -> &Core<T, S> {
        &self.cell().core
    }

    fn trailer(&self) -> &Trailer {
        &self.cell().trailer
    }

    /// A view of the task, for the scheduler hooks that only look at it.
    fn task(&self) -> TaskRef<'_> {
        // SAFETY: the harness's reference keeps the cell allocated while `self` is borrowed.
        unsafe { TaskRef::from_raw(self.cell.cast()) }
    }

    /// A new owned-list reference (for `Schedule::bind`).
    fn new_task(&self) -> Task<S> {
        self.header().state.ref_inc();
        // SAFETY: `ref_inc` just took the reference the `Task` stands for, and the cell is a
        // `Cell<T, S>` (`Harness::from_raw`), so `S` is its scheduler type.
        unsafe { Task::from_raw(self.cell.cast()) }
    }

    /// Turns the harness's reference into a `Runnable` (scheduler type `S`).
    fn into_runnable(self) -> Runnable<S> {
        // SAFETY: the harness's reference passes to the `Runnable` (the harness is consumed),
        // and the cell is a `Cell<T, S>`.
        unsafe { Runnable::from_raw(self.cell.cast()) }
    }

    /// With the schedule-latency histogram on, records that the task is being submitted now
    /// (the caller is its only submitter: it won the transition to `NOTIFIED`).
    fn stamp_scheduled(&self) {
        let stats = &self.trailer().stats;
        if stats.times_schedules() {
            stats.mark_scheduled();
        }
    }

    /// Gives back the harness's reference, freeing the task if it was the last.
    fn release(self) {
        if self.header().state.ref_dec() {
            self.dealloc();
        }
    }

    fn poll(self) {
        match self.header().state.transition_to_running() {
            TransitionToRunning::Success => {
                let stats = &self.trailer().stats;
                // One read of the statistics word: counts the poll and says whether this task is
                // timed. Untimed (the default) costs a load, a test and a store here; the single
                // `poll_future` call site below keeps it inlined.
                let mut started = None;
                if stats.count_poll() {
                    if let Some(latency) = stats.take_schedule_latency() {
                        self.core().scheduler.record_schedule_latency(latency);
                    }
                    if stats.times_polls() {
                        started = Some(std::time::Instant::now());
                    }
                }
                let done = self.poll_future();
                if let Some(started) = started {
                    let took = started.elapsed();
                    stats.add_poll_time(took);
                    super::stats::set_last_poll(took);
                }
                if done {
                    self.complete();
                    return;
                }
                if !self.header().is_bound() {
                    // First time idle: join the owned list so shutdown can reach us.
                    self.trailer().stats.mark_bound();
                    if !self.core().scheduler.bind(self.new_task()) {
                        // The scheduler is shutting down: we hold RUNNING, cancel ourselves.
                        self.cancel_future();
                        self.complete();
                        return;
                    }
                }
                match self.header().state.transition_to_idle() {
                    TransitionToIdle::Ok => {}
                    TransitionToIdle::OkNotified => {
                        self.stamp_scheduled();
                        // The poller's reference now belongs to a new Runnable.
                        let scheduler: *const S = &self.core().scheduler;
                        let runnable = self.into_runnable();
                        // SAFETY: the `Runnable` keeps the cell, and the scheduler handle
                        // inside it, allocated until `yield_now` hands it on; `Schedule`
                        // implementations do not use `&self` after that (see the trait).
                        unsafe { &*scheduler }.yield_now(runnable);
                    }
                    TransitionToIdle::OkDealloc => self.dealloc(),
                    TransitionToIdle::Cancelled => {
                        self.cancel_future();
                        self.complete();
                    }
                }
            }
            TransitionToRunning::Cancelled => {
                self.cancel_future();
                self.complete();
            }
            TransitionToRunning::Failed => {}
            TransitionToRunning::Dealloc => self.dealloc(),
        }
    }

    /// Polls the future under `RUNNING`; on `Ready` (or panic) stores the output and returns
    /// true. (Forcing it inline into `poll` makes every poll dearer, not cheaper: left to the
    /// compiler.)
    fn poll_future(&self) -> bool {
        let header = self.header();
        let waker = waker::waker_ref(self.task());
        let mut cx = Context::from_waker(&waker);
        let core = self.core();
        let id = header.id();
        let res = catch_unwind(AssertUnwindSafe(|| {
            let _guard = crate::runtime::context::TaskGuard::enter(id);
            let _silence = super::panic_hook::SilenceGuard::new(core.scheduler.silence_panics());
            let drop_on_unwind = DropFutureOnUnwind(core);
            // SAFETY: we hold RUNNING, which grants exclusive access to the stage; the cell
            // never moves until dealloc, so pinning the future in place is sound.
            let poll = core.stage.with_mut(|ptr| unsafe {
                let future = match &mut *ptr {
                    Stage::Running(fut) => std::pin::Pin::new_unchecked(fut),
                    _ => unreachable!("polling a task whose future is gone"),
                };
                future.poll(&mut cx)
            });
            std::mem::forget(drop_on_unwind);
            poll
        }));
        let out = match res {
            Ok(Poll::Pending) => return false,
            Ok(Poll::Ready(v)) => Ok(v),
            Err(payload) => Err(JoinError::panic(id, payload)),
        };
        self.store_output(out);
        true
    }

    /// Drops the future or output in the stage, with the task's id current so that their
    /// destructors can call `task::id()` (as under tokio).
    ///
    /// # Safety
    /// As `Core::set_stage`: the caller holds `RUNNING`, or owns the stage after `COMPLETE`.
    unsafe fn consume_stage(&self) {
        let _id = crate::runtime::context::TaskIdGuard::enter(self.header().id());
        // SAFETY: this function's `# Safety` is `set_stage`'s.
        unsafe { self.core().set_stage(Stage::Consumed) }
    }

    /// Replaces the stage (dropping the future) with the output; a panicking future drop is
    /// recorded as the task's panic.
    fn store_output(&self, out: Result<T::Output, JoinError>) {
        let core = self.core();
        let dropped = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: we hold RUNNING, which grants exclusive access to the stage.
            unsafe { self.consume_stage() }
        }));
        let out = match dropped {
            Ok(()) => out,
            Err(payload) => Err(JoinError::panic(self.header().id(), payload)),
        };
        // SAFETY: we hold RUNNING, which grants exclusive access to the stage.
        unsafe { core.set_stage(Stage::Finished(out)) };
    }

    /// Drops the future of a cancelled task and records the cancellation.
    fn cancel_future(&self) {
        self.store_output(Err(JoinError::cancelled(self.header().id())));
    }

    /// `RUNNING` → `COMPLETE`: notify the joiner, leave the owned list, release references.
    fn complete(self) {
        self.core().scheduler.task_terminated();
        if S::COMPLETES_FAST && !self.header().is_bound() && self.header().state.try_complete_fast() {
            // Never bound, a JoinHandle waits without a waker: nothing else to do. Our reference
            // is gone with that RMW, so the cell (scheduler included) is not touched again.
            return;
        }
        let snapshot = self.header().state.transition_to_complete();
        let _ = catch_unwind(AssertUnwindSafe(|| {
            if !snapshot.is_join_interested() {
                // Nobody will read the output.
                // SAFETY: COMPLETE is set and JOIN_INTEREST is clear, so no JoinHandle will
                // touch the stage again: the completer is its only user.
                unsafe { self.consume_stage() };
            } else if snapshot.is_join_waker_set() {
                // JOIN_WAKER set: the slot is ours until we clear it.
                self.trailer().waker.with(|ptr| {
                    // SAFETY: JOIN_WAKER grants the task side read access to the slot.
                    if let Some(w) = unsafe { &*ptr } {
                        w.wake_by_ref();
                    }
                });
                let next = self.header().state.unset_waker_after_complete();
                if !next.is_join_interested() {
                    // The JoinHandle was dropped meanwhile; the waker is ours to drop.
                    // SAFETY: JOIN_INTEREST and JOIN_WAKER both clear: no one else touches it.
                    self.trailer().waker.with_mut(|ptr| unsafe { *ptr = None });
                }
            }
        }));
        let released = self.core().scheduler.release(self.task());
        let count = match released {
            Some(task) => {
                // The owned list's reference is released together with ours.
                let _ = task.into_raw();
                2
            }
            None => 1,
        };
        if self.header().state.transition_to_terminal(count) {
            self.dealloc();
        }
    }

    /// Drops the cell's contents and gives its memory back. The scheduler handle is moved out
    /// first and dropped last: it keeps the arena the memory goes back to alive. A panic from a
    /// user destructor (the future or output, the join waker) must not unwind into the runtime.
    fn dealloc(self) {
        let cell = self.cell.as_ptr();
        // SAFETY: the reference count reached zero, so no other pointer to the cell is used
        // again; each field is read out or dropped in place exactly once below, and the memory
        // is then freed by `free_cell`, which matches `raw::allocate`'s `alloc_cell`.
        unsafe {
            let scheduler = std::ptr::read(&(*cell).core.scheduler);
            let _ = catch_unwind(AssertUnwindSafe(|| std::ptr::drop_in_place(&mut (*cell).core.stage)));
            let _ = catch_unwind(AssertUnwindSafe(|| std::ptr::drop_in_place(&mut (*cell).trailer)));
            std::ptr::drop_in_place(&mut (*cell).header);
            super::raw::free_cell::<T, S>(&scheduler, self.cell);
            let _ = catch_unwind(AssertUnwindSafe(move || drop(scheduler)));
        }
    }

    /// JoinHandle side: may the output be read? If not, leaves `waker` to be woken.
    fn can_read_output(&self, waker: &Waker) -> bool {
        let state = &self.header().state;
        let snapshot = state.load();
        if snapshot.is_complete() {
            return true;
        }
        let trailer = self.trailer();
        let res = if !snapshot.is_join_waker_set() {
            // SAFETY: JOIN_WAKER clear: the JoinHandle owns the slot.
            trailer.waker.with_mut(|ptr| unsafe { *ptr = Some(waker.clone()) });
            state.set_join_waker()
        } else {
            // SAFETY: JOIN_WAKER set: the task side may read the slot, so can we (shared).
            let same = trailer.waker.with(|ptr| unsafe { (*ptr).as_ref().is_some_and(|w| w.will_wake(waker)) });
            if same {
                return false;
            }
            match state.unset_join_waker() {
                Ok(_) => {
                    // SAFETY: JOIN_WAKER clear again: the slot is ours.
                    trailer.waker.with_mut(|ptr| unsafe { *ptr = Some(waker.clone()) });
                    state.set_join_waker()
                }
                Err(s) => Err(s),
            }
        };
        match res {
            Ok(_) => false,
            Err(s) => {
                debug_assert!(s.is_complete());
                true
            }
        }
    }
}

/// # Safety
/// `ptr` is the header of a `Cell<T, S>`, and the caller gives up one reference it owns (a
/// `Runnable`'s), which this consumes.
unsafe fn poll<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: this function's `# Safety`: a `Cell<T, S>` kept alive by the reference the
    // harness now stands for.
    unsafe { Harness::<T, S>::from_raw(ptr) }.poll();
}

/// # Safety
/// `ptr` is the header of a `Cell<T, S>`, and the caller gives up one reference it owns,
/// which becomes the submitted `Runnable`'s.
unsafe fn schedule<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: this function's `# Safety`: a `Cell<T, S>` kept alive by the reference the
    // harness now stands for.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    harness.stamp_scheduled();
    let scheduler: *const S = &harness.core().scheduler;
    let runnable = harness.into_runnable();
    // SAFETY: the `Runnable` keeps the cell, and the scheduler handle inside it, allocated
    // until `schedule` hands it on; `Schedule` implementations do not use `&self` after that
    // (see the trait).
    unsafe { &*scheduler }.schedule(runnable);
}

/// # Safety
/// `ptr` is the header of a `Cell<T, S>` whose reference count has reached zero: no owner
/// or view of it is used again.
unsafe fn dealloc<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: this function's `# Safety`: a `Cell<T, S>`, still allocated (freeing it is
    // what the harness does next).
    unsafe { Harness::<T, S>::from_raw(ptr) }.dealloc();
}

/// # Safety
/// `ptr` is the header of a `Cell<T, S>` and the caller is its only `JoinHandle`, holding
/// its reference across the call; `dst` points at a `Poll<Result<T::Output, JoinError>>`.
unsafe fn try_read_output<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>, dst: *mut (), waker: &Waker) {
    // SAFETY: this function's `# Safety`: a `Cell<T, S>` kept alive by the JoinHandle's
    // reference (lent, not consumed: the harness is not released here).
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    if harness.can_read_output(waker) {
        // SAFETY: COMPLETE observed (Acquire) by the only JoinHandle: the output is ours.
        let out = unsafe { harness.core().take_output() };
        // SAFETY: `dst`'s type is this function's `# Safety` condition.
        unsafe { *(dst as *mut Poll<Result<T::Output, JoinError>>) = Poll::Ready(out) };
    }
}

/// # Safety
/// `ptr` is the header of a `Cell<T, S>`, and the caller is its `JoinHandle`, giving up the
/// handle's reference (the output was not read).
unsafe fn drop_join_handle_slow<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: this function's `# Safety`: a `Cell<T, S>` kept alive by the JoinHandle's
    // reference, which the harness now stands for.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    let (complete, owns_waker) = harness.header().state.transition_to_join_handle_dropped();
    if complete {
        // The task finished before the handle went away: dropping the output is our job.
        // SAFETY: COMPLETE and we were the join handle: exclusive access to the stage.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { harness.consume_stage() }));
    }
    if owns_waker {
        // SAFETY: we cleared JOIN_WAKER before completion: the slot is ours.
        harness.trailer().waker.with_mut(|ptr| unsafe { *ptr = None });
    }
    harness.release();
}

/// # Safety
/// `ptr` is the header of a `Cell<T, S>`, and the caller gives up one reference it owns (the
/// owned list's `Task`, or a `Runnable` drained from a run queue).
unsafe fn shutdown<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: this function's `# Safety`: a `Cell<T, S>` kept alive by the reference the
    // harness now stands for.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    if harness.header().state.transition_to_shutdown() {
        // We took RUNNING; the harness's reference is the one `complete` releases.
        harness.cancel_future();
        harness.complete();
    } else {
        // Running or finished elsewhere: that thread cancels it; give our reference back.
        harness.release();
    }
}

/// # Safety
/// `ptr` is the header of a `Cell<T, S>` that the caller keeps allocated (it holds or borrows
/// a reference) for as long as it uses the returned pointer.
unsafe fn stats<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) -> NonNull<TaskStats> {
    // SAFETY: this function's `# Safety`: a live `Cell<T, S>`; the harness is only borrowed
    // to find the trailer, no reference is taken or given up.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    NonNull::from(&harness.trailer().stats)
}
