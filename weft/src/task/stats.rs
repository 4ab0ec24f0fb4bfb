//! Per-task statistics for the task dump (`Handle::dump_tasks`): poll count, poll time
//! (total and longest) and when the task joined the owned list (its age).
//!
//! Shaped to stay off the hot path and out of the hot header:
//! * The counters live in the task cell's `Trailer` (after the future, beside the join
//!   waker), a line that a poll does not otherwise need until completion. The header, which
//!   every queue operation touches, is unchanged.
//! * Only the thread holding `RUNNING` writes them, so an update is a relaxed load and a
//!   relaxed store (no read-modify-write, no fence); the dump, on another thread, reads them
//!   relaxed under the owned-list shard lock and may see values one poll old.
//! * Poll *time* needs two clock reads per poll, so it is recorded only when the runtime
//!   times polls anyway (`Builder::enable_metrics_poll_time_histogram`); otherwise the dump
//!   reports no poll time. The same two reads feed the worker's poll-time histogram (through
//!   a thread-local, `set_last_poll`). The poll *count* is always recorded.
//! * The age is measured from the moment the task first went idle and joined the owned list
//!   (one clock read per task, beside that list's shard lock), not from `spawn`: a clock read
//!   per spawn would be visible in the spawn microbenchmarks, and a task that never goes idle
//!   is never in the dump anyway. Stored as milliseconds since a process-wide epoch in a
//!   `u32`, compared with wrapping arithmetic: ages are exact up to 49.7 days.
//!
//! * With the schedule-latency histogram on, the thread submitting a woken task stamps the
//!   time here and the poller turns the stamp into a wake → poll latency.
//!
//! 32 bytes per task. The atomics are `loom::unmodeled`: they are observations only, no
//! decision depends on them, so the loom models need not explore them.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::loom::unmodeled::{AtomicU32, AtomicU64, Ordering::Relaxed};

pub(crate) struct TaskStats {
    polls: AtomicU64,
    /// Total poll time in nanoseconds (only with poll timing on).
    poll_nanos: AtomicU64,
    /// Longest poll in microseconds, saturating (only with poll timing on).
    max_poll_micros: AtomicU32,
    /// `epoch_millis()` when the task joined the owned list; 0 before.
    bound_at_millis: AtomicU32,
    /// Nanoseconds since the epoch when the task was last submitted to a run queue (only with
    /// the schedule-latency histogram on); 0: not stamped. Written by the thread that won the
    /// transition to `NOTIFIED` (the only submitter), read by the poller it hands the task to.
    scheduled_at_nanos: AtomicU64,
}

thread_local! {
    /// The duration of the last timed poll on this thread, in ns (`u64::MAX`: none). The
    /// worker's poll-time histogram takes it (`MetricsBatch::end_poll`), so timing a poll costs
    /// one pair of clock reads for both the task's statistics and the histogram.
    static LAST_POLL_NANOS: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Leaves a timed poll's duration for the worker that ran it.
pub(crate) fn set_last_poll(d: Duration) {
    let ns = d.as_nanos().min(u64::MAX as u128 - 1) as u64;
    let _ = LAST_POLL_NANOS.try_with(|c| c.set(ns));
}

/// Takes the duration `set_last_poll` left on this thread, if any.
pub(crate) fn take_last_poll_nanos() -> Option<u64> {
    let ns = LAST_POLL_NANOS.try_with(|c| c.replace(u64::MAX)).unwrap_or(u64::MAX);
    (ns != u64::MAX).then_some(ns)
}

fn epoch() -> Instant {
    static EPOCH: crate::loom::unmodeled::OnceLock<Instant> = crate::loom::unmodeled::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Milliseconds since the first call in this process, truncated to 32 bits, never 0 (0 marks
/// "not bound yet").
fn epoch_millis() -> u32 {
    (epoch().elapsed().as_millis() as u32).max(1)
}

/// Nanoseconds since the epoch, never 0.
fn epoch_nanos() -> u64 {
    (epoch().elapsed().as_nanos() as u64).max(1)
}

/// What the dump reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StatsSnapshot {
    pub(crate) polls: u64,
    pub(crate) age: Duration,
    pub(crate) total_poll_time: Duration,
    pub(crate) max_poll_time: Duration,
}

impl TaskStats {
    pub(crate) fn new() -> TaskStats {
        TaskStats {
            polls: AtomicU64::new(0),
            poll_nanos: AtomicU64::new(0),
            max_poll_micros: AtomicU32::new(0),
            bound_at_millis: AtomicU32::new(0),
            scheduled_at_nanos: AtomicU64::new(0),
        }
    }

    /// The task is being submitted to a run queue now (by its only submitter).
    pub(crate) fn mark_scheduled(&self) {
        self.scheduled_at_nanos.store(epoch_nanos(), Relaxed);
    }

    /// The time since `mark_scheduled`, clearing the stamp; `None` if there was none (the
    /// first poll after `spawn`, or the histogram was turned on meanwhile).
    pub(crate) fn take_schedule_latency(&self) -> Option<Duration> {
        let at = self.scheduled_at_nanos.load(Relaxed);
        if at == 0 {
            return None;
        }
        self.scheduled_at_nanos.store(0, Relaxed);
        Some(Duration::from_nanos(epoch_nanos().saturating_sub(at)))
    }

    /// One poll started (by the thread holding `RUNNING`, the only writer).
    #[inline]
    pub(crate) fn count_poll(&self) {
        self.polls.store(self.polls.load(Relaxed).wrapping_add(1), Relaxed);
    }

    /// One poll took `d` (the thread holding `RUNNING`, the only writer).
    pub(crate) fn add_poll_time(&self, d: Duration) {
        let nanos = d.as_nanos().min(u64::MAX as u128) as u64;
        self.poll_nanos.store(self.poll_nanos.load(Relaxed).saturating_add(nanos), Relaxed);
        let micros = d.as_micros().min(u32::MAX as u128) as u32;
        if micros > self.max_poll_micros.load(Relaxed) {
            self.max_poll_micros.store(micros, Relaxed);
        }
    }

    /// The task is joining the owned list now (its poller, before `bind`).
    pub(crate) fn mark_bound(&self) {
        self.bound_at_millis.store(epoch_millis(), Relaxed);
    }

    pub(crate) fn snapshot(&self) -> StatsSnapshot {
        let bound = self.bound_at_millis.load(Relaxed);
        let age = if bound == 0 { 0 } else { epoch_millis().wrapping_sub(bound) };
        StatsSnapshot {
            polls: self.polls.load(Relaxed),
            age: Duration::from_millis(u64::from(age)),
            total_poll_time: Duration::from_nanos(self.poll_nanos.load(Relaxed)),
            max_poll_time: Duration::from_micros(u64::from(self.max_poll_micros.load(Relaxed))),
        }
    }
}
