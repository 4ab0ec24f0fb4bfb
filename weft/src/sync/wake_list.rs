//! A small on-stack batch of wakers, so a primitive can collect the wakers it must wake while
//! holding its lock and call them after releasing it (a waker may run arbitrary code,
//! including code that takes the same lock).

use std::mem::MaybeUninit;
use std::task::Waker;

/// How many wakers one batch holds; a release that must wake more re-locks and continues.
pub(crate) const BATCH: usize = 32;

pub(crate) struct WakeList {
    wakers: [MaybeUninit<Waker>; BATCH],
    len: usize,
}

impl WakeList {
    pub(crate) fn new() -> WakeList {
        WakeList { wakers: [const { MaybeUninit::uninit() }; BATCH], len: 0 }
    }

    pub(crate) fn can_push(&self) -> bool {
        self.len < BATCH
    }

    /// Panics when full (callers check `can_push` first).
    pub(crate) fn push(&mut self, waker: Waker) {
        assert!(self.can_push(), "WakeList overflow");
        self.wakers[self.len].write(waker);
        self.len += 1;
    }

    /// Wakes (and so consumes) every collected waker.
    pub(crate) fn wake_all(&mut self) {
        while self.len > 0 {
            self.len -= 1;
            // SAFETY: slots below `len` are initialised; `len` was decremented first, so this
            // slot is read exactly once and never dropped again.
            let waker = unsafe { self.wakers[self.len].assume_init_read() };
            waker.wake();
        }
    }
}

impl Drop for WakeList {
    fn drop(&mut self) {
        // Wakers that were collected but not woken (a panic in between) are woken now rather
        // than leaked: a missed wake-up is worse than a spurious one.
        self.wake_all();
    }
}
