//! Task wakers: a `RawWaker` whose data pointer is the task header.
//!
//! Each `Waker` owns one task reference: `clone` takes one, `drop` releases one, `wake`
//! consumes its own (turning it into the `Notified` it submits when the task was idle).
//! Wakers are `Send + Sync` and work from any thread, including after the runtime is gone:
//! the scheduler handle inside the task keeps the scheduler's shared state alive, and a
//! scheduler that has shut down drops the submitted `Notified` instead of queueing it.

use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

use super::core::Header;
use super::raw::RawTask;
use super::state::{TransitionToNotifiedByRef, TransitionToNotifiedByVal};

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// A waker for the task that does *not* own a reference: the caller must wrap it in
/// `ManuallyDrop` and keep a reference to the task alive while it is in use (the poller does).
pub(super) fn borrowed_waker(header: NonNull<Header>) -> Waker {
    // SAFETY: the vtable upholds RawWaker's contract for header pointers of live tasks.
    unsafe { Waker::from_raw(RawWaker::new(header.as_ptr() as *const (), &VTABLE)) }
}

fn raw(ptr: *const ()) -> RawTask {
    // SAFETY: the data pointer of our wakers is always the header of a live task (the waker
    // owns, or borrows from the poller, a reference).
    unsafe { RawTask::from_raw(NonNull::new_unchecked(ptr as *mut Header)) }
}

unsafe fn clone(ptr: *const ()) -> RawWaker {
    raw(ptr).state().ref_inc();
    RawWaker::new(ptr, &VTABLE)
}

unsafe fn wake(ptr: *const ()) {
    let task = raw(ptr);
    match task.state().transition_to_notified_by_val() {
        TransitionToNotifiedByVal::Submit => task.schedule(),
        TransitionToNotifiedByVal::DoNothing => {}
        TransitionToNotifiedByVal::Dealloc => task.dealloc(),
    }
}

unsafe fn wake_by_ref(ptr: *const ()) {
    let task = raw(ptr);
    match task.state().transition_to_notified_by_ref() {
        TransitionToNotifiedByRef::Submit => task.schedule(),
        TransitionToNotifiedByRef::DoNothing => {}
    }
}

unsafe fn drop_waker(ptr: *const ()) {
    raw(ptr).drop_reference();
}
