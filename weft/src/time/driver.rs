//! The time driver: converts instants to wheel ticks, registers timers, and fires them.
//!
//! The wheel lives behind one mutex in `Handle` (shared by every thread that creates a
//! `Sleep`). The thread that owns the runtime driver parks with the earliest wheel deadline
//! as its timeout, recording that deadline in `next_wake` under the same lock; a registration
//! of an earlier deadline sees it under the lock and unparks the driver, so the driver
//! re-arms. `next_wake == AWAKE` means nobody sleeps on the wheel (busy workers poll it).

use std::ptr::NonNull;
use std::task::Waker;
use std::time::Duration;

use super::clock::Clock;
use super::entry::TimerShared;
use super::wheel::Wheel;
use super::Instant;
use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicBool, Ordering::*};
use crate::loom::sync::Mutex;
use crate::runtime::driver::Unpark;

const AWAKE: u64 = 0;
/// Deadlines this close to the wheel's position (in ticks, 1 µs) are checked against the clock
/// when they are registered (`register`).
const DUE_CHECK_WINDOW_TICKS: u64 = 1_000;
/// With the clock running, a sleep or timeout fires no sooner than this after it is
/// registered (ticks, 1 µs): Linux's default timer slack. Sleeps of this length and longer are
/// exact to the tick; a shorter one, zero or an already-passed deadline included, takes this
/// long instead of completing at once. Code written for tokio uses zero and sub-millisecond
/// timeouts as a back-off and relies on tokio's 1 ms rounding to make them one: zenoh's
/// transmission loop (`yield_now` then `timeout(remaining, notified)`, with `remaining` 0 once
/// a batch is due but its lock is busy) becomes a spin on that lock when such timeouts
/// complete at once. Measured with `weft-lab zenoh-ab` (docs/notes/performance-figures.md,
/// "Timer slack").
pub(crate) const MIN_DELAY_TICKS: u64 = 50;

/// What registering a timer does with a deadline the clock has already reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// Fires at once: `interval`'s ticks (tokio's first tick is ready on its first poll) and
    /// re-registrations by `Sleep::reset`.
    Now,
    /// Sleeps and timeouts: no sooner than `MIN_DELAY_TICKS` after registration while the clock
    /// runs; at once while it is frozen (`time::pause`), where no real time passes.
    AfterSlack,
    /// Only in a driver turn, after every timer due by then (`time::advance`'s own sleep).
    InDriverTurn,
}

pub(crate) struct Handle {
    start: std::time::Instant,
    /// Every reading of "now" in the driver; paused/advanced under `test-util` (`clock`).
    pub(crate) clock: Clock,
    inner: Mutex<Inner>,
    /// Unparks the thread sleeping in the driver (eventfd or condvar, see `runtime::driver`).
    unpark: Unpark,
    is_shutdown: AtomicBool,
    pub(crate) metrics: crate::runtime::metrics::TimerCounters,
}

struct Inner {
    wheel: Wheel,
    next_wake: u64,
}

impl Handle {
    pub(crate) fn new(unpark: Unpark, enable_pausing: bool, start_paused: bool) -> Handle {
        let clock = Clock::new(enable_pausing, start_paused);
        Handle {
            start: clock.origin(),
            clock,
            inner: Mutex::new(Inner { wheel: Wheel::new(), next_wake: AWAKE }),
            unpark,
            is_shutdown: AtomicBool::new(false),
            metrics: Default::default(),
        }
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.is_shutdown.load(Acquire)
    }

    /// Tick (1 µs, see `wheel.rs`) of `t`, rounded down (the tick that has fully started by `t`).
    fn tick_floor(&self, t: std::time::Instant) -> u64 {
        t.saturating_duration_since(self.start).as_micros() as u64
    }

    /// Tick of a deadline, rounded up, so that firing at this tick is never early.
    pub(crate) fn tick_ceil(&self, deadline: Instant) -> u64 {
        let d = deadline.into_std().saturating_duration_since(self.start);
        let us = d.as_micros() as u64;
        if d > Duration::from_micros(us) {
            us + 1
        } else {
            us.max(1)
        }
    }

    fn instant_of(&self, tick: u64) -> std::time::Instant {
        self.start + Duration::from_micros(tick)
    }

    /// Links a timer; true if its deadline has already been processed (it fired at once).
    ///
    /// # Safety
    /// `entry` is pinned, unlinked, and outlives its registration (deregistered on drop).
    pub(crate) unsafe fn register(&self, entry: NonNull<TimerShared>, deadline: Instant, waker: &Waker) -> bool {
        // SAFETY: `register`'s contract is `register_checked`'s.
        unsafe { self.register_checked(entry, deadline, waker, Due::Now) }
    }

    /// `register`, with the clock check of deadlines near the wheel's position optional: a
    /// timer registered without it fires only when the wheel reaches its tick, in the same
    /// driver turn as every other timer due by then (`time::advance` waits on one).
    ///
    /// # Safety
    /// As `register`.
    pub(crate) unsafe fn register_checked(
        &self,
        entry: NonNull<TimerShared>,
        deadline: Instant,
        waker: &Waker,
        due: Due,
    ) -> bool {
        let mut when = self.tick_ceil(deadline);
        let unpark;
        {
            let mut inner = lock(&self.inner);
            // SAFETY: entry is pinned and we hold the driver lock.
            let e = unsafe { entry.as_ref() };
            // A deadline the wheel has not reached yet may still be due on the clock: the wheel
            // lags the clock by the time since the driver last turned. Firing it here saves a
            // driver round trip (and makes `interval`'s first tick ready on its first poll, as
            // in tokio); a sleep instead waits out the slack (`MIN_DELAY_TICKS`). Only deadlines
            // within 1 ms of the wheel read the clock, so ordinary sleeps pay nothing for this.
            let mut fire_now = false;
            if due != Due::InDriverTurn && when <= inner.wheel.elapsed().saturating_add(DUE_CHECK_WINDOW_TICKS) {
                let now = self.clock.now();
                if due == Due::AfterSlack && !self.clock.is_frozen() {
                    when = when.max(self.tick_floor(now) + MIN_DELAY_TICKS);
                } else {
                    fire_now = deadline.into_std() <= now;
                }
            }
            e.arm(when);
            // SAFETY: `register`'s `# Safety` (entry live, pinned and not linked) plus the driver
            // lock held just above, as `insert` requires.
            if fire_now || unsafe { inner.wheel.insert(entry, when) }.is_err() {
                // SAFETY: `inner` is the driver lock, under which alone an entry's waker and
                // `FIRED` are written (`entry.rs`), and the entry is not linked (found due before
                // insertion, or refused by `insert`), as `mark_fired` requires.
                drop(unsafe { e.mark_fired() });
                return true;
            }
            // SAFETY: an entry's waker cell is touched only under the driver lock (`entry.rs`),
            // which `inner` holds; the entry is live (pinned, `register`'s `# Safety`).
            unsafe { e.set_waker(waker) };
            self.metrics.inc_registered();
            unpark = inner.next_wake != AWAKE && when < inner.next_wake;
            if unpark {
                inner.next_wake = when;
            }
        }
        if unpark {
            self.unpark.unpark();
        }
        false
    }

    /// Updates the waker of a linked timer; true if it fired meanwhile.
    ///
    /// # Safety
    /// `entry` was registered with this handle and is still pinned.
    pub(crate) unsafe fn update_waker(&self, entry: NonNull<TimerShared>, waker: &Waker) -> bool {
        let _inner = lock(&self.inner);
        // SAFETY: the entry was registered with this handle and is still pinned (the caller's
        // contract), so it is live; its driver-side fields are read under `_inner`.
        let e = unsafe { entry.as_ref() };
        if e.is_fired() {
            return true;
        }
        // SAFETY: an entry's waker cell is touched only under the driver lock (`entry.rs`),
        // which `_inner` holds; the entry is live (pinned, the caller's contract).
        unsafe { e.set_waker(waker) };
        false
    }

    /// Unlinks a timer (if still linked) and drops its waker.
    ///
    /// # Safety
    /// `entry` was registered with this handle and is still pinned.
    pub(crate) unsafe fn deregister(&self, entry: NonNull<TimerShared>) {
        // SAFETY: `deregister`'s contract is `unlink`'s.
        let waker = unsafe { self.unlink(entry) };
        // Dropped outside the lock: a waker's drop may free a task, which may drop timers.
        drop(waker);
    }

    /// Unlinks a timer (if still linked) and hands back its waker, for the caller to drop
    /// outside the lock or to register again at another deadline (`Sleep::reset`).
    ///
    /// # Safety
    /// `entry` was registered with this handle and is still pinned.
    pub(crate) unsafe fn unlink(&self, entry: NonNull<TimerShared>) -> Option<Waker> {
        let mut inner = lock(&self.inner);
        // SAFETY: pinned entry (the caller's contract), lock held (`is_fired` is written under it).
        if !unsafe { entry.as_ref() }.is_fired() {
            self.metrics.inc_cancelled();
        }
        // SAFETY: pinned entry registered with this handle (the caller's contract), lock held
        // as `remove` and `take_waker` require.
        unsafe {
            inner.wheel.remove(entry);
            entry.as_ref().take_waker()
        }
    }

    /// Fires every timer due at `now`.
    pub(crate) fn process_at(&self, now: std::time::Instant) {
        let now_tick = self.tick_floor(now);
        let mut wakers: Vec<Waker> = Vec::new();
        {
            let mut inner = lock(&self.inner);
            if now_tick <= inner.wheel.elapsed() {
                return;
            }
            let metrics = &self.metrics;
            inner.wheel.advance(now_tick, |entry| {
                // SAFETY: the wheel hands us unlinked live entries under the lock.
                match unsafe { entry.as_ref().fire_unless_extended(now_tick) } {
                    Ok(waker) => {
                        metrics.inc_fired();
                        wakers.extend(waker);
                        None
                    }
                    // Its `Sleep` moved the deadline later without the lock: file it again.
                    Err(later) => Some(later),
                }
            });
        }
        for w in wakers {
            w.wake();
        }
    }

    /// How long the driver may sleep (at most `limit`), recording that it is going to sleep.
    pub(crate) fn prepare_park(&self, limit: Option<Duration>) -> Option<Duration> {
        let mut inner = lock(&self.inner);
        let next = inner.wheel.next_expiration().map(|e| e.deadline);
        inner.next_wake = next.unwrap_or(u64::MAX);
        let until_timer = next.map(|tick| self.instant_of(tick).saturating_duration_since(self.clock.now()));
        match (until_timer, limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The driver woke up.
    pub(crate) fn finish_park(&self) {
        lock(&self.inner).next_wake = AWAKE;
        self.process_at(self.clock.now());
    }

    /// Fires every timer due at the clock's current reading.
    pub(crate) fn process(&self) {
        self.process_at(self.clock.now());
    }

    /// Auto-advance (paused clock, runtime idle): moves the clock to the next timer deadline,
    /// or by `limit` if that is sooner, and fires what is due. False (nothing done) when the
    /// clock is not paused or there is neither a timer nor a limit (the caller then parks).
    pub(crate) fn auto_advance(&self, limit: Option<Duration>) -> bool {
        if !self.clock.can_auto_advance() {
            return false;
        }
        let next = lock(&self.inner).wheel.next_expiration().map(|e| e.deadline);
        let until_timer = next.map(|tick| self.instant_of(tick).saturating_duration_since(self.clock.now()));
        let step = match (until_timer, limit) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return false,
        };
        if let Err(msg) = self.clock.advance(step) {
            panic!("{msg}");
        }
        self.process();
        true
    }

    /// Fires every timer for shutdown; later polls of a `Sleep` panic with a clear message.
    pub(crate) fn shutdown(&self) {
        self.is_shutdown.store(true, Release);
        let mut wakers = Vec::new();
        {
            let mut inner = lock(&self.inner);
            let metrics = &self.metrics;
            inner.wheel.drain(|entry| {
                metrics.inc_fired();
                // SAFETY: unlinked live entries under the lock.
                if let Some(w) = unsafe { entry.as_ref().mark_fired() } {
                    wakers.push(w);
                }
            });
        }
        for w in wakers {
            w.wake();
        }
    }
}
