//! The typed half of the task: polling, completing, cancelling and freeing one task.
//!
//! Each function here is instantiated per (future, scheduler) pair and reached through the
//! task's `Vtable`. The state transitions (`state.rs`) decide who does what; this file only
//! carries out the decision. Panics from user code (poll, drop of the future, drop of the
//! output, a join waker) are caught here, so a panicking task never unwinds into a worker.

use std::future::Future;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use super::core::{Cell, Core, Header, Stage, Trailer};
use super::raw::{RawTask, Task, Vtable};
use super::state::{TransitionToIdle, TransitionToRunning};
use super::{waker, JoinError, Notified, Schedule};

pub(super) fn vtable<T: Future + 'static, S: Schedule>() -> &'static Vtable {
    &Vtable {
        poll: poll::<T, S>,
        schedule: schedule::<T, S>,
        dealloc: dealloc::<T, S>,
        try_read_output: try_read_output::<T, S>,
        drop_join_handle_slow: drop_join_handle_slow::<T, S>,
        shutdown: shutdown::<T, S>,
    }
}

struct Harness<T: Future, S: 'static> {
    cell: NonNull<Cell<T, S>>,
}

impl<T: Future + 'static, S: Schedule> Harness<T, S> {
    /// # Safety
    /// `ptr` is the header of a live `Cell<T, S>`.
    unsafe fn from_raw(ptr: NonNull<Header>) -> Self {
        Harness { cell: ptr.cast() }
    }

    fn header(&self) -> &Header {
        // SAFETY: the cell is live while a harness exists (the caller holds a reference).
        unsafe { &self.cell.as_ref().header }
    }

    fn core(&self) -> &Core<T, S> {
        // SAFETY: as above.
        unsafe { &self.cell.as_ref().core }
    }

    fn trailer(&self) -> &Trailer {
        // SAFETY: as above.
        unsafe { &self.cell.as_ref().trailer }
    }

    fn raw(&self) -> RawTask {
        // SAFETY: the header pointer of a live task.
        unsafe { RawTask::from_raw(self.cell.cast()) }
    }

    fn poll(self) {
        match self.header().state.transition_to_running() {
            TransitionToRunning::Success => {
                if self.poll_future() {
                    self.complete();
                    return;
                }
                if !self.header().is_bound() {
                    // First time idle: join the owned list so shutdown can reach us.
                    // SAFETY: a view of our own reference, only used to take a new one.
                    let me = ManuallyDrop::new(unsafe { Task::<S>::from_raw(self.cell.cast()) });
                    if !self.core().scheduler.bind(me.clone_ref()) {
                        // The scheduler is shutting down: we hold RUNNING, cancel ourselves.
                        self.cancel_future();
                        self.complete();
                        return;
                    }
                }
                match self.header().state.transition_to_idle() {
                    TransitionToIdle::Ok => {}
                    TransitionToIdle::OkNotified => {
                        // SAFETY: the poller's reference now belongs to this Notified.
                        let task = unsafe { Task::from_raw(self.cell.cast()) };
                        self.core().scheduler.yield_now(Notified(task));
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
    /// true.
    fn poll_future(&self) -> bool {
        let header = self.header();
        let waker = ManuallyDrop::new(waker::borrowed_waker(self.cell.cast()));
        let mut cx = Context::from_waker(&waker);
        let core = self.core();
        let id = header.id();
        let res = catch_unwind(AssertUnwindSafe(|| {
            let _guard = crate::runtime::context::TaskGuard::enter(id);
            let _silence = super::panic_hook::SilenceGuard::new(core.scheduler.silence_panics());
            // SAFETY: we hold RUNNING, which grants exclusive access to the stage; the cell
            // never moves until dealloc, so pinning the future in place is sound.
            core.stage.with_mut(|ptr| unsafe {
                let future = match &mut *ptr {
                    Stage::Running(fut) => std::pin::Pin::new_unchecked(fut),
                    _ => unreachable!("polling a task whose future is gone"),
                };
                future.poll(&mut cx)
            })
        }));
        let out = match res {
            Ok(Poll::Pending) => return false,
            Ok(Poll::Ready(v)) => Ok(v),
            Err(payload) => Err(JoinError::panic(id, payload)),
        };
        self.store_output(out);
        true
    }

    /// Replaces the stage (dropping the future) with the output; a panicking future drop is
    /// recorded as the task's panic.
    fn store_output(&self, out: Result<T::Output, JoinError>) {
        let core = self.core();
        let dropped = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: we hold RUNNING.
            unsafe { core.set_stage(Stage::Consumed) }
        }));
        let out = match dropped {
            Ok(()) => out,
            Err(payload) => Err(JoinError::panic(self.header().id(), payload)),
        };
        // SAFETY: we hold RUNNING.
        unsafe { core.set_stage(Stage::Finished(out)) };
    }

    /// Drops the future of a cancelled task and records the cancellation.
    fn cancel_future(&self) {
        self.store_output(Err(JoinError::cancelled(self.header().id())));
    }

    /// `RUNNING` → `COMPLETE`: notify the joiner, leave the owned list, release references.
    fn complete(self) {
        self.core().scheduler.task_terminated();
        if !self.header().is_bound() && self.header().state.try_complete_fast() {
            // Never bound, a JoinHandle waits without a waker: nothing else to do.
            return;
        }
        let snapshot = self.header().state.transition_to_complete();
        let _ = catch_unwind(AssertUnwindSafe(|| {
            if !snapshot.is_join_interested() {
                // Nobody will read the output; COMPLETE without JOIN_INTEREST makes us its
                // only owner.
                // SAFETY: exclusive access per the line above.
                unsafe { self.core().set_stage(Stage::Consumed) };
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
        // SAFETY: a view of the task for the owned list; not an owned reference (forgotten).
        let me = ManuallyDrop::new(unsafe { Task::<S>::from_raw(self.cell.cast()) });
        let released = self.core().scheduler.release(&me);
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

    fn dealloc(self) {
        // SAFETY: the reference count reached zero, so no other pointer to the cell is used
        // again; the cell was allocated by `Box` in `Cell::new`.
        let cell = unsafe { Box::from_raw(self.cell.as_ptr()) };
        // Dropping the cell drops the scheduler handle, any unread output and the join waker;
        // a panic from a user destructor must not unwind into the runtime.
        let _ = catch_unwind(AssertUnwindSafe(move || drop(cell)));
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

unsafe fn poll<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: the vtable is only reachable from a Cell<T, S>.
    unsafe { Harness::<T, S>::from_raw(ptr) }.poll();
}

unsafe fn schedule<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: as above; the caller's reference becomes the Notified's.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    // SAFETY: forwarded reference.
    let task = unsafe { Task::from_raw(ptr) };
    harness.core().scheduler.schedule(Notified(task));
}

unsafe fn dealloc<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: as above.
    unsafe { Harness::<T, S>::from_raw(ptr) }.dealloc();
}

unsafe fn try_read_output<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>, dst: *mut (), waker: &Waker) {
    // SAFETY: as above.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    if harness.can_read_output(waker) {
        // SAFETY: COMPLETE observed (Acquire) by the only JoinHandle: the output is ours.
        let out = unsafe { harness.core().take_output() };
        // SAFETY: the caller passes a pointer to a Poll of this output type.
        unsafe { *(dst as *mut Poll<Result<T::Output, JoinError>>) = Poll::Ready(out) };
    }
}

unsafe fn drop_join_handle_slow<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: as above.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    let (complete, owns_waker) = harness.header().state.transition_to_join_handle_dropped();
    if complete {
        // The task finished before the handle went away: dropping the output is our job.
        // SAFETY: COMPLETE and we were the join handle: exclusive access to the stage.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe { harness.core().set_stage(Stage::Consumed) }));
    }
    if owns_waker {
        // SAFETY: we cleared JOIN_WAKER before completion: the slot is ours.
        harness.trailer().waker.with_mut(|ptr| unsafe { *ptr = None });
    }
    harness.raw().drop_reference();
}

unsafe fn shutdown<T: Future + 'static, S: Schedule>(ptr: NonNull<Header>) {
    // SAFETY: as above.
    let harness = unsafe { Harness::<T, S>::from_raw(ptr) };
    if harness.header().state.transition_to_shutdown() {
        // We took RUNNING with the owned list's reference: cancel and complete.
        harness.cancel_future();
        harness.complete();
    } else {
        // Running or finished elsewhere: that thread cancels it; release the list's reference.
        harness.raw().drop_reference();
    }
}
