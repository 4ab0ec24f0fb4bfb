//! `ScheduledIo`: the per-registration state the I/O driver shares with the resource that
//! owns it — cached readiness and the tasks waiting for it.
//!
//! Shaped around one atomic *readiness word* so the hot path (a socket that is already
//! ready) is a single load, and a small mutex for the waiters, taken only when a task must
//! sleep or the driver delivers an event.
//!
//! # The readiness word (`usize`, one word so it works on 32-bit targets too)
//! * bit 0 `READABLE` — the driver saw the fd readable; cleared by a reader that hit
//!   `WouldBlock`, if the tick still matches.
//! * bit 1 `WRITABLE` — likewise for writes.
//! * bit 2 `READ_CLOSED` — the peer closed its write side (or the socket hung up). Never
//!   cleared: once closed, reads return at once (EOF or error).
//! * bit 3 `WRITE_CLOSED` — our write side can no longer send. Never cleared.
//! * bit 4 `ERROR` — the fd reported an error; never cleared (the syscall surfaces it).
//! * bit 5 `SHUTDOWN` — the runtime shut down; every poll returns an error from now on. Set
//!   once, never cleared, coexists with any other bit.
//! * bit 6 `PRIORITY` — urgent data (`EPOLLPRI`: TCP out-of-band data, a changed cgroup or
//!   sysfs file); reported only to registrations that asked for `Interest::PRIORITY`, and
//!   cleared like `READABLE`.
//! * bits 8..=23 `TICK` — the driver turn (mod 2^16) that last *set* readiness bits.
//!
//! # Why the tick
//! A reader sees `READABLE` at tick t, reads, and gets `WouldBlock`. Meanwhile the driver may
//! have delivered a fresh edge (tick t+1) for data that arrived after the read. If the reader
//! now cleared `READABLE` unconditionally, that edge would be lost forever (edge-triggered
//! epoll reports it once) and the task would hang. So `clear_readiness` clears only if the
//! word's tick is still the one the reader observed; otherwise the bit stays set and the
//! reader simply retries.

use std::task::{Context, Poll, Waker};

use crate::io::Ready;
use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::Mutex;

pub(crate) const READABLE: usize = 0b00_0001;
pub(crate) const WRITABLE: usize = 0b00_0010;
pub(crate) const READ_CLOSED: usize = 0b00_0100;
pub(crate) const WRITE_CLOSED: usize = 0b00_1000;
pub(crate) const ERROR: usize = 0b01_0000;
pub(crate) const SHUTDOWN: usize = 0b10_0000;
pub(crate) const PRIORITY: usize = 0b100_0000;
/// All readiness bits (not `SHUTDOWN`, not the tick).
const READY_MASK: usize = 0b101_1111;
const TICK_SHIFT: usize = 8;
const TICK_MASK: usize = 0xFFFF << TICK_SHIFT;

/// Which half of a resource a task waits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The readiness bits that end a wait in this direction.
    pub(crate) fn mask(self) -> usize {
        match self {
            Direction::Read => READABLE | READ_CLOSED | ERROR,
            Direction::Write => WRITABLE | WRITE_CLOSED | ERROR,
        }
    }
}

/// Readiness observed by a task, with the tick to clear it by.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadyEvent {
    pub(crate) ready: Ready,
    pub(crate) tick: u16,
    pub(crate) is_shutdown: bool,
}

/// One registration's shared state. Its address is the mio `Token`.
pub(crate) struct ScheduledIo {
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
}

#[derive(Default)]
struct Waiters {
    /// The task in `poll_read_ready` (one at a time, like tokio's `AsyncRead` contract).
    reader: Option<Waker>,
    /// The task in `poll_write_ready`.
    writer: Option<Waker>,
    /// `readable()` / `writable()` / `ready()` futures: (id, mask, waker). Few at a time.
    others: Vec<(u64, usize, Waker)>,
    next_id: u64,
}

impl ScheduledIo {
    pub(crate) fn new() -> ScheduledIo {
        ScheduledIo { readiness: AtomicUsize::new(0), waiters: Mutex::new(Waiters::default()) }
    }

    /// Driver side: ORs in `ready` bits (`READY_MASK` only) stamped with `tick`, then wakes the
    /// waiters they concern.
    pub(crate) fn set_readiness(&self, tick: u16, ready: usize) {
        debug_assert_eq!(ready & !READY_MASK, 0);
        let mut curr = self.readiness.load(Relaxed);
        loop {
            let next = (curr & !TICK_MASK) | ready | ((tick as usize) << TICK_SHIFT);
            // AcqRel: Release pairs with the Acquire load in `poll_readiness` (a task seeing the
            // bit also sees everything before the event); Acquire keeps the CAS chain ordered
            // with concurrent `clear_readiness`.
            match self.readiness.compare_exchange_weak(curr, next, AcqRel, Relaxed) {
                Ok(_) => break,
                Err(actual) => curr = actual,
            }
        }
        self.wake(ready);
    }

    /// Task side: clears the bits of `event` (not the `*_CLOSED`/`ERROR` bits) if no newer
    /// event arrived since it was observed (same tick).
    pub(crate) fn clear_readiness(&self, event: ReadyEvent) {
        let clear = event.ready.as_usize() & (READABLE | WRITABLE | PRIORITY);
        let mut curr = self.readiness.load(Acquire);
        loop {
            if ((curr & TICK_MASK) >> TICK_SHIFT) as u16 != event.tick {
                return; // a newer event: keep its bits
            }
            // AcqRel: pairs with `set_readiness`'s CAS; a failed CAS re-reads the newer word.
            match self.readiness.compare_exchange_weak(curr, curr & !clear, AcqRel, Acquire) {
                Ok(_) => return,
                Err(actual) => curr = actual,
            }
        }
    }

    /// Marks the resource ready in `ready`'s bits without an event from the driver (a freshly
    /// accepted socket, which may already hold data whose edge epoll will not report again).
    /// A false positive costs one `WouldBlock`, which clears the bits as usual. The tick is
    /// left alone; nothing changes after shutdown.
    pub(crate) fn assume_ready(&self, ready: usize) {
        let mut curr = self.readiness.load(Acquire);
        while curr & SHUTDOWN == 0 {
            // AcqRel: as `set_readiness` (the Release half publishes the bits to pollers).
            match self.readiness.compare_exchange_weak(curr, curr | (ready & READY_MASK), AcqRel, Acquire) {
                Ok(_) => return,
                Err(actual) => curr = actual,
            }
        }
    }

    /// Runtime shutdown: sets `SHUTDOWN` and wakes everyone.
    pub(crate) fn shutdown(&self) {
        // Release: pairs with the Acquire load in `poll_readiness`.
        self.readiness.fetch_or(SHUTDOWN, Release);
        self.wake(READY_MASK);
    }

    /// The current readiness in `mask`'s bits, without registering a waker.
    pub(crate) fn ready_now(&self, mask: usize) -> ReadyEvent {
        Self::event(self.readiness.load(Acquire), mask)
    }

    fn event(word: usize, mask: usize) -> ReadyEvent {
        ReadyEvent {
            ready: Ready::from_usize(word & mask),
            tick: ((word & TICK_MASK) >> TICK_SHIFT) as u16,
            is_shutdown: word & SHUTDOWN != 0,
        }
    }

    /// Ready if any bit of `dir` is set (or shut down); otherwise stores the waker in the
    /// direction's slot and returns `Pending`.
    pub(crate) fn poll_readiness(&self, cx: &mut Context<'_>, dir: Direction) -> Poll<ReadyEvent> {
        let mask = dir.mask();
        // Acquire: pairs with the Release in `set_readiness` / `shutdown`.
        let ev = Self::event(self.readiness.load(Acquire), mask);
        if !ev.ready.is_empty() || ev.is_shutdown {
            return Poll::Ready(ev);
        }
        let mut waiters = lock(&self.waiters);
        let slot = match dir {
            Direction::Read => &mut waiters.reader,
            Direction::Write => &mut waiters.writer,
        };
        match slot {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => *slot = Some(cx.waker().clone()),
        }
        // Re-check under the lock: the driver wakes under this lock, so an event set after
        // our first load either shows here or finds our waker.
        let ev = Self::event(self.readiness.load(Acquire), mask);
        if !ev.ready.is_empty() || ev.is_shutdown {
            return Poll::Ready(ev);
        }
        Poll::Pending
    }

    /// Like `poll_readiness` for the `readable()`/`writable()`/`ready()` futures, any number
    /// of which may wait at once; `id` is the waiter's slot (0 = none yet).
    pub(crate) fn poll_waiter(&self, cx: &mut Context<'_>, mask: usize, id: &mut u64) -> Poll<ReadyEvent> {
        let ev = Self::event(self.readiness.load(Acquire), mask);
        if !ev.ready.is_empty() || ev.is_shutdown {
            self.remove_waiter(id);
            return Poll::Ready(ev);
        }
        let mut waiters = lock(&self.waiters);
        let ev = Self::event(self.readiness.load(Acquire), mask);
        if !ev.ready.is_empty() || ev.is_shutdown {
            drop(waiters);
            self.remove_waiter(id);
            return Poll::Ready(ev);
        }
        if let Some(entry) = waiters.others.iter_mut().find(|e| e.0 == *id && *id != 0) {
            if !entry.2.will_wake(cx.waker()) {
                entry.2 = cx.waker().clone();
            }
        } else {
            waiters.next_id += 1;
            *id = waiters.next_id;
            let new_id = *id;
            waiters.others.push((new_id, mask, cx.waker().clone()));
        }
        Poll::Pending
    }

    /// Forgets waiter `id` (a dropped or finished `readable()` future).
    pub(crate) fn remove_waiter(&self, id: &mut u64) {
        if *id == 0 {
            return;
        }
        let mut waiters = lock(&self.waiters);
        waiters.others.retain(|e| e.0 != *id);
        *id = 0;
    }

    /// Wakes the waiters whose directions intersect `ready` (wakers run outside the lock).
    /// The common case — one reader and/or one writer, no `readable()` futures — allocates
    /// nothing: this runs once per I/O event.
    fn wake(&self, ready: usize) {
        let (reader, writer, others) = {
            let mut waiters = lock(&self.waiters);
            let reader = if ready & Direction::Read.mask() != 0 { waiters.reader.take() } else { None };
            let writer = if ready & Direction::Write.mask() != 0 { waiters.writer.take() } else { None };
            let mut others: Vec<Waker> = Vec::new();
            if !waiters.others.is_empty() {
                waiters.others.retain(|(_, mask, w)| {
                    if mask & ready != 0 {
                        others.push(w.clone());
                        false
                    } else {
                        true
                    }
                });
            }
            (reader, writer, others)
        };
        if let Some(w) = reader {
            w.wake();
        }
        if let Some(w) = writer {
            w.wake();
        }
        for w in others {
            w.wake();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_scheduled_io {
    //! Loom model of the readiness/tick logic: an edge delivered while a reader is between
    //! its `WouldBlock` and its `clear_readiness` is never lost.
    use super::*;
    use crate::loom::sync::atomic::AtomicBool;
    use crate::loom::sync::Arc;
    use crate::loom::thread;

    #[test]
    fn loom_event_between_wouldblock_and_clear_is_kept() {
        loom::model(|| {
            let io = Arc::new(ScheduledIo::new());
            let data = Arc::new(AtomicBool::new(false));
            io.set_readiness(1, READABLE);
            let (io2, data2) = (io.clone(), data.clone());
            let driver = thread::spawn(move || {
                // New data arrives, then the kernel reports a fresh edge at tick 2.
                data2.store(true, SeqCst);
                io2.set_readiness(2, READABLE);
            });
            // The reader: observes READABLE (tick 1), reads; if no data, clears by tick.
            let ev = io.ready_now(Direction::Read.mask());
            assert!(!ev.ready.is_empty());
            if !data.load(SeqCst) {
                io.clear_readiness(ev);
            }
            driver.join().unwrap();
            // Whatever the interleaving, data that arrived is signalled as readable.
            if data.load(SeqCst) {
                let now = io.ready_now(Direction::Read.mask());
                assert!(!now.ready.is_empty(), "readiness for new data was lost");
            }
        });
    }

    #[test]
    fn loom_waiter_is_woken_by_concurrent_event() {
        loom::model(|| {
            let io = Arc::new(ScheduledIo::new());
            let io2 = io.clone();
            let driver = thread::spawn(move || io2.set_readiness(1, WRITABLE));
            let woke = Arc::new(AtomicBool::new(false));
            let waker = crate::util::wake::waker(Arc::new(Flag(woke.clone())));
            let mut cx = Context::from_waker(&waker);
            let first = io.poll_readiness(&mut cx, Direction::Write);
            driver.join().unwrap();
            // Either it was ready at once, or the driver's event woke the stored waker.
            assert!(first.is_ready() || woke.load(SeqCst));
        });
    }

    struct Flag(Arc<AtomicBool>);
    impl crate::util::wake::Wake for Flag {
        fn wake_by_ref(arc: &Arc<Self>) {
            arc.0.store(true, SeqCst);
        }
    }
}
