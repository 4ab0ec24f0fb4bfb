//! The runtime driver: what a parked thread blocks in — the time wheel, and (with
//! `enable_io`) the mio poller; without I/O, a condvar parker.
//!
//! Parking in the driver is: time `prepare_park` (the next timer deadline, capped by the
//! caller's limit) → block (`epoll_wait` through `mio::Poll::poll`, or the condvar) with that
//! timeout → dispatch I/O events → time `finish_park` (fire due timers).
//! `park_timeout(Some(ZERO))` is the busy worker's non-blocking maintenance poll.
//!
//! Unparking the driver is one abstraction, `Unpark`, shared by the schedulers and the time
//! handle: the coalescing mio eventfd waker when I/O is enabled (see `runtime/io/mod.rs`,
//! "Waking the driver"), else the `ParkThread`. Callers only use `Driver::park_timeout`,
//! `Driver::shutdown` and `Handle::unpark`, so neither the schedulers nor the time driver
//! know which one they got.

use std::io as std_io;
use std::time::Duration;

use crate::loom::sync::Arc;
use crate::runtime::io;
use crate::runtime::park::ParkThread;
use crate::time;

/// Owned by whichever thread is parked in it (see `park::SharedDriver`).
pub(crate) struct Driver {
    park: ParkThread,
    io: Option<io::Driver>,
}

/// Shared by every thread of the runtime: timer and socket registration, and unparking the
/// driver (reachable from both scheduler flavors' handles). The blocking pool is not here: it
/// is a scheduler service, on the scheduler handles (`scheduler::Handle::spawn_blocking`).
pub(crate) struct Handle {
    time: Option<time::Handle>,
    io: Option<io::Handle>,
    unpark: Unpark,
}

/// Wakes the thread blocked in the driver, whatever the driver is.
#[derive(Clone)]
pub(crate) enum Unpark {
    Thread(ParkThread),
    Io(Arc<io::Waker>),
}

impl Unpark {
    pub(crate) fn unpark(&self) {
        match self {
            Unpark::Thread(p) => p.unpark(),
            Unpark::Io(w) => w.wake(),
        }
    }
}

impl Driver {
    pub(crate) fn new(
        enable_time: bool,
        enable_io: bool,
        enable_pausing: bool,
        start_paused: bool,
    ) -> std_io::Result<(Driver, Handle)> {
        let park = ParkThread::new();
        let (io_driver, io_handle) = if enable_io {
            let (d, h) = io::Driver::new()?;
            (Some(d), Some(h))
        } else {
            (None, None)
        };
        let unpark = match &io_handle {
            Some(h) => Unpark::Io(h.waker.clone()),
            None => Unpark::Thread(park.clone()),
        };
        let time = enable_time.then(|| time::Handle::new(unpark.clone(), enable_pausing, start_paused));
        Ok((Driver { park, io: io_driver }, Handle { time, io: io_handle, unpark }))
    }

    /// Blocks until unparked, an I/O event, the next timer, or `limit`; then dispatches I/O
    /// events and fires due timers. `Some(Duration::ZERO)` never blocks.
    pub(crate) fn park_timeout(&mut self, handle: &Handle, limit: Option<Duration>) {
        if limit == Some(Duration::ZERO) {
            if let (Some(io), Some(h)) = (&mut self.io, &handle.io) {
                io.turn_busy(h);
            }
            if let Some(t) = &handle.time {
                t.process();
            }
            return;
        }
        if let Some(t) = handle.time.as_ref().filter(|t| t.clock.can_auto_advance()) {
            // Paused clock: poll I/O and pending unparks without blocking; only if nothing
            // came in is the runtime idle, and then the clock jumps instead of sleeping.
            let woke = match (&mut self.io, &handle.io) {
                (Some(io), Some(h)) => io.turn(h, Some(Duration::ZERO)),
                _ => self.park.take_notification(),
            };
            if woke || t.auto_advance(limit) {
                t.process();
                return;
            }
        }
        let dur = match &handle.time {
            Some(t) => t.prepare_park(limit),
            None => limit,
        };
        match (&mut self.io, &handle.io) {
            (Some(io), Some(h)) => {
                io.turn(h, dur);
            }
            _ => self.park.park_timeout(dur),
        }
        if let Some(t) = &handle.time {
            t.finish_park();
        }
    }

    /// `Builder::max_io_events_per_tick` / `max_io_events_per_busy_tick` (no-op without I/O).
    pub(crate) fn set_io_event_limits(&mut self, per_tick: usize, per_busy_tick: Option<usize>) {
        if let Some(io) = &mut self.io {
            io.set_event_limits(per_tick, per_busy_tick);
        }
    }

    pub(crate) fn shutdown(&mut self, handle: &Handle) {
        if let Some(t) = &handle.time {
            t.shutdown();
        }
        if let (Some(io), Some(h)) = (&mut self.io, &handle.io) {
            io.shutdown(h);
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

    pub(crate) fn io(&self) -> Option<&io::Handle> {
        self.io.as_ref()
    }
}
