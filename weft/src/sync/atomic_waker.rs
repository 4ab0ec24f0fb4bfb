//! `AtomicWaker`: one waker slot that a single registrant (a channel's receiver, a oneshot's
//! side) fills and any thread may wake, without a lock.
//!
//! ```text
//! state: WAITING = 0b00 (idle), REGISTERING = 0b01 (the registrant is writing the slot),
//!        WAKING = 0b10 (a waker is taking the slot)
//! ```
//! The registrant writes the slot only after moving `WAITING → REGISTERING`; a waker takes it
//! only after setting `WAKING` over `WAITING`. If a wake arrives while the registrant is
//! writing, the registrant sees `WAKING` when it tries to return to `WAITING` and wakes the new
//! waker itself; if registration arrives while a wake is taking the slot, the registrant wakes
//! its own waker at once. Either way a `wake` that happens after `register` started is never
//! lost, which is the one guarantee the channels build on: register, then re-check the queue.

use std::task::Waker;

use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::UnsafeCell;

const WAITING: usize = 0b00;
const REGISTERING: usize = 0b01;
const WAKING: usize = 0b10;

pub(crate) struct AtomicWaker {
    state: AtomicUsize,
    waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the slot is touched only by the holder of REGISTERING or WAKING (see the module
// comment), which the state word grants to one thread at a time; `Waker` is `Send + Sync`.
unsafe impl Send for AtomicWaker {}
// SAFETY: shared use goes through the state word, which grants the slot to one REGISTERING or
// WAKING thread at a time; `Waker` is `Send + Sync`.
unsafe impl Sync for AtomicWaker {}

impl AtomicWaker {
    pub(crate) fn new() -> AtomicWaker {
        AtomicWaker { state: AtomicUsize::new(WAITING), waker: UnsafeCell::new(None) }
    }

    /// Stores `waker` to be woken by the next `wake`. Only one thread may register at a time
    /// (the owner of the receiving side).
    pub(crate) fn register(&self, waker: &Waker) {
        // Acquire pairs with the Release that ended the last REGISTERING or WAKING section, so
        // the slot write below follows every earlier access to it.
        match self.state.compare_exchange(WAITING, REGISTERING, AcqRel, Acquire) {
            Ok(_) => {
                // SAFETY: REGISTERING gives this thread the slot.
                unsafe {
                    self.waker.with_mut(|w| match &mut *w {
                        Some(old) if old.will_wake(waker) => {}
                        slot => *slot = Some(waker.clone()),
                    })
                };
                // AcqRel: Release publishes the slot to the next waker; on failure a waker set
                // WAKING meanwhile and left the slot to us.
                if let Err(actual) = self.state.compare_exchange(REGISTERING, WAITING, AcqRel, Acquire) {
                    debug_assert_eq!(actual, REGISTERING | WAKING);
                    // SAFETY: we still hold REGISTERING; the waker that set WAKING did not
                    // touch the slot (it saw REGISTERING).
                    let waker = unsafe { self.waker.with_mut(|w| (*w).take()) };
                    self.state.swap(WAITING, AcqRel);
                    if let Some(w) = waker {
                        w.wake();
                    }
                }
            }
            Err(WAKING) => {
                // A wake is in progress and may already have taken the old waker: wake
                // ourselves so the caller re-checks. The spin hint (a yield under loom) lets
                // the waking thread finish first.
                crate::loom::spin_loop();
                waker.wake_by_ref();
            }
            Err(_) => {
                // REGISTERING (| WAKING): a concurrent register, which the owner never does.
                debug_assert!(false, "AtomicWaker registered concurrently");
            }
        }
    }

    /// Takes the registered waker (if any) and wakes it.
    pub(crate) fn wake(&self) {
        if let Some(w) = self.take() {
            w.wake();
        }
    }

    /// Takes the registered waker, if any and if no registration is in progress (in which case
    /// the registrant will see WAKING and wake itself).
    pub(crate) fn take(&self) -> Option<Waker> {
        // AcqRel: Acquire pairs with the registrant's Release (the slot's contents).
        match self.state.fetch_or(WAKING, AcqRel) {
            WAITING => {
                // SAFETY: we moved WAITING → WAKING, which gives us the slot.
                let waker = unsafe { self.waker.with_mut(|w| (*w).take()) };
                self.state.fetch_and(!WAKING, Release);
                waker
            }
            _ => None,
        }
    }
}
