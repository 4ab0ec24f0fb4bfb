//! The runtime driver: what a parked thread blocks in. Today: the time wheel plus a condvar
//! parker; the I/O issue adds the mio poller here (blocking in `epoll_wait` with the next
//! timer deadline as timeout, woken through mio's eventfd `Waker`) without changing callers:
//! schedulers only call `Driver::park_timeout`, `Driver::shutdown` and `Handle::unpark`.

use std::time::Duration;

use crate::runtime::park::ParkThread;
use crate::time;

/// Owned by whichever thread is parked in it (see `park::SharedDriver`).
pub(crate) struct Driver {
    park: ParkThread,
}

/// Shared by every thread of the runtime: timer registration and unparking the driver.
pub(crate) struct Handle {
    time: Option<time::Handle>,
    unpark: ParkThread,
}

impl Driver {
    pub(crate) fn new(enable_time: bool) -> (Driver, Handle) {
        let park = ParkThread::new();
        let time = enable_time.then(|| time::Handle::new(park.clone()));
        (Driver { park: park.clone() }, Handle { time, unpark: park })
    }

    /// Blocks until unparked, the next timer is due, or `limit` passes; then fires due
    /// timers. `Some(Duration::ZERO)` only fires due timers.
    pub(crate) fn park_timeout(&mut self, handle: &Handle, limit: Option<Duration>) {
        match &handle.time {
            Some(t) if limit == Some(Duration::ZERO) => t.process_at(std::time::Instant::now()),
            Some(t) => {
                let dur = t.prepare_park(limit);
                self.park.park_timeout(dur);
                t.finish_park();
            }
            None => self.park.park_timeout(limit),
        }
    }

    pub(crate) fn shutdown(&mut self, handle: &Handle) {
        if let Some(t) = &handle.time {
            t.shutdown();
        }
    }
}

impl Handle {
    /// Wakes the thread parked in the driver (no-op if none; a pending wake is remembered).
    pub(crate) fn unpark(&self) {
        self.unpark.unpark();
    }

    pub(crate) fn time(&self) -> Option<&time::Handle> {
        self.time.as_ref()
    }
}
