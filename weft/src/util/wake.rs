//! `Waker`s backed by a facade `Arc` (so they also run under loom, whose `Arc` is not std's
//! and therefore cannot use `std::task::Wake`).

use std::mem::ManuallyDrop;
use std::task::{RawWaker, RawWakerVTable, Waker};

use crate::loom::sync::Arc;

pub(crate) trait Wake: Send + Sync + Sized + 'static {
    fn wake_by_ref(arc: &Arc<Self>);

    fn wake(arc: Arc<Self>) {
        Self::wake_by_ref(&arc);
    }
}

/// A waker owning one strong count of `arc`.
pub(crate) fn waker<W: Wake>(arc: Arc<W>) -> Waker {
    let ptr = Arc::into_raw(arc) as *const ();
    // SAFETY: the vtable below treats `ptr` as an `Arc<W>` raw pointer with one strong count
    // owned by the waker, which is what `into_raw` gave us.
    unsafe { Waker::from_raw(RawWaker::new(ptr, vtable::<W>())) }
}

fn vtable<W: Wake>() -> &'static RawWakerVTable {
    &RawWakerVTable::new(clone::<W>, wake::<W>, wake_by_ref::<W>, drop_waker::<W>)
}

/// # Safety
/// `ptr` is the data pointer of a waker made by `waker::<W>`: an `Arc<W>` raw pointer whose
/// strong count the waker being cloned owns.
unsafe fn clone<W: Wake>(ptr: *const ()) -> RawWaker {
    // SAFETY: `clone`'s `# Safety`: a live `Arc<W>` raw pointer (the waker owns a count).
    unsafe { Arc::increment_strong_count(ptr as *const W) };
    RawWaker::new(ptr, vtable::<W>())
}

/// # Safety
/// `ptr` is the data pointer of a waker made by `waker::<W>` that is being consumed: its
/// strong count passes to this call.
unsafe fn wake<W: Wake>(ptr: *const ()) {
    // SAFETY: `wake`'s `# Safety`: the consumed waker's count moves into this `Arc`, which
    // `W::wake` consumes.
    let arc = unsafe { Arc::from_raw(ptr as *const W) };
    W::wake(arc);
}

/// # Safety
/// `ptr` is the data pointer of a live waker made by `waker::<W>` (which keeps its count).
unsafe fn wake_by_ref<W: Wake>(ptr: *const ()) {
    // SAFETY: `wake_by_ref`'s `# Safety`: a live `Arc<W>` raw pointer; `ManuallyDrop` borrows
    // the waker's count without releasing it.
    let arc = ManuallyDrop::new(unsafe { Arc::from_raw(ptr as *const W) });
    W::wake_by_ref(&arc);
}

/// # Safety
/// `ptr` is the data pointer of a waker made by `waker::<W>` that is being dropped: its
/// strong count passes to this call.
unsafe fn drop_waker<W: Wake>(ptr: *const ()) {
    // SAFETY: `drop_waker`'s `# Safety`: releases the count the dropped waker owned.
    unsafe { Arc::decrement_strong_count(ptr as *const W) };
}
