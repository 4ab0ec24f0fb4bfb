//! Task wakers: a `RawWaker` whose data pointer is the task header.
//!
//! Each `Waker` owns one task reference: its data pointer is an `OwnedRef` turned into a raw
//! pointer (`OwnedRef::into_raw`), and each vtable function turns it back into the matching
//! view or owner: `clone` takes a new reference, `drop` releases one, `wake` consumes its own
//! (turning it into the `Runnable` it submits when the task was idle). Wakers are
//! `Send + Sync` and work from any thread, including after the runtime is gone: the scheduler
//! handle inside the task keeps the scheduler's shared state alive, and a scheduler that has
//! shut down drops the submitted `Runnable` instead of queueing it.
//!
//! The poller lends a waker that owns nothing (`waker_ref`): a `WakerRef<'a>` borrows the
//! poller's `TaskRef<'a>` and never runs the waker's `drop`, so it cannot release a reference
//! it does not hold; cloning it (what a future does to keep it) takes a real one.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::ptr::NonNull;
use std::task::{RawWaker, RawWakerVTable, Waker};

use super::core::Header;
use super::raw::{OwnedRef, TaskRef};

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// A waker borrowed for the duration of a poll: owns no reference, and is never dropped as a
/// `Waker` (so it releases none).
pub(super) struct WakerRef<'a> {
    waker: ManuallyDrop<Waker>,
    _p: PhantomData<TaskRef<'a>>,
}

impl Deref for WakerRef<'_> {
    type Target = Waker;
    fn deref(&self) -> &Waker {
        &self.waker
    }
}

/// A waker for `task` that borrows the caller's reference instead of owning one.
pub(super) fn waker_ref(task: TaskRef<'_>) -> WakerRef<'_> {
    let raw = RawWaker::new(task.header_ptr().as_ptr() as *const (), &VTABLE);
    // SAFETY: the vtable's functions treat the data pointer as the header of a task that the
    // waker keeps allocated: `task` does so for the `WakerRef`'s lifetime, and `ManuallyDrop`
    // keeps `drop_waker` from releasing the reference this waker does not own.
    let waker = ManuallyDrop::new(unsafe { Waker::from_raw(raw) });
    WakerRef { waker, _p: PhantomData }
}

fn header(ptr: *const ()) -> NonNull<Header> {
    NonNull::new(ptr as *mut Header).expect("task waker with a null data pointer")
}

/// # Safety
/// `ptr` is the data pointer of one of our wakers: the header of a task that the waker being
/// cloned keeps allocated (it owns a reference, or borrows the poller's).
unsafe fn clone(ptr: *const ()) -> RawWaker {
    // SAFETY: this function's `# Safety`: the task is allocated for the duration of the call.
    let task = unsafe { TaskRef::from_raw(header(ptr)) };
    let owned = task.new_ref();
    RawWaker::new(owned.into_raw().as_ptr() as *const (), &VTABLE)
}

/// # Safety
/// `ptr` is the data pointer of an owned waker (from `clone`) being consumed: its reference
/// passes to this call.
unsafe fn wake(ptr: *const ()) {
    // SAFETY: this function's `# Safety`: the consumed waker's reference becomes this owner's.
    unsafe { OwnedRef::from_raw(header(ptr)) }.wake();
}

/// # Safety
/// As for `clone`: the waker (owned or borrowed) keeps the task allocated during the call.
unsafe fn wake_by_ref(ptr: *const ()) {
    // SAFETY: this function's `# Safety`: the task is allocated for the duration of the call.
    unsafe { TaskRef::from_raw(header(ptr)) }.wake_by_ref();
}

/// # Safety
/// `ptr` is the data pointer of an owned waker (from `clone`) being dropped: its reference
/// passes to this call. (A `WakerRef` never gets here: it is `ManuallyDrop`.)
unsafe fn drop_waker(ptr: *const ()) {
    // SAFETY: this function's `# Safety`: the dropped waker's reference becomes this owner's,
    // which releases it.
    drop(unsafe { OwnedRef::from_raw(header(ptr)) });
}
