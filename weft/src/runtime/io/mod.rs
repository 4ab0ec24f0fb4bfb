//! The I/O driver: a `mio::Poll` (epoll on Linux) owned by whichever worker parks in the
//! runtime driver, and the registrations of every socket of the runtime.
//!
//! # Glossary
//! * **registration** — one `mio::event::Source` (a socket) registered once, edge-triggered,
//!   for reads and writes. Its shared state is a `ScheduledIo` (`scheduled_io.rs`): cached
//!   readiness stamped with a tick, and the wakers of the tasks waiting on it.
//! * **token** — the `mio::Token` of a registration: the address of its `ScheduledIo`. The
//!   driver turns an event's token back into `&ScheduledIo` without a lookup.
//! * **turn** — one wait on the epoll set (`epoll.rs`, nanosecond timeouts) plus dispatch of
//!   its events. Turns are numbered (mod
//!   2^16); the number is the *tick* stamped on readiness.
//! * **driver owner** — the thread parked in the runtime driver (see the parking essay in
//!   `scheduler/mod.rs`): it alone holds the `Driver` (`Poll` + `Events`) and runs turns.
//!
//! # Who may touch what
//! * `Driver` (the `Poll`, the `Events` buffer, the tick): only the owner, by `&mut`.
//! * `Handle` (the `mio::Registry`, the mio `Waker`, the registration set): any thread.
//!   Registering and deregistering go through the registry (thread-safe in mio) and the
//!   `registrations` mutex.
//! * A `ScheduledIo`: its readiness word by atomics (driver sets, tasks clear by tick); its
//!   waiters under its own small lock.
//!
//! # Lifetime of a token (why freeing is deferred)
//! The token is a raw address, so the `ScheduledIo` must outlive every event that can still
//! carry it. Each one is kept alive by the handle's registration set (an `Arc`). Dropping a
//! socket (a) deregisters it from mio *before* its fd closes (so the kernel stops reporting
//! it and no fd is leaked or, worse, reused while still registered), then (b) moves its
//! `ScheduledIo` from the set to `pending_release`. Events for it may already sit in the
//! `Events` buffer of a turn in progress, so the driver frees `pending_release` only at the
//! *start of its next turn*, when no event of the previous `poll` is left to dispatch. A token
//! (address) therefore cannot be reused by a new registration while an event for its old
//! owner can still be delivered. When 16 releases pile up the releasing thread wakes the
//! driver, so an idle runtime does not hold the memory of closed sockets indefinitely.
//!
//! # Waking the driver (coalesced)
//! A thread that needs the owner out of `epoll_wait` (a task woken for a worker parked in
//! the driver, an earlier timer) calls `Waker::wake`, one `eventfd` write. To keep repeated
//! wakes at one syscall, an `AtomicBool` `wake_pending` is set by the waker; only the call
//! that flips it false → true writes the eventfd. The owner clears it (AcqRel swap) right
//! after `poll` returns: a wake that found it already set happened before that clear, so
//! the owner, which is awake and about to look at the queues and timers, sees its effects
//! through the swap's Acquire. A stale eventfd edge only costs one spurious return.
//!
//! # Shutdown, as steps
//! 1. The last worker out takes the `Driver` (scheduler shutdown) and calls `shutdown`.
//! 2. The registration set is closed (new registrations fail with an error) and every
//!    `ScheduledIo` gets its `SHUTDOWN` bit, waking its waiters; their next poll returns
//!    the error "a weft runtime was found, but it is being shut down".
//! 3. Sockets still alive deregister normally when dropped (the registry outlives the
//!    `Poll`; deregistering from a closed epoll set is harmless).
//!
//! Rejected: a slab of `ScheduledIo`s indexed by token with generation bits (tokio's old
//! design) — it needs a lock or a lock-free slab on every registration and bounds the number
//! of sockets by the generation width; an `Arc` per registration plus deferred release gives
//! the same no-reuse guarantee with a plain allocation.

pub(crate) mod epoll;
#[cfg(all(test, loom))]
mod loom_wake;
pub(crate) mod registration;
pub(crate) mod scheduled_io;

use std::collections::HashMap;
use std::io;
use std::time::Duration;

use crate::io::Ready;
use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicBool, Ordering::*};
use crate::loom::sync::{Arc, Mutex};
use scheduled_io::ScheduledIo;

/// The token of the mio `Waker` (never the address of a `ScheduledIo`, which is aligned).
const WAKE_TOKEN: mio::Token = mio::Token(usize::MAX);
/// Released registrations that make the releasing thread wake the driver to free them.
const RELEASE_BACKLOG_WAKE: usize = 16;
/// Events fetched per turn by default (`Builder::max_io_events_per_tick`); more wait for the
/// next turn (edge-triggered: they stay on epoll's ready list, nothing is lost).
pub(crate) const EVENTS_CAPACITY: usize = 1024;

/// Owned by the driver owner.
pub(crate) struct Driver {
    /// Kept for its epoll fd (registration goes through the handle's cloned `Registry`); the
    /// driver waits on that fd itself through `waiter` (`epoll.rs`: sub-millisecond timeouts).
    _poll: mio::Poll,
    waiter: epoll::Waiter,
    /// Events per ordinary turn (`Builder::max_io_events_per_tick`).
    per_tick: usize,
    /// The smaller batch for turns taken while the worker still has tasks to run
    /// (`Builder::max_io_events_per_busy_tick`); `None`: the same as `per_tick`.
    per_busy_tick: Option<usize>,
    tick: u16,
}

/// Shared by every thread of the runtime.
pub(crate) struct Handle {
    registry: mio::Registry,
    registrations: Mutex<Registrations>,
    pub(crate) waker: Arc<Waker>,
    pub(crate) metrics: crate::runtime::metrics::IoDriverMetrics,
}

struct Registrations {
    /// Live registrations, keyed by token (address).
    live: HashMap<usize, Arc<ScheduledIo>>,
    /// Deregistered, freed at the start of the next turn.
    pending_release: Vec<Arc<ScheduledIo>>,
    is_shutdown: bool,
}

/// The coalescing mio waker (see "Waking the driver").
pub(crate) struct Waker {
    waker: mio::Waker,
    pending: WakeCoalescer,
    /// eventfd writes so far (unit tests assert which wake-ups reach the driver).
    #[cfg(test)]
    pub(crate) writes: crate::loom::sync::atomic::AtomicUsize,
}

impl Waker {
    pub(crate) fn wake(&self) {
        if self.pending.should_signal() {
            #[cfg(test)]
            self.writes.fetch_add(1, Relaxed);
            if let Err(e) = self.waker.wake() {
                panic!("weft: waking the I/O driver failed (eventfd write): {e}");
            }
        }
    }
}

/// The "wake pending" flag that coalesces driver wake-ups (the syscall-free half of `Waker`,
/// separate so the loom model can check the protocol without an eventfd).
pub(crate) struct WakeCoalescer {
    wake_pending: AtomicBool,
}

impl WakeCoalescer {
    pub(crate) fn new() -> WakeCoalescer {
        WakeCoalescer { wake_pending: AtomicBool::new(false) }
    }

    /// Waker side: true if this caller must make the syscall (it flipped false → true).
    pub(crate) fn should_signal(&self) -> bool {
        // AcqRel: Release publishes what the waker did before waking (pairs with the Acquire
        // of `clear`); only the false → true flip pays the syscall.
        !self.wake_pending.swap(true, AcqRel)
    }

    /// Driver side, right after `poll` returned: later wakes must signal again.
    pub(crate) fn clear(&self) {
        // AcqRel: the Acquire half pairs with `should_signal`'s Release, so the effects of a
        // wake that found the flag already set (and skipped the syscall) are visible to the
        // driver, which is awake and about to look for work.
        self.wake_pending.swap(false, AcqRel);
    }
}

impl Driver {
    pub(crate) fn new() -> io::Result<(Driver, Handle)> {
        let poll = mio::Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = mio::Waker::new(poll.registry(), WAKE_TOKEN)?;
        let handle = Handle {
            registry,
            registrations: Mutex::new(Registrations {
                live: HashMap::new(),
                pending_release: Vec::new(),
                is_shutdown: false,
            }),
            waker: Arc::new(Waker {
                waker,
                pending: WakeCoalescer::new(),
                #[cfg(test)]
                writes: crate::loom::sync::atomic::AtomicUsize::new(0),
            }),
            metrics: Default::default(),
        };
        let waiter = epoll::Waiter::new(std::os::fd::AsRawFd::as_raw_fd(&poll));
        Ok((Driver { _poll: poll, waiter, per_tick: EVENTS_CAPACITY, per_busy_tick: None, tick: 0 }, handle))
    }

    /// Sets how many events one turn takes: `per_tick` for ordinary turns, `per_busy_tick`
    /// (when set) for the non-blocking turns of a worker that still has tasks to run.
    pub(crate) fn set_event_limits(&mut self, per_tick: usize, per_busy_tick: Option<usize>) {
        self.waiter.reserve(per_tick.max(per_busy_tick.unwrap_or(0)));
        self.waiter.set_limit(per_tick);
        self.per_tick = per_tick;
        self.per_busy_tick = per_busy_tick;
    }

    /// A non-blocking turn of a worker that still has tasks: takes at most the busy batch.
    /// With no socket registered there is no readiness to collect, and the `epoll_wait(0)` is
    /// skipped: a worker running tasks that yield polls the driver once per round of its queue
    /// (`multi_thread/worker.rs`), which for a lone yielder is once per yield; the syscall would
    /// triple the cost of a yield on the current-thread runtime (`weft-lab micro --filter
    /// yield_in_hot_loop`; docs/notes/performance-figures.md). What waits meanwhile is harmless: a
    /// pending driver wake-up stays in the eventfd for the next turn, and registrations
    /// released since the last turn are freed by the next one (a later socket's, or a park's).
    pub(crate) fn turn_busy(&mut self, handle: &Handle) -> bool {
        if !handle.has_sources() {
            return false;
        }
        match self.per_busy_tick {
            Some(busy) => {
                self.waiter.set_limit(busy);
                let any = self.turn(handle, Some(Duration::ZERO));
                self.waiter.set_limit(self.per_tick);
                any
            }
            None => self.turn(handle, Some(Duration::ZERO)),
        }
    }

    /// One turn: free released registrations, poll (at most `timeout`), dispatch events.
    /// Returns true if any event (readiness or a wake-up of the driver) came in.
    pub(crate) fn turn(&mut self, handle: &Handle, timeout: Option<Duration>) -> bool {
        // No event of the previous poll is left to dispatch: released tokens may be freed.
        let released = std::mem::take(&mut lock(&handle.registrations).pending_release);
        drop(released);

        self.tick = self.tick.wrapping_add(1);
        if let Err(e) = self.waiter.wait(timeout) {
            panic!("weft: waiting on epoll failed in the I/O driver: {e}");
        }
        handle.waker.pending.clear();

        let mut ready_events = 0;
        let mut any = false;
        for event in self.waiter.events() {
            any = true;
            if event.token == WAKE_TOKEN.0 as u64 || event.token == epoll::TIMER_TOKEN {
                continue;
            }
            ready_events += 1;
            let ready = Ready::from_epoll(event.flags).as_usize();
            let ptr = event.token as usize as *const ScheduledIo;
            // SAFETY: the token is the address of a `ScheduledIo` kept alive by the handle's
            // registration set or its `pending_release` list, which is freed only at the
            // start of the next turn (module doc, "Lifetime of a token").
            let io = unsafe { &*ptr };
            io.set_readiness(self.tick, ready);
        }
        handle.metrics.add_ready(ready_events);
        any
    }

    /// Marks every registration shut down and wakes its waiters.
    pub(crate) fn shutdown(&mut self, handle: &Handle) {
        let live: Vec<Arc<ScheduledIo>> = {
            let mut regs = lock(&handle.registrations);
            regs.is_shutdown = true;
            regs.live.values().cloned().collect()
        };
        for io in live {
            io.shutdown();
        }
    }
}

impl Handle {
    /// Whether any socket is registered now (a hint: one registered meanwhile by another
    /// thread is seen by the next turn; its readiness waits in epoll until then).
    fn has_sources(&self) -> bool {
        let gone = self.metrics.fd_deregistered.load(Relaxed);
        self.metrics.fd_registered.load(Relaxed) != gone
    }

    /// Registers `source` for reads and writes (edge-triggered), and for urgent data when
    /// `priority` is set, and returns its state.
    pub(crate) fn add_source(
        &self,
        source: &mut impl mio::event::Source,
        priority: bool,
    ) -> io::Result<Arc<ScheduledIo>> {
        let io = Arc::new(ScheduledIo::new());
        let token = mio::Token(&*io as *const ScheduledIo as usize);
        {
            let mut regs = lock(&self.registrations);
            if regs.is_shutdown {
                return Err(shutdown_error());
            }
            regs.live.insert(token.0, io.clone());
        }
        let mut interest = mio::Interest::READABLE | mio::Interest::WRITABLE;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if priority {
            interest |= mio::Interest::PRIORITY;
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = priority;
        if let Err(e) = self.registry.register(source, token, interest) {
            self.release(&io);
            return Err(e);
        }
        self.metrics.inc_registered();
        Ok(io)
    }

    /// Deregisters `source` from epoll (call before its fd closes) and releases its state.
    pub(crate) fn deregister_source(
        &self,
        io: &Arc<ScheduledIo>,
        source: &mut impl mio::event::Source,
    ) -> io::Result<()> {
        let res = self.registry.deregister(source);
        self.metrics.inc_deregistered();
        self.release(io);
        res
    }

    fn release(&self, io: &Arc<ScheduledIo>) {
        let key = &**io as *const ScheduledIo as usize;
        let backlog = {
            let mut regs = lock(&self.registrations);
            if let Some(io) = regs.live.remove(&key) {
                regs.pending_release.push(io);
            }
            regs.pending_release.len()
        };
        // Many sockets dropped while the driver sleeps: wake it so a turn frees them (the
        // memory of a closed socket is not held hostage by an idle runtime).
        if backlog == RELEASE_BACKLOG_WAKE {
            self.waker.wake();
        }
    }
}

pub(crate) use super::shutdown_error::shutdown_error;
