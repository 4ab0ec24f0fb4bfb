//! The runtime's clock: real time, or (with the `test-util` feature) a clock that can be
//! paused, advanced by hand, and auto-advanced to the next timer when the runtime is idle.
//!
//! Shaped as one small struct owned by the time driver (`time::driver::Handle`), so every
//! reading of "now" inside the driver goes through it. Without `test-util` the struct is
//! empty and `now()` is `std::time::Instant::now()`, so the normal path pays nothing; with
//! it, `now()` takes a mutex, which is acceptable in tests and nowhere else.
//!
//! Paused state: `base` is the clock's reading at the last pause/advance, `unfrozen` the
//! real instant it was last resumed at (`None` while paused). Running: now = base +
//! (real now − unfrozen). Paused: now = base.
//!
//! `pause` rounds the clock up to a whole number of µs after `origin` (the instant the timer
//! wheel counts its 1 µs ticks from), as if the call had taken that much longer: then every
//! instant reached by advancing whole µs is a tick boundary, and a timer at `pause()` + 1 s
//! fires at exactly `advance(1 s)`, with `Instant::now()` reading exactly 1 s later.
//!
//! Auto-advance is inhibited while any `spawn_blocking` closure of the runtime is queued or
//! running (`inhibit`, counted by `runtime/blocking.rs`): the blocking code runs on real
//! time, so jumping the paused clock to the next timer meanwhile would fire a `timeout`
//! around it spuriously (as tokio does). Its end unparks the driver to re-check.

#[cfg(feature = "test-util")]
pub(crate) use paused::*;

#[cfg(not(feature = "test-util"))]
pub(crate) use real::*;

#[cfg(not(feature = "test-util"))]
mod real {
    /// Real time only (the `test-util` feature is off).
    pub(crate) struct Clock;

    impl Clock {
        pub(crate) fn new(_enable_pausing: bool, _start_paused: bool) -> Clock {
            Clock
        }

        pub(crate) fn origin(&self) -> std::time::Instant {
            std::time::Instant::now()
        }

        #[inline]
        pub(crate) fn now(&self) -> std::time::Instant {
            std::time::Instant::now()
        }

        #[inline]
        pub(crate) fn can_auto_advance(&self) -> bool {
            false
        }

        /// Whether time stands still (`time::pause`): never without `test-util`.
        #[inline]
        pub(crate) fn is_frozen(&self) -> bool {
            false
        }

        pub(crate) fn advance(&self, _d: std::time::Duration) -> Result<(), &'static str> {
            Err("time is not frozen")
        }
    }
}

#[cfg(feature = "test-util")]
mod paused {
    use std::time::Duration;

    use crate::loom::lock;
    use crate::loom::sync::Mutex;

    pub(crate) struct Clock {
        inner: Mutex<Inner>,
    }

    struct Inner {
        /// False on the multi-thread runtime: pausing is refused there (as in tokio).
        enable_pausing: bool,
        /// The reading at creation: the timer wheel's tick 0 (`origin`).
        origin: std::time::Instant,
        /// Blocking closures queued or running: auto-advance waits while any is.
        inhibit: usize,
        base: std::time::Instant,
        unfrozen: Option<std::time::Instant>,
    }

    impl Clock {
        /// Panics (with tokio's message) if `start_paused` on a runtime that cannot pause.
        pub(crate) fn new(enable_pausing: bool, start_paused: bool) -> Clock {
            let now = std::time::Instant::now();
            let clock = Clock {
                inner: Mutex::new(Inner { enable_pausing, origin: now, inhibit: 0, base: now, unfrozen: Some(now) }),
            };
            if start_paused {
                if let Err(msg) = clock.pause() {
                    panic!("{msg}");
                }
            }
            clock
        }

        /// The instant the timer wheel counts ticks from (the clock's first reading).
        pub(crate) fn origin(&self) -> std::time::Instant {
            lock(&self.inner).origin
        }

        pub(crate) fn now(&self) -> std::time::Instant {
            let inner = lock(&self.inner);
            match inner.unfrozen {
                Some(since) => inner.base + since.elapsed(),
                None => inner.base,
            }
        }

        /// Whether time stands still (`time::pause`, until `resume`).
        pub(crate) fn is_frozen(&self) -> bool {
            lock(&self.inner).unfrozen.is_none()
        }

        pub(crate) fn pause(&self) -> Result<(), &'static str> {
            let mut inner = lock(&self.inner);
            if !inner.enable_pausing {
                return Err("`time::pause()` requires the `current_thread` Tokio runtime. \
                            This is the default Runtime used by `#[tokio::test].");
            }
            let Some(since) = inner.unfrozen else {
                return Err("time is already frozen");
            };
            let now = inner.base + since.elapsed();
            // Rounded up to a whole µs after `origin` (the module comment says why).
            let offset = now.saturating_duration_since(inner.origin);
            let whole = Duration::from_micros(offset.as_micros() as u64);
            let up = if whole < offset { whole + Duration::from_micros(1) } else { whole };
            inner.base = inner.origin + up;
            inner.unfrozen = None;
            Ok(())
        }

        pub(crate) fn resume(&self) -> Result<(), &'static str> {
            let mut inner = lock(&self.inner);
            if inner.unfrozen.is_some() {
                return Err("time is not frozen");
            }
            inner.unfrozen = Some(std::time::Instant::now());
            Ok(())
        }

        pub(crate) fn can_auto_advance(&self) -> bool {
            let inner = lock(&self.inner);
            inner.unfrozen.is_none() && inner.inhibit == 0
        }

        /// A blocking closure was queued: no auto-advance until `allow_auto_advance`.
        pub(crate) fn inhibit_auto_advance(&self) {
            lock(&self.inner).inhibit += 1;
        }

        /// A blocking closure finished (or was cancelled).
        pub(crate) fn allow_auto_advance(&self) {
            let mut inner = lock(&self.inner);
            inner.inhibit = inner.inhibit.checked_sub(1).expect("allow_auto_advance without inhibit_auto_advance");
        }

        pub(crate) fn advance(&self, d: Duration) -> Result<(), &'static str> {
            let mut inner = lock(&self.inner);
            if inner.unfrozen.is_some() {
                return Err("time is not frozen");
            }
            inner.base += d;
            Ok(())
        }
    }
}

/// The current runtime's clock reading, or real time outside a runtime (or one without time).
#[cfg(feature = "test-util")]
pub(crate) fn now() -> std::time::Instant {
    match crate::runtime::context::try_current() {
        Some(h) => match h.driver().time() {
            Some(t) => t.clock.now(),
            None => std::time::Instant::now(),
        },
        None => std::time::Instant::now(),
    }
}

#[cfg(not(feature = "test-util"))]
#[inline]
pub(crate) fn now() -> std::time::Instant {
    std::time::Instant::now()
}

#[cfg(feature = "test-util")]
#[track_caller]
fn with_time<R>(f: impl FnOnce(&super::driver::Handle) -> Result<R, &'static str>) -> R {
    let res = match crate::runtime::context::try_current() {
        Some(h) => match h.driver().time() {
            Some(t) => f(t),
            None => Err("A Tokio 1.x context was found, but timers are disabled. \
                         Call `enable_time` on the runtime builder to enable timers."),
        },
        None => Err("time cannot be frozen from outside the Tokio runtime"),
    };
    // A `match`, not `unwrap_or_else(|msg| panic!(..))`: a closure does not inherit
    // `#[track_caller]`, and the panic must point at the user's call.
    match res {
        Ok(r) => r,
        Err(msg) => panic!("{msg}"),
    }
}

/// Pauses time: `Instant::now()` stops, and timers fire only by [`advance`] or, when the
/// runtime has nothing else to do, by auto-advance (the clock jumps to the next timer's
/// deadline instead of the thread sleeping). As in tokio, only the current-thread runtime can
/// pause (the multi-thread runtime's workers would race the jumps).
///
/// # Panics
/// Outside a runtime, on a multi-thread runtime, or if time is already paused (tokio's texts).
#[cfg(feature = "test-util")]
#[track_caller]
pub fn pause() {
    with_time(|t| t.clock.pause())
}

/// Resumes time: `Instant::now()` follows the real clock again from the paused reading.
///
/// # Panics
/// Outside a runtime, or if time is not paused.
#[cfg(feature = "test-util")]
#[track_caller]
pub fn resume() {
    with_time(|t| t.clock.resume())
}

/// Moves the paused clock forward by `duration`, then waits for a timer at the new instant,
/// as tokio's does: that timer fires in a driver turn together with every timer due by then
/// (in deadline order). Then it yields once, so the tasks those timers woke have run before
/// this call returns (tokio documents only that they are woken; code that reads their effects
/// right after `advance` works on both).
///
/// The timer wheel counts 1 µs ticks from the runtime's start and files a deadline at the
/// tick that is not early for it. When the new instant falls inside a tick (time was paused
/// at an instant that is not a whole number of µs after the runtime started), the driver turn
/// auto-advances the clock to that tick's end, so `Instant::now()` may read up to 1 µs past
/// the instant asked for (tokio: up to 1 ms). With `start_paused` every step is exact.
///
/// Rejected: firing the due timers inside `advance` and yielding once: a timer filed at the
/// tick just after a sub-tick instant is left behind, so a key set to expire in 1 s is still
/// there after `advance(1 s)`.
///
/// # Panics
/// Outside a runtime, or if time is not paused.
#[cfg(feature = "test-util")]
pub async fn advance(duration: std::time::Duration) {
    let until = with_time(|t| {
        let until = super::Instant::from_std(t.clock.now()).add_or_far_future(duration);
        t.clock.advance(duration)?;
        Ok(until)
    });
    super::sleep::Sleep::in_driver_turn(until).await;
    crate::task::yield_now().await;
}
