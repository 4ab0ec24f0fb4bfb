//! Thread parkers.
//!
//! * `ParkThread` — a condition-variable parker for one thread: `block_on` threads and the
//!   time-only driver sleep in it.
//! * `Parker` / `Unparker` — a worker's parker, which sleeps either *in the driver* (if this
//!   worker won the driver's `try_lock`) or on its own condvar; the unparker reads which from
//!   the state word and uses the matching wake-up. See the parking essay in
//!   `scheduler/mod.rs`.
//!
//! State word (both parkers), one value at a time:
//! * `EMPTY` (0) — running, no pending notification.
//! * `PARKED_CONDVAR` (1) — sleeping on the condvar; an unpark must signal it under the mutex.
//! * `PARKED_DRIVER` (2) — sleeping inside the driver; an unpark must wake the driver.
//! * `NOTIFIED` (3) — an unpark arrived; the next park returns at once and clears it.
//!
//! The unparker *swaps* in `NOTIFIED` before signalling, and the parker only sleeps after a
//! successful CAS `EMPTY → PARKED_*`, so a notification is never lost between the parker's
//! last look at the queues and its sleep.

use std::time::Duration;

use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::runtime::driver::{self, Driver};

const EMPTY: usize = 0;
const PARKED_CONDVAR: usize = 1;
const PARKED_DRIVER: usize = 2;
const NOTIFIED: usize = 3;

/// A condvar parker for one thread (cloneable; clones share the state).
#[derive(Clone)]
pub(crate) struct ParkThread {
    inner: Arc<ParkInner>,
}

pub(crate) struct ParkInner {
    state: AtomicUsize,
    mutex: Mutex<()>,
    condvar: Condvar,
}

impl ParkThread {
    pub(crate) fn new() -> ParkThread {
        ParkThread {
            inner: Arc::new(ParkInner {
                state: AtomicUsize::new(EMPTY),
                mutex: Mutex::new(()),
                condvar: Condvar::new(),
            }),
        }
    }

    /// Sleeps until `unpark` (returns at once if one is pending), or until `timeout` passes.
    pub(crate) fn park_timeout(&self, timeout: Option<Duration>) {
        self.inner.park(timeout)
    }

    pub(crate) fn unpark(&self) {
        self.inner.unpark()
    }
}

impl ParkInner {
    fn park(&self, timeout: Option<Duration>) {
        // Acquire: pairs with the Release swap in `unpark`, so whatever the unparker published
        // before notifying is visible after we return.
        if self.state.compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed).is_ok() {
            return;
        }
        if timeout == Some(Duration::ZERO) {
            return;
        }
        park_on_condvar(&self.state, &self.mutex, &self.condvar, timeout);
    }

    pub(crate) fn unpark(&self) {
        // Release: pairs with the Acquire in `park`.
        match self.state.swap(NOTIFIED, Release) {
            EMPTY | NOTIFIED => {}
            PARKED_CONDVAR => signal_condvar(&self.mutex, &self.condvar),
            actual => panic!("inconsistent park state {actual}"),
        }
    }
}

/// The driver, shared by all workers of one runtime: whoever parks first owns it.
pub(crate) struct SharedDriver {
    driver: Mutex<Option<Driver>>,
}

impl SharedDriver {
    pub(crate) fn new(driver: Driver) -> SharedDriver {
        SharedDriver { driver: Mutex::new(Some(driver)) }
    }

    /// Runs `f` with the driver if no other worker holds it.
    pub(crate) fn try_with<R>(&self, f: impl FnOnce(&mut Driver) -> R) -> Option<R> {
        let mut guard = self.driver.try_lock().ok()?;
        guard.as_mut().map(f)
    }

    /// Takes the driver out for shutdown (waits for the current owner to let go).
    pub(crate) fn take(&self) -> Option<Driver> {
        lock(&self.driver).take()
    }
}

/// A worker's parker.
pub(crate) struct Parker {
    inner: Arc<WorkerParkInner>,
}

/// Wakes the worker that owns the matching `Parker`; cloneable.
#[derive(Clone)]
pub(crate) struct Unparker {
    inner: Arc<WorkerParkInner>,
}

struct WorkerParkInner {
    state: AtomicUsize,
    mutex: Mutex<()>,
    condvar: Condvar,
    shared: Arc<SharedDriver>,
}

impl Parker {
    pub(crate) fn new(shared: Arc<SharedDriver>) -> Parker {
        Parker {
            inner: Arc::new(WorkerParkInner {
                state: AtomicUsize::new(EMPTY),
                mutex: Mutex::new(()),
                condvar: Condvar::new(),
                shared,
            }),
        }
    }

    pub(crate) fn unparker(&self) -> Unparker {
        Unparker { inner: self.inner.clone() }
    }

    /// Sleeps until unparked (or, when this worker owns the driver, until the next timer or
    /// I/O event; workers never park with a timeout of their own).
    /// Returns true if it slept in the driver (the caller then hands the driver over, see
    /// the parking essay).
    pub(crate) fn park(&mut self, handle: &driver::Handle) -> bool {
        self.inner.park(handle)
    }

    /// Fires due timers without sleeping, if the driver is free (maintenance of a busy
    /// worker). Does not touch the park state, so it neither consumes nor causes wake-ups.
    pub(crate) fn poll_driver(&mut self, handle: &driver::Handle) {
        self.inner.shared.try_with(|driver| driver.park_timeout(handle, Some(Duration::ZERO)));
    }
}

impl WorkerParkInner {
    fn park(&self, handle: &driver::Handle) -> bool {
        if self.state.compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed).is_ok() {
            return false;
        }
        let shared = &self.shared;
        let drove = shared.try_with(|driver| {
            match self.state.compare_exchange(EMPTY, PARKED_DRIVER, Acquire, Acquire) {
                Ok(_) => {}
                Err(NOTIFIED) => {
                    self.state.swap(EMPTY, Acquire);
                    driver.park_timeout(handle, Some(Duration::ZERO));
                    return;
                }
                Err(actual) => panic!("inconsistent worker park state {actual}"),
            }
            driver.park_timeout(handle, None);
            // Woken by an unpark (state NOTIFIED) or by a timer/timeout (PARKED_DRIVER).
            self.state.swap(EMPTY, Acquire);
        });
        if drove.is_some() {
            return true;
        }
        park_on_condvar(&self.state, &self.mutex, &self.condvar, None);
        false
    }
}

/// The condvar half shared by both parkers: moves `state` from `EMPTY` to `PARKED_CONDVAR`
/// under `mutex` (returning at once, and consuming it, if a notification is pending) and
/// sleeps until `NOTIFIED` or the timeout. The mutex is held from the CAS until `wait`
/// releases it, so an unparker that takes it before signalling cannot signal too early.
fn park_on_condvar(state: &AtomicUsize, mutex: &Mutex<()>, condvar: &Condvar, timeout: Option<Duration>) {
    let mut guard = lock(mutex);
    match state.compare_exchange(EMPTY, PARKED_CONDVAR, Acquire, Acquire) {
        Ok(_) => {}
        Err(NOTIFIED) => {
            state.swap(EMPTY, Acquire);
            return;
        }
        Err(actual) => panic!("inconsistent park state {actual}; only one thread may park"),
    }
    match timeout {
        None => loop {
            guard = match condvar.wait(guard) {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            if state.compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed).is_ok() {
                return;
            }
            // Spurious wake-up: sleep again.
        },
        Some(dur) => {
            let _ = condvar.wait_timeout(guard, dur);
            // Timed out, notified or spurious: either way we are no longer parked. The swap
            // also consumes a notification that raced with the timeout.
            state.swap(EMPTY, Acquire);
        }
    }
}

/// Signals a thread parked on `condvar` (the state already says `NOTIFIED`).
fn signal_condvar(mutex: &Mutex<()>, condvar: &Condvar) {
    // Taking the mutex orders this signal after the parker's wait began (see above).
    drop(lock(mutex));
    condvar.notify_one();
}

impl Unparker {
    pub(crate) fn unpark(&self, handle: &driver::Handle) {
        let inner = &self.inner;
        match inner.state.swap(NOTIFIED, Release) {
            EMPTY | NOTIFIED => {}
            PARKED_CONDVAR => signal_condvar(&inner.mutex, &inner.condvar),
            PARKED_DRIVER => handle.unpark(),
            actual => panic!("inconsistent worker park state {actual}"),
        }
    }
}
