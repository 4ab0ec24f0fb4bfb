//! The blocked-worker monitor: one thread per multi-thread runtime that notices a worker stuck
//! inside one poll, records it (metrics, an optional warning line) and triggers compensation.
//!
//! Publication (the only cost on the poll path): each worker owns a [`PollSlot`] on its own
//! cache line and, around every poll, stores the poll's sequence number (odd while polling,
//! even after), the task id and its spawn location — four relaxed stores to a line no other
//! thread writes, no clock read. The monitor measures time itself, as Go's sysmon does: it
//! remembers when it first saw a worker at sequence `s`; seeing `s` again later means the
//! worker has been in that one poll at least that long.
//!
//! Sampling: the monitor sleeps 20 µs, doubling after each quiet sample up to
//! `min(10 ms, threshold / 2)`, so a poll is noticed at most ~1.5 × threshold after it began.
//! When no worker has polled anything for `PARK_AFTER_IDLE` (and every worker is parked) it
//! parks itself on a condvar; the first worker to wake sees the `parked` flag and wakes it
//! (an RMW setting its own `awake` flag then an RMW reading `parked`, mirrored by the
//! monitor: whichever side goes second
//! sees the other, so the monitor never sleeps through a busy runtime; plain SeqCst
//! store/load pairs are not enough under loom, whose model found the lost wake-up).
//!
//! The monitor also hands the driver over lazily: a worker that wakes in the driver with work
//! leaves it unattended (waking a sleeper for it every time costs a futex wake and a switch per
//! request at low load, see `worker.rs` `park`); when the monitor finds a worker inside one
//! poll for a whole sample and nobody in the driver, it wakes a sleeper, which takes it. As
//! long as one worker polls and another sleeps, it samples at least every `HANDOFF_INTERVAL`.
//!
//! Preempted is not blocked: a poll is *stuck* (compensation steals its worker's queue) once it
//! has lasted the threshold, but it is *reported* (counted in `long_poll_count`, kept in
//! `recent_long_polls`, warned about) only if it *blocked* that long: time on a CPU or asleep
//! in the kernel, not time runnable and waiting for a CPU. From the first sample that finds a
//! worker inside a poll, each sample reads its thread's `/proc/self/task/<tid>/{schedstat,stat}`:
//! while the poll lasts, blocked time is estimated as CPU time plus the sample intervals that
//! ended with the thread asleep (the kernel adds a wait for a CPU to its run delay only once the
//! wait ends, so the run delay cannot be used mid-wait); at the poll's end it is exact: the
//! duration less the run delay accrued since the first sample. On a loaded machine a short
//! poll whose thread was preempted for 30 ms is therefore not reported, while a 50 ms spin and
//! a 50 ms sleep in a syscall are (`tests/long_poll_cpu.rs`). The wait between the poll's start
//! and that first sample (at most one sampling interval, ≤ threshold / 2) is not subtracted.
//!
//! Why not park as soon as one sample finds every worker parked: a server at low load parks
//! its workers between requests, so the monitor would park and be woken once per request — a
//! futex wake, a thread switch and a sample for each (the `strace` count and its command:
//! docs/notes/performance-figures.md, "Driver hand-over"). Sampling on through short idle
//! gaps costs at most one wake-up per capped interval instead (≤ 200/s), and an idle runtime
//! still parks it after `PARK_AFTER_IDLE`.

use std::collections::VecDeque;
use std::panic::Location;
use std::time::{Duration, Instant};

use super::Handle;
use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::task::Id;
use crate::util::os_thread::SchedSample;

/// Default `Builder::long_poll_threshold`.
pub(crate) const DEFAULT_THRESHOLD: Duration = Duration::from_millis(10);
/// How many long polls `RuntimeMetrics::recent_long_polls` keeps (oldest dropped first).
const RECENT_CAPACITY: usize = 64;
/// At most one warning line per this interval per runtime (the rest are only counted).
const WARN_INTERVAL: Duration = Duration::from_secs(1);
const MIN_INTERVAL: Duration = Duration::from_micros(20);
const MAX_INTERVAL: Duration = Duration::from_millis(10);
/// Longest sampling interval after a sample found a worker polling while another sleeps: once
/// the monitor has seen that, timers and I/O wait at most about twice this for the lazy driver
/// hand-over (the first such sample can take the interval in force, ≤ 5 ms). Sampling fast only
/// once a sample has found the driver itself unattended waits longer: `weft-lab
/// blocking-resilience`'s timer then fires milliseconds late while a worker blocks
/// (docs/notes/performance-figures.md, "Driver hand-over").
const HANDOFF_INTERVAL: Duration = Duration::from_millis(1);
/// The monitor parks only after this long without a single poll on any worker.
const PARK_AFTER_IDLE: Duration = Duration::from_millis(50);

/// What the builder configured for detection and compensation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MonitorConfig {
    /// A poll longer than this is a long poll; `Duration::ZERO` turns the monitor off.
    pub(crate) threshold: Duration,
    pub(crate) warn: bool,
    pub(crate) compensate: bool,
}

/// One poll that ran longer than the threshold, as recorded by the monitor.
#[derive(Clone, Debug)]
pub struct LongPoll {
    /// The task that was being polled.
    pub task_id: Id,
    /// Where that task was spawned (`#[track_caller]` of `spawn`).
    pub spawn_location: &'static Location<'static>,
    /// The worker index that was blocked.
    pub worker: usize,
    /// How long the poll took, as the monitor observed it (within one sampling interval).
    pub duration: Duration,
}

/// `task 42 spawned at src/handler.rs:88:5 blocked worker 1 for 230 ms` (the warning line
/// is this after `weft: `).
impl std::fmt::Display for LongPoll {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "task {} spawned at {} blocked worker {} for {} ms",
            self.task_id,
            self.spawn_location,
            self.worker,
            self.duration.as_millis()
        )
    }
}

/// A worker's published "what am I polling" (written only by the thread holding the core).
#[repr(align(128))]
pub(crate) struct PollSlot {
    seq: AtomicU64,
    task_id: AtomicU64,
    location: AtomicPtr<Location<'static>>,
    /// The OS id of the thread running the poll (a core moves between threads).
    tid: AtomicU64,
    awake: AtomicBool,
}

impl PollSlot {
    fn new() -> PollSlot {
        PollSlot {
            seq: AtomicU64::new(0),
            task_id: AtomicU64::new(0),
            location: AtomicPtr::new(std::ptr::null_mut()),
            tid: AtomicU64::new(0),
            awake: AtomicBool::new(true),
        }
    }

    /// A poll (number `seq`, odd) of `task` starts on thread `tid`.
    #[inline]
    pub(crate) fn begin(&self, seq: u64, id: Id, location: &'static Location<'static>, tid: i64) {
        self.task_id.store(id.as_u64(), Relaxed);
        self.tid.store(tid as u64, Relaxed);
        self.location.store(location as *const Location<'static> as *mut Location<'static>, Relaxed);
        self.seq.store(seq, Release);
    }

    /// The poll numbered `seq` ended (or left this core: `block_in_place`).
    #[inline]
    pub(crate) fn end(&self, seq: u64) {
        self.seq.store(seq.wrapping_add(1), Release);
    }

    pub(crate) fn seq(&self) -> u64 {
        self.seq.load(Acquire)
    }

    /// The kernel's figures for the thread running the current poll.
    fn sched(&self) -> Option<SchedSample> {
        crate::util::os_thread::sched_sample(self.tid.load(Relaxed) as i64)
    }

    /// The task of poll `seq`, if that poll is still the published one.
    fn task(&self, seq: u64) -> Option<(Id, &'static Location<'static>)> {
        let id = self.task_id.load(Relaxed);
        let loc = self.location.load(Relaxed);
        if self.seq.load(Acquire) != seq || loc.is_null() {
            return None;
        }
        // SAFETY: `location` only ever holds null or a pointer made from a
        // `&'static Location<'static>` in `begin`, so a non-null value points to a live
        // `Location` for the rest of the program.
        let loc: &'static Location<'static> = unsafe { &*loc };
        Some((Id::from_u64(id)?, loc))
    }
}

/// The monitor's shared half (inside the scheduler handle).
pub(crate) struct Monitor {
    pub(crate) slots: Box<[PollSlot]>,
    pub(crate) config: MonitorConfig,
    /// `true` once the runtime shuts down (the monitor thread exits).
    stop: Mutex<bool>,
    cond: Condvar,
    parked: AtomicBool,
    long_poll_count: AtomicU64,
    recent: Mutex<VecDeque<LongPoll>>,
    /// Compensating threads currently running.
    pub(crate) temps: AtomicUsize,
    pub(crate) temps_started: AtomicU64,
}

impl Monitor {
    pub(crate) fn new(num_workers: usize, config: MonitorConfig) -> Monitor {
        Monitor {
            slots: (0..num_workers).map(|_| PollSlot::new()).collect(),
            config,
            stop: Mutex::new(false),
            cond: Condvar::new(),
            parked: AtomicBool::new(false),
            long_poll_count: AtomicU64::new(0),
            recent: Mutex::new(VecDeque::new()),
            temps: AtomicUsize::new(0),
            temps_started: AtomicU64::new(0),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        !self.config.threshold.is_zero()
    }

    /// Worker `index` goes to sleep (no poll in progress).
    #[inline]
    pub(crate) fn worker_parking(&self, index: usize) {
        self.slots[index].awake.store(false, Relaxed);
    }

    /// Worker `index` woke up: wakes the monitor if it sleeps.
    #[inline]
    pub(crate) fn worker_awake(&self, index: usize) {
        // RMWs, not a store and a load: with the monitor's RMWs they order the two sides
        // (whichever RMW on `parked` comes second sees the other's write); see `sleep`.
        self.slots[index].awake.swap(true, SeqCst);
        if self.parked.fetch_or(false, SeqCst) {
            drop(lock(&self.stop));
            self.cond.notify_one();
        }
    }

    pub(crate) fn shutdown(&self) {
        *lock(&self.stop) = true;
        self.cond.notify_all();
    }

    pub(crate) fn long_poll_count(&self) -> u64 {
        self.long_poll_count.load(Relaxed)
    }

    pub(crate) fn recent_long_polls(&self) -> Vec<LongPoll> {
        lock(&self.recent).iter().cloned().collect()
    }

    fn any_awake(&self) -> bool {
        self.slots.iter().any(|s| s.awake.fetch_or(false, SeqCst) || s.seq.load(SeqCst) & 1 == 1)
    }

    /// Sleeps `interval`, or until woken if the runtime is idle (`park`). False on shutdown.
    fn sleep(&self, interval: Duration, park: bool) -> bool {
        let mut stop = lock(&self.stop);
        if park {
            self.parked.swap(true, SeqCst);
            while !*stop && !self.any_awake() {
                stop = self.cond.wait(stop).unwrap_or_else(|p| p.into_inner());
            }
            self.parked.store(false, SeqCst);
        } else if !*stop {
            stop = self.cond.wait_timeout(stop, interval).unwrap_or_else(|p| p.into_inner()).0;
        }
        !*stop
    }

    fn record(&self, poll: LongPoll, last_warning: &mut Option<Instant>) {
        if self.config.warn && last_warning.is_none_or(|t| t.elapsed() >= WARN_INTERVAL) {
            *last_warning = Some(Instant::now());
            eprintln!("weft: {poll}");
        }
        let mut recent = lock(&self.recent);
        if recent.len() == RECENT_CAPACITY {
            recent.pop_front();
        }
        recent.push_back(poll);
    }
}

/// What the monitor thread remembers about one worker.
struct Seen {
    seq: u64,
    since: Instant,
    long: Option<(Id, &'static Location<'static>)>,
    /// The polling thread's figures when a sample first found it inside this poll (read from
    /// then on, not at every new poll: a `/proc` read per sample per worker would cost more
    /// than the sampling itself), and at the latest sample.
    first: Option<SchedSample>,
    last: Option<(SchedSample, Instant)>,
    /// Blocked time seen so far: time on a CPU, plus the intervals that ended with the thread
    /// asleep in the kernel (an estimate; exact only at the poll's end, see `blocked_at_end`).
    blocked: Duration,
    /// Counted and to be reported: on top of lasting the threshold, it blocked that long
    /// (module doc, "Preempted is not blocked").
    reported: bool,
}

impl Seen {
    fn new(seq: u64, since: Instant) -> Seen {
        Seen { seq, since, long: None, first: None, last: None, blocked: Duration::ZERO, reported: false }
    }

    /// A sample found the worker still inside this poll: take the kernel's figures.
    fn sample(&mut self, slot: &PollSlot, now: Instant) {
        let Some(cur) = slot.sched() else { return };
        match self.last {
            None => self.first = Some(cur),
            Some((prev, at)) => {
                self.blocked += Duration::from_nanos(cur.on_cpu_ns.saturating_sub(prev.on_cpu_ns));
                if cur.sleeping {
                    self.blocked += now - at;
                }
            }
        }
        self.last = Some((cur, now));
    }

    /// Whether the poll has blocked its worker for `threshold` yet, as far as the samples
    /// tell (without the kernel's figures: by wall time).
    fn blocked_past(&self, threshold: Duration, now: Instant) -> bool {
        match self.first {
            Some(_) => self.blocked >= threshold,
            None => now - self.since >= threshold,
        }
    }

    /// At the poll's end (seen by the sample after it): its duration less the time its thread
    /// waited for a CPU since the first sample. The thread ran to end the poll, so every wait
    /// inside the poll is in the kernel's figure by now.
    fn blocked_at_end(&self, slot: &PollSlot, now: Instant) -> Duration {
        let wall = now - self.since;
        match (self.first, slot.sched()) {
            (Some(first), Some(cur)) => {
                wall.saturating_sub(Duration::from_nanos(cur.run_wait_ns.saturating_sub(first.run_wait_ns)))
            }
            _ => wall,
        }
    }
}

/// The monitor thread's loop (see the module comment).
pub(crate) fn run(handle: Arc<Handle>) {
    let monitor = &handle.monitor;
    let threshold = monitor.config.threshold;
    let cap = (threshold / 2).clamp(MIN_INTERVAL, MAX_INTERVAL);
    let now = Instant::now();
    let mut seen: Vec<Seen> = monitor.slots.iter().map(|_| Seen::new(0, now)).collect();
    let mut interval = MIN_INTERVAL;
    let mut last_warning = None;
    let mut park = false;
    let mut last_activity = now;
    let mut scratch = super::compensate::Scratch::new(monitor.slots.len());
    while monitor.sleep(interval, park) {
        if park {
            interval = MIN_INTERVAL;
        }
        let now = Instant::now();
        let mut awake = false;
        let mut polling = false;
        let mut in_one_poll = false;
        let mut stuck = Vec::new();
        for (w, (slot, s)) in monitor.slots.iter().zip(seen.iter_mut()).enumerate() {
            let seq = slot.seq();
            polling |= seq & 1 == 1;
            awake |= seq & 1 == 1 || slot.awake.load(Relaxed) || seq != s.seq;
            if seq == s.seq && seq & 1 == 1 {
                in_one_poll = true;
                s.sample(slot, now);
                if s.long.is_none() && now - s.since >= threshold {
                    // Stuck for the scheduler's purposes (compensation), preempted or not.
                    s.long = slot.task(seq);
                }
                if s.long.is_some() {
                    if !s.reported && s.blocked_past(threshold, now) {
                        s.reported = true;
                        monitor.long_poll_count.fetch_add(1, Relaxed);
                    }
                    stuck.push((w, seq));
                }
                continue;
            }
            if let Some((task_id, spawn_location)) = s.long.take() {
                if !s.reported && s.blocked_at_end(slot, now) >= threshold {
                    s.reported = true;
                    monitor.long_poll_count.fetch_add(1, Relaxed);
                }
                if s.reported {
                    let poll = LongPoll { task_id, spawn_location, worker: w, duration: now - s.since };
                    monitor.record(poll, &mut last_warning);
                }
            }
            *s = Seen::new(seq, now);
        }
        let sleepers = polling && handle.shared.idle.has_sleepers();
        if in_one_poll && sleepers && handle.driver_unattended() {
            // A worker has been in one poll for at least a sample and nobody sleeps in the
            // driver: a sleeper takes it over now (timers and I/O keep being served).
            handle.notify_parked();
        }
        if monitor.config.compensate && !stuck.is_empty() {
            super::compensate::compensate(&handle, &stuck, &mut scratch);
        }
        interval = (interval * 2).min(cap);
        if sleepers {
            // A worker polls while another sleeps: the driver may be left unattended, so
            // sample again within `HANDOFF_INTERVAL` to keep its wait short.
            interval = interval.min(HANDOFF_INTERVAL);
        }
        if awake {
            last_activity = now;
        }
        park = !awake && stuck.is_empty() && now - last_activity >= PARK_AFTER_IDLE;
    }
    // Shutdown: long polls noticed but not yet seen ending are recorded as they stand.
    let now = Instant::now();
    for (worker, s) in seen.iter_mut().enumerate() {
        if let Some((task_id, spawn_location)) = s.long.take() {
            if s.reported {
                let poll = LongPoll { task_id, spawn_location, worker, duration: now - s.since };
                monitor.record(poll, &mut last_warning);
            }
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;

    /// The monitor parks while every worker sleeps; a worker waking at any point of that must
    /// wake it (the SeqCst `awake`/`parked` pair): loom reports a deadlock otherwise.
    #[test]
    fn loom_worker_wake_never_lost_by_a_parking_monitor() {
        loom::model(|| {
            let config = MonitorConfig { threshold: DEFAULT_THRESHOLD, warn: false, compensate: false };
            let monitor = Arc::new(Monitor::new(1, config));
            monitor.worker_parking(0);
            let m = monitor.clone();
            let worker = crate::loom::thread::spawn(move || m.worker_awake(0));
            // Returns only once it sees the worker awake (no shutdown in this model).
            assert!(monitor.sleep(Duration::ZERO, true));
            worker.join().unwrap();
        });
    }
}
