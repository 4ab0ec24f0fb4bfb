//! Thread parkers, and the one loop that blocks a plain thread on a future.
//!
//! * `ParkThread` — a condition-variable parker for one thread: `block_on` threads and the
//!   time-only driver sleep in it. `ParkThread::block_on` is the only block-on loop in the
//!   crate: `Runtime::block_on` on a multi-thread runtime, the current-thread scheduler
//!   while another thread holds its core, and `weft::sync`'s `blocking_*` methods all use it.
//! * `Parker` / `Unparker` — a worker's parker, which sleeps either *in the driver* (if this
//!   worker won the driver's `try_lock`) or on its own condvar; the unparker reads which from
//!   the state word and uses the matching wake-up. See the parking essay in
//!   `scheduler/mod.rs`.
//!
//! Both kinds share one state struct, `ParkState` (state word, mutex, condvar). State word,
//! one value at a time:
//! * `EMPTY` (0) — running, no pending notification.
//! * `PARKED_CONDVAR` (1) — sleeping on the condvar; an unpark must signal it under the mutex.
//! * `PARKED_DRIVER` (2) — sleeping inside the driver; an unpark must wake the driver (only a
//!   worker `Parker` ever sets it).
//! * `NOTIFIED` (3) — an unpark arrived; the next park returns at once and clears it.
//!
//! The unparker *swaps* in `NOTIFIED` before signalling, and the parker only sleeps after a
//! successful CAS `EMPTY → PARKED_*`, so a notification is never lost between the parker's
//! last look at the queues and its sleep.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::runtime::driver::{self, Driver};
use crate::task::coop::{BudgetGuard, BUDGET};
use crate::util::wake::{self, Wake};

const EMPTY: usize = 0;
const PARKED_CONDVAR: usize = 1;
const PARKED_DRIVER: usize = 2;
const NOTIFIED: usize = 3;

/// The state a parker shares with its unparkers (see the module comment for the word).
struct ParkState {
    state: AtomicUsize,
    mutex: Mutex<()>,
    condvar: Condvar,
}

impl ParkState {
    fn new() -> ParkState {
        ParkState { state: AtomicUsize::new(EMPTY), mutex: Mutex::new(()), condvar: Condvar::new() }
    }

    /// Consumes a pending notification, if any. Acquire: pairs with the Release swap in
    /// `unpark`, so whatever the unparker published before notifying is visible to us.
    fn take_notification(&self) -> bool {
        self.state.compare_exchange(NOTIFIED, EMPTY, Acquire, Relaxed).is_ok()
    }

    /// Moves the word from `EMPTY` to `PARKED_CONDVAR` under the mutex (returning at once,
    /// and consuming it, if a notification is pending) and sleeps until `NOTIFIED` or the
    /// timeout. The mutex is held from the CAS until `wait` releases it, so an unparker that
    /// takes it before signalling cannot signal too early.
    fn park_condvar(&self, timeout: Option<Duration>) {
        let mut guard = lock(&self.mutex);
        match self.state.compare_exchange(EMPTY, PARKED_CONDVAR, Acquire, Acquire) {
            Ok(_) => {}
            Err(NOTIFIED) => {
                self.state.swap(EMPTY, Acquire);
                return;
            }
            Err(actual) => panic!("inconsistent park state {actual}; only one thread may park"),
        }
        match timeout {
            None => loop {
                guard = match self.condvar.wait(guard) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
                if self.take_notification() {
                    return;
                }
                // Spurious wake-up: sleep again.
            },
            Some(dur) => {
                let _ = self.condvar.wait_timeout(guard, dur);
                // Timed out, notified or spurious: either way we are no longer parked. The swap
                // also consumes a notification that raced with the timeout.
                self.state.swap(EMPTY, Acquire);
            }
        }
    }

    /// Publishes a notification and wakes the parked thread, wherever it sleeps. `driver` is
    /// needed only by worker parkers (the one state that names it is `PARKED_DRIVER`).
    fn unpark(&self, driver: Option<&driver::Handle>) {
        // Release: pairs with the Acquire of `take_notification` / the parker's swaps.
        match self.state.swap(NOTIFIED, Release) {
            EMPTY | NOTIFIED => {}
            PARKED_CONDVAR => {
                // Taking the mutex orders this signal after the parker's wait began.
                drop(lock(&self.mutex));
                self.condvar.notify_one();
            }
            PARKED_DRIVER => driver.expect("only worker parkers sleep in the driver").unpark(),
            actual => panic!("inconsistent park state {actual}"),
        }
    }
}

/// A condvar parker for one thread (cloneable; clones share the state).
#[derive(Clone)]
pub(crate) struct ParkThread {
    inner: Arc<ParkState>,
}

impl ParkThread {
    pub(crate) fn new() -> ParkThread {
        ParkThread { inner: Arc::new(ParkState::new()) }
    }

    /// Sleeps until `unpark` (returns at once if one is pending), or until `timeout` passes.
    pub(crate) fn park_timeout(&self, timeout: Option<Duration>) {
        if self.inner.take_notification() || timeout == Some(Duration::ZERO) {
            return;
        }
        self.inner.park_condvar(timeout);
    }

    pub(crate) fn unpark(&self) {
        self.inner.unpark(None)
    }

    /// Consumes a pending `unpark`, if any, without sleeping; true if there was one.
    pub(crate) fn take_notification(&self) -> bool {
        self.inner.take_notification()
    }

    /// Polls `future` on this thread until it is ready, sleeping in this parker between
    /// wake-ups (the waker unparks it). Each poll runs with a fresh cooperative budget.
    ///
    /// With `until = Some((every, stop))` the loop also wakes at least every `every` and
    /// returns `None` (the future still pending) as soon as `stop()` says so: the
    /// current-thread scheduler uses this to take its core once another thread hands it back.
    pub(crate) fn block_on<F: Future + ?Sized>(
        &self,
        mut future: Pin<&mut F>,
        mut until: Option<(Duration, &mut dyn FnMut() -> bool)>,
    ) -> Option<F::Output> {
        let waker = wake::waker(Arc::new(ThreadWaker(self.clone())));
        let mut cx = Context::from_waker(&waker);
        loop {
            {
                let _budget = BudgetGuard::new(Some(BUDGET));
                if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
                    return Some(v);
                }
            }
            match &mut until {
                None => self.park_timeout(None),
                Some((every, stop)) => {
                    if stop() {
                        return None;
                    }
                    self.park_timeout(Some(*every));
                }
            }
        }
    }
}

/// Blocks the calling thread on `future` in a fresh `ParkThread` (see `ParkThread::block_on`).
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let future = std::pin::pin!(future);
    ParkThread::new().block_on(future, None).expect("block_on without a stop condition returns the output")
}

/// The waker of `ParkThread::block_on`: unparks the blocked thread.
struct ThreadWaker(ParkThread);

impl Wake for ThreadWaker {
    fn wake_by_ref(arc: &Arc<Self>) {
        arc.0.unpark();
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
    inner: Arc<ParkState>,
    driver: Arc<SharedDriver>,
}

/// Wakes the worker that owns the matching `Parker`; cloneable.
#[derive(Clone)]
pub(crate) struct Unparker {
    inner: Arc<ParkState>,
}

impl Parker {
    pub(crate) fn new(driver: Arc<SharedDriver>) -> Parker {
        Parker { inner: Arc::new(ParkState::new()), driver }
    }

    pub(crate) fn unparker(&self) -> Unparker {
        Unparker { inner: self.inner.clone() }
    }

    /// Sleeps until unparked (or, when this worker owns the driver, until the next timer or
    /// I/O event; workers never park with a timeout of their own). Returns true if it slept
    /// in the driver (the caller then hands the driver over, see the parking essay).
    pub(crate) fn park(&mut self, handle: &driver::Handle) -> bool {
        let state = &self.inner.state;
        if self.inner.take_notification() {
            return false;
        }
        let drove = self.driver.try_with(|driver| {
            match state.compare_exchange(EMPTY, PARKED_DRIVER, Acquire, Acquire) {
                Ok(_) => {}
                Err(NOTIFIED) => {
                    state.swap(EMPTY, Acquire);
                    driver.park_timeout(handle, Some(Duration::ZERO));
                    return;
                }
                Err(actual) => panic!("inconsistent worker park state {actual}"),
            }
            driver.park_timeout(handle, None);
            // Woken by an unpark (state NOTIFIED) or by a timer/I/O event (PARKED_DRIVER).
            state.swap(EMPTY, Acquire);
        });
        if drove.is_some() {
            return true;
        }
        self.inner.park_condvar(None);
        false
    }

    /// Fires due timers without sleeping, if the driver is free (maintenance of a busy
    /// worker). Does not touch the park state, so it neither consumes nor causes wake-ups.
    pub(crate) fn poll_driver(&mut self, handle: &driver::Handle) {
        self.driver.try_with(|driver| driver.park_timeout(handle, Some(Duration::ZERO)));
    }
}

impl Unparker {
    pub(crate) fn unpark(&self, handle: &driver::Handle) {
        self.inner.unpark(Some(handle));
    }

    /// Whether the worker sleeps inside the driver right now. A hint (relaxed, may be stale):
    /// the monitor uses it to decide whether to wake a sleeper to take the driver over.
    pub(crate) fn is_in_driver(&self) -> bool {
        self.inner.state.load(Relaxed) == PARKED_DRIVER
    }
}
