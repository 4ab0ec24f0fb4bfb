//! `TimerShared`: the part of a `Sleep` that the wheel links, pinned inside the `Sleep`.
//!
//! Field ownership:
//! * `links`, `position`, `when`, `waker` — only under the time driver's lock (the wheel's).
//! * `fired` — atomic. Set by the driver (under the lock) after unlinking the entry and taking
//!   its waker; after that store the driver never touches the entry again, so a `Sleep` that
//!   observes `fired` (Acquire) may be dropped without taking the lock.

use std::marker::PhantomPinned;
use std::ptr::NonNull;
use std::task::Waker;

use crate::loom::sync::atomic::{AtomicBool, Ordering::*};
use crate::loom::UnsafeCell;

pub(crate) struct TimerShared {
    prev: UnsafeCell<Option<NonNull<TimerShared>>>,
    next: UnsafeCell<Option<NonNull<TimerShared>>>,
    /// (level, slot) while linked in the wheel.
    position: UnsafeCell<Option<(u8, u8)>>,
    /// Deadline tick.
    when: UnsafeCell<u64>,
    waker: UnsafeCell<Option<Waker>>,
    fired: AtomicBool,
    _pin: PhantomPinned,
}

// SAFETY: all non-atomic fields are only accessed under the driver lock (see module comment).
unsafe impl Send for TimerShared {}
// SAFETY: shared use touches the non-atomic fields only under the driver lock (module comment);
// `fired` is atomic.
unsafe impl Sync for TimerShared {}

impl TimerShared {
    pub(crate) fn new() -> TimerShared {
        TimerShared {
            prev: UnsafeCell::new(None),
            next: UnsafeCell::new(None),
            position: UnsafeCell::new(None),
            when: UnsafeCell::new(0),
            waker: UnsafeCell::new(None),
            fired: AtomicBool::new(false),
            _pin: PhantomPinned,
        }
    }

    pub(crate) fn is_fired(&self) -> bool {
        // Acquire: pairs with the Release store in `mark_fired`.
        self.fired.load(Acquire)
    }

    /// Re-arms a fired entry (for `Sleep::reset`). Caller holds the driver lock.
    pub(crate) fn reset_fired(&self) {
        self.fired.store(false, Relaxed);
    }

    /// Takes the waker and marks the entry fired; the last driver access to the entry.
    ///
    /// # Safety
    /// The caller holds the driver lock and the entry is unlinked.
    pub(crate) unsafe fn mark_fired(&self) -> Option<Waker> {
        // SAFETY: `mark_fired`'s `# Safety`: the caller holds the driver lock, which guards this field.
        let waker = self.waker.with_mut(|w| unsafe { (*w).take() });
        self.fired.store(true, Release);
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
