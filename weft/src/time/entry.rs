//! `TimerShared`: the part of a `Sleep` that the wheel links, pinned inside the `Sleep`.
//!
//! Field ownership:
//! * `links`, `position`, `when`, `waker` — only under the time driver's lock (the wheel's).
//!   `when` is the tick the wheel filed the entry under.
//! * `state` — atomic: the entry's deadline tick while armed, `FIRED` once fired. The driver
//!   sets `FIRED` (under the lock) after unlinking the entry and taking its waker; after that
//!   store the driver never touches the entry again, so a `Sleep` that observes `FIRED`
//!   (Acquire) may be dropped without taking the lock.
//!
//! Moving a deadline later needs no lock (`extend`): the owning `Sleep` raises `state` with a
//! compare-and-swap and leaves the entry where the wheel filed it. When that earlier tick comes
//! due, the driver reads `state` and files the entry again under its new deadline instead of
//! firing it (`fire_unless_extended`). The two sides meet on the one word: a deadline moved
//! before the driver's swap to `FIRED` is seen by it; one moved after fails (the `Sleep` then
//! re-registers under the lock). An idle timeout pushed back on every read costs one CAS per
//! push, as in tokio, instead of two wheel-lock round trips.

use std::marker::PhantomPinned;
use std::ptr::NonNull;
use std::task::Waker;

use crate::loom::sync::atomic::{AtomicU64, Ordering::*};
use crate::loom::UnsafeCell;

/// `state` of a fired entry.
const FIRED: u64 = u64::MAX;

pub(crate) struct TimerShared {
    prev: UnsafeCell<Option<NonNull<TimerShared>>>,
    next: UnsafeCell<Option<NonNull<TimerShared>>>,
    /// (level, slot) while linked in the wheel.
    position: UnsafeCell<Option<(u8, u8)>>,
    /// Deadline tick.
    when: UnsafeCell<u64>,
    waker: UnsafeCell<Option<Waker>>,
    /// The armed deadline tick, `FIRED`, or 0 before the first registration.
    state: AtomicU64,
    _pin: PhantomPinned,
}

// SAFETY: all non-atomic fields are only accessed under the driver lock (see module comment).
unsafe impl Send for TimerShared {}
// SAFETY: shared use touches the non-atomic fields only under the driver lock (module comment);
// `state` is atomic.
unsafe impl Sync for TimerShared {}

impl TimerShared {
    pub(crate) fn new() -> TimerShared {
        TimerShared {
            prev: UnsafeCell::new(None),
            next: UnsafeCell::new(None),
            position: UnsafeCell::new(None),
            when: UnsafeCell::new(0),
            waker: UnsafeCell::new(None),
            state: AtomicU64::new(0),
            _pin: PhantomPinned,
        }
    }

    pub(crate) fn is_fired(&self) -> bool {
        // Acquire: pairs with the Release stores in `mark_fired` / `fire_unless_extended`.
        self.state.load(Acquire) == FIRED
    }

    /// Arms the entry for `tick` before the wheel links it. Caller holds the driver lock.
    pub(crate) fn arm(&self, tick: u64) {
        self.state.store(tick.min(FIRED - 1), Release);
    }

    /// Disarms an entry the driver is done with (fired, or deregistered) for `Sleep::reset`.
    pub(crate) fn disarm(&self) {
        self.state.store(0, Relaxed);
    }

    /// Moves an armed entry's deadline to the later `tick` without the driver lock; false if
    /// the entry has fired or `tick` is earlier than its deadline (the caller re-registers).
    /// Only the `Sleep` that owns the entry calls this, and only while it is registered.
    pub(crate) fn extend(&self, tick: u64) -> bool {
        let tick = tick.min(FIRED - 1);
        let mut cur = self.state.load(Acquire);
        loop {
            if cur == FIRED || tick < cur {
                return false;
            }
            if tick == cur {
                return true;
            }
            // A failure means the driver fired it meanwhile (the only other writer).
            match self.state.compare_exchange(cur, tick, AcqRel, Acquire) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Fires an unlinked entry whose filed tick is due at `now`: takes its waker and marks it
    /// fired, unless its owner moved the deadline past `now` (`extend`), in which case the
    /// entry is left armed and its new deadline returned for the wheel to file it again.
    ///
    /// # Safety
    /// The caller holds the driver lock and the entry is unlinked.
    pub(crate) unsafe fn fire_unless_extended(&self, now: u64) -> Result<Option<Waker>, u64> {
        let mut cur = self.state.load(Acquire);
        loop {
            if cur != FIRED && cur > now {
                return Err(cur);
            }
            // SAFETY: `fire_unless_extended`'s `# Safety`: the driver lock guards `waker`.
            let waker = self.waker.with_mut(|w| unsafe { (*w).take() });
            // Release: the waker is taken before the owner may see FIRED and free the entry.
            match self.state.compare_exchange(cur, FIRED, Release, Acquire) {
                Ok(_) => return Ok(waker),
                Err(moved) => {
                    // The owner extended it between our load and swap: put the waker back.
                    // SAFETY: `fire_unless_extended`'s `# Safety`: we hold the driver lock,
                    // which guards `waker` (the owner only moves `state`, never the waker,
                    // without it).
                    self.waker.with_mut(|w| unsafe { *w = waker });
                    cur = moved;
                }
            }
        }
    }

    /// Takes the waker and marks the entry fired whatever its deadline (a registration found
    /// already due, shutdown); the last driver access to the entry.
    ///
    /// # Safety
    /// The caller holds the driver lock and the entry is unlinked.
    pub(crate) unsafe fn mark_fired(&self) -> Option<Waker> {
        // SAFETY: `mark_fired`'s `# Safety`: the caller holds the driver lock, which guards this field.
        let waker = self.waker.with_mut(|w| unsafe { (*w).take() });
        self.state.store(FIRED, Release);
        waker
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn set_waker(&self, waker: &Waker) {
        // SAFETY: `set_waker`'s `# Safety`: the caller holds the driver lock, which guards this field.
        self.waker.with_mut(|w| unsafe {
            match &mut *w {
                Some(old) if old.will_wake(waker) => {}
                slot => *slot = Some(waker.clone()),
            }
        });
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn take_waker(&self) -> Option<Waker> {
        // SAFETY: `take_waker`'s `# Safety`: the caller holds the driver lock, which guards this field.
        self.waker.with_mut(|w| unsafe { (*w).take() })
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn when(&self) -> u64 {
        // SAFETY: `when`'s `# Safety`: the caller holds the driver lock, which guards this field.
        self.when.with(|w| unsafe { *w })
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn position(&self) -> Option<(u8, u8)> {
        // SAFETY: `position`'s `# Safety`: the caller holds the driver lock, which guards this field.
        self.position.with(|p| unsafe { *p })
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn set_position(&self, when: u64, level: u8, slot: u8) {
        // SAFETY: `set_position`'s `# Safety`: the caller holds the driver lock, which guards this field.
        unsafe {
            self.when.with_mut(|w| *w = when);
            self.position.with_mut(|p| *p = Some((level, slot)));
        }
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn clear_position(&self) {
        // SAFETY: `clear_position`'s `# Safety`: the caller holds the driver lock, which guards this field.
        unsafe {
            self.position.with_mut(|p| *p = None);
            self.prev.with_mut(|p| *p = None);
            self.next.with_mut(|p| *p = None);
        }
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn links(&self) -> (Option<NonNull<TimerShared>>, Option<NonNull<TimerShared>>) {
        // SAFETY: `links`'s `# Safety`: the caller holds the driver lock, which guards this field.
        unsafe { (self.prev.with(|p| *p), self.next.with(|p| *p)) }
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn set_links(&self, prev: Option<NonNull<TimerShared>>, next: Option<NonNull<TimerShared>>) {
        // SAFETY: `set_links`'s `# Safety`: the caller holds the driver lock, which guards this field.
        unsafe {
            self.prev.with_mut(|p| *p = prev);
            self.next.with_mut(|p| *p = next);
        }
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn set_prev(&self, prev: Option<NonNull<TimerShared>>) {
        // SAFETY: `set_prev`'s `# Safety`: the caller holds the driver lock, which guards this field.
        self.prev.with_mut(|p| unsafe { *p = prev });
    }

    /// # Safety
    /// The caller holds the driver lock.
    pub(crate) unsafe fn set_next(&self, next: Option<NonNull<TimerShared>>) {
        // SAFETY: `set_next`'s `# Safety`: the caller holds the driver lock, which guards this field.
        self.next.with_mut(|p| unsafe { *p = next });
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use std::task::Waker;

    use super::TimerShared;
    use crate::loom::sync::{Arc, Mutex};
    use crate::loom::{lock, thread};

    /// The driver firing a due entry (under its lock) races the entry's owner moving the
    /// deadline past "now" (no lock): either the extension lands first and the driver files
    /// the entry again with its waker still in place, or the driver fires it and the
    /// extension fails (the owner then re-registers). Never both, never neither.
    #[test]
    fn loom_extend_races_fire() {
        loom::model(|| {
            let entry = Arc::new(TimerShared::new());
            let driver_lock = Arc::new(Mutex::new(()));
            {
                let _g = lock(&driver_lock);
                entry.arm(10);
                // SAFETY: `driver_lock` stands in for the driver lock, under which alone the
                // waker cell is touched, and `_g` holds it.
                unsafe { entry.set_waker(Waker::noop()) };
            }
            let driver = {
                let (entry, driver_lock) = (entry.clone(), driver_lock.clone());
                thread::spawn(move || {
                    let _g = lock(&driver_lock);
                    // SAFETY: `_g` holds `driver_lock`, the stand-in for the driver lock, under
                    // which alone the waker cell is touched; the entry is not linked in any wheel.
                    unsafe { entry.fire_unless_extended(15) }.map(|w| w.is_some())
                })
            };
            let extended = entry.extend(20);
            let fired = driver.join().unwrap();
            let _g = lock(&driver_lock);
            match (extended, fired) {
                (true, Err(later)) => {
                    assert_eq!(later, 20);
                    assert!(!entry.is_fired());
                    // SAFETY: `_g` holds `driver_lock`, the stand-in for the driver lock, under
                    // which alone the waker cell is touched.
                    assert!(unsafe { entry.take_waker() }.is_some(), "the waker was lost");
                }
                (false, Ok(had_waker)) => {
                    assert!(had_waker);
                    assert!(entry.is_fired());
                }
                other => panic!("extend and fire disagree: {other:?}"),
            }
        });
    }
}
