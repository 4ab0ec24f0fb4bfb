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
//!   `u32`, compared with wrapping arithmetic: ages are exact, to the coarse clock's tick
//!   (`coarse_millis`), up to 49.7 days.
//! * With the schedule-latency histogram on, the thread submitting a woken task stamps the
//!   time here and the poller turns the stamp into a wake → poll latency.
//!
//! # Size: 8 bytes per task
//! One word (`TaskStats`): for a runtime that neither times polls nor schedules (the default),
//! the poll count (31 bits, saturating at 2^31 − 1) and the bind time packed together; for one
//! that does, the address of a box holding every field, allocated at spawn (those histograms
//! are opt-in and documented as costing a clock read per poll anyway).
//!
//! Why so tight: a small task's cell (header 64 bytes, scheduler handle and output slot 32 —
//! `JoinError` is two words for this — join waker 16, this word 8) is then 120 bytes, a
//! 128-byte slot of the runtime's task arena (`arena.rs`; a unit test holds it there). From
//! malloc, a cell past 120 bytes takes a 144-byte chunk, over glibc's 128-byte fastbin limit,
//! and is moved into its box with a `memcpy` call.
//!
//! Rejected: all fields inline (32 bytes; cell 152 bytes) and 16 bytes (`u32` count, `u32`
//! bind time, a pointer to the timed fields; cell 136). Both cost every spawn more than this
//! word does, mostly `free` coalescing past the fastbins and the `memcpy` (callgrind figures
//! and the program that measures them: docs/notes/performance-figures.md, "Task statistics").
//!
//! The atomics are `loom::unmodeled`: they are observations only, no decision depends on
//! them, so the loom models need not explore them. The timed box's address is written once,
//! at construction, and the box is freed with the cell.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::loom::unmodeled::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// One word in the cell's trailer (see "Size" above). Bit 0 tells the two forms apart:
/// * `1`: untimed. Bits 1..32 are the poll count (saturating at 2^31 − 1), bits 32..64 the
///   bind time (`epoch_millis()`, 0 before).
/// * `0`: the word is the address of a `TimedStats` box (alignment 8, so bit 0 is clear),
///   allocated at spawn and freed by `Drop`; the word never changes afterwards.
pub(crate) struct TaskStats {
    word: AtomicU64,
}

const UNTIMED: u64 = 1;
const POLLS_MAX: u64 = (1 << 31) - 1;

/// Everything, for a task of a runtime that times polls or schedules.
struct TimedStats {
    /// Polls started, saturating at `u32::MAX`.
    polls: AtomicU32,
    /// `epoch_millis()` when the task joined the owned list; 0 before.
    bound_at_millis: AtomicU32,
    /// The runtime times polls (poll-time histogram on).
    times_polls: bool,
    /// The runtime measures wake → poll latency (schedule-latency histogram on).
    times_schedules: bool,
    /// Total poll time in nanoseconds.
    poll_nanos: AtomicU64,
    /// Longest poll in microseconds, saturating.
    max_poll_micros: AtomicU32,
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
/// "not bound yet"). Read from the coarse clock (`coarse_millis`), every reading of an age
/// alike, so an age is exact to the clock's tick.
fn epoch_millis() -> u32 {
    static EPOCH: crate::loom::unmodeled::OnceLock<u64> = crate::loom::unmodeled::OnceLock::new();
    let now = coarse_millis();
    let epoch = *EPOCH.get_or_init(|| now);
    (now.wrapping_sub(epoch) as u32).max(1)
}

/// The monotonic clock in milliseconds, at the kernel's tick (`CLOCK_MONOTONIC_COARSE`: 4 ms
/// at HZ=250). Ages are reported in milliseconds and measured from the first idle, so the
/// tick is all the precision they have ever had to offer; the read costs a load of the
/// kernel's last tick where the precise clock's costs `rdtsc` and a conversion, and every task
/// that goes idle reads it once (docs/notes/performance-figures.md, "Task statistics").
#[cfg(target_os = "linux")]
fn coarse_millis() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable `timespec`; `CLOCK_MONOTONIC_COARSE` exists on every
    // Linux since 2.6.32, and `clock_gettime` writes only through the pointer it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    debug_assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC_COARSE)");
    (ts.tv_sec as u64).wrapping_mul(1000).wrapping_add(ts.tv_nsec as u64 / 1_000_000)
}

/// Elsewhere, the precise monotonic clock.
#[cfg(not(target_os = "linux"))]
fn coarse_millis() -> u64 {
    epoch().elapsed().as_millis() as u64
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
    /// `time_polls`, `time_schedules`: the runtime's poll-time and schedule-latency
    /// histograms are on (see the module comment, "Size"). Copied here at spawn so that a poll
    /// asks the task, on a line it touches anyway, and not the scheduler's shared metrics.
    #[inline]
    pub(crate) fn new(time_polls: bool, time_schedules: bool) -> TaskStats {
        if !(time_polls || time_schedules) {
            return TaskStats { word: AtomicU64::new(UNTIMED) };
        }
        let timed = Box::new(TimedStats {
            polls: AtomicU32::new(0),
            bound_at_millis: AtomicU32::new(0),
            times_polls: time_polls,
            times_schedules: time_schedules,
            poll_nanos: AtomicU64::new(0),
            max_poll_micros: AtomicU32::new(0),
            scheduled_at_nanos: AtomicU64::new(0),
        });
        TaskStats { word: AtomicU64::new(Box::into_raw(timed) as usize as u64) }
    }

    #[inline]
    fn timed(&self) -> Option<&TimedStats> {
        let word = self.word.load(Relaxed);
        if word & UNTIMED != 0 {
            return None;
        }
        // SAFETY: a clear bit 0 means the word is the address `new` got from `Box::into_raw`
        // (exposed by the `as` casts there); it is never rewritten and the box is freed only
        // by `Drop`, after every `&self` borrow has ended.
        Some(unsafe { &*(word as usize as *const TimedStats) })
    }

    /// Whether this task's polls are timed.
    #[inline]
    pub(crate) fn times_polls(&self) -> bool {
        self.timed().is_some_and(|t| t.times_polls)
    }

    /// Whether this task's wake → poll latencies are measured.
    #[inline]
    pub(crate) fn times_schedules(&self) -> bool {
        self.timed().is_some_and(|t| t.times_schedules)
    }

    /// The task is being submitted to a run queue now (by its only submitter).
    pub(crate) fn mark_scheduled(&self) {
        if let Some(t) = self.timed() {
            t.scheduled_at_nanos.store(epoch_nanos(), Relaxed);
        }
    }

    /// The time since `mark_scheduled`, clearing the stamp; `None` if there was none (the
    /// first poll after `spawn`).
    pub(crate) fn take_schedule_latency(&self) -> Option<Duration> {
        let t = self.timed()?;
        let at = t.scheduled_at_nanos.load(Relaxed);
        if at == 0 {
            return None;
        }
        t.scheduled_at_nanos.store(0, Relaxed);
        Some(Duration::from_nanos(epoch_nanos().saturating_sub(at)))
    }

    /// One poll started (by the thread holding `RUNNING`, the only writer). Returns whether
    /// the task is timed (the caller then asks `take_schedule_latency`/`times_polls`).
    #[inline]
    pub(crate) fn count_poll(&self) -> bool {
        let word = self.word.load(Relaxed);
        if word & UNTIMED != 0 {
            if (word >> 1) & POLLS_MAX != POLLS_MAX {
                self.word.store(word + 2, Relaxed);
            }
            return false;
        }
        if let Some(t) = self.timed() {
            t.polls.store(t.polls.load(Relaxed).saturating_add(1), Relaxed);
        }
        true
    }

    /// One poll took `d` (the thread holding `RUNNING`, the only writer).
    pub(crate) fn add_poll_time(&self, d: Duration) {
        let Some(t) = self.timed() else { return };
        let nanos = d.as_nanos().min(u64::MAX as u128) as u64;
        t.poll_nanos.store(t.poll_nanos.load(Relaxed).saturating_add(nanos), Relaxed);
        let micros = d.as_micros().min(u32::MAX as u128) as u32;
        if micros > t.max_poll_micros.load(Relaxed) {
            t.max_poll_micros.store(micros, Relaxed);
        }
    }

    /// The task is joining the owned list now (its poller, before `bind`).
    pub(crate) fn mark_bound(&self) {
        let millis = epoch_millis();
        let word = self.word.load(Relaxed);
        if word & UNTIMED != 0 {
            self.word.store((word & 0xFFFF_FFFF) | (u64::from(millis) << 32), Relaxed);
        } else if let Some(t) = self.timed() {
            t.bound_at_millis.store(millis, Relaxed);
        }
    }

    pub(crate) fn snapshot(&self) -> StatsSnapshot {
        let word = self.word.load(Relaxed);
        let (polls, bound, total, max) = match self.timed() {
            None => ((word >> 1) & POLLS_MAX, (word >> 32) as u32, 0, 0),
            Some(t) => (
                u64::from(t.polls.load(Relaxed)),
                t.bound_at_millis.load(Relaxed),
                t.poll_nanos.load(Relaxed),
                u64::from(t.max_poll_micros.load(Relaxed)),
            ),
        };
        let age = if bound == 0 { 0 } else { epoch_millis().wrapping_sub(bound) };
        StatsSnapshot {
            polls,
            age: Duration::from_millis(u64::from(age)),
            total_poll_time: Duration::from_nanos(total),
            max_poll_time: Duration::from_micros(max),
        }
    }
}

impl Drop for TaskStats {
    fn drop(&mut self) {
        let word = *self.word.get_mut();
        if word & UNTIMED == 0 {
            // SAFETY: a clear bit 0 is the address from `Box::into_raw` in `new`; the cell
            // (and so these statistics) is being dropped, so no borrow of the box remains.
            drop(unsafe { Box::from_raw(word as usize as *mut TimedStats) });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn untimed_stats_are_8_bytes_and_count_polls() {
        assert_eq!(std::mem::size_of::<TaskStats>(), 8);
        let s = TaskStats::new(false, false);
        assert!(!s.count_poll());
        assert!(!s.count_poll());
        s.add_poll_time(Duration::from_millis(5));
        s.mark_scheduled();
        assert_eq!(s.take_schedule_latency(), None);
        let snap = s.snapshot();
        assert_eq!(snap.polls, 2);
        assert_eq!(snap.total_poll_time, Duration::ZERO);
    }

    #[test]
    fn timed_stats_sum_poll_times_and_take_the_schedule_stamp_once() {
        let s = TaskStats::new(true, true);
        assert!(s.times_polls() && s.times_schedules());
        s.add_poll_time(Duration::from_micros(300));
        s.add_poll_time(Duration::from_micros(700));
        s.mark_scheduled();
        assert!(s.take_schedule_latency().is_some());
        assert_eq!(s.take_schedule_latency(), None);
        let snap = s.snapshot();
        assert_eq!(snap.total_poll_time, Duration::from_micros(1000));
        assert_eq!(snap.max_poll_time, Duration::from_micros(700));
    }

    #[test]
    fn the_poll_count_saturates_and_keeps_the_bind_time() {
        let s = TaskStats::new(false, false);
        s.mark_bound();
        s.word.store(s.word.load(Relaxed) | ((POLLS_MAX - 1) << 1), Relaxed);
        s.count_poll();
        s.count_poll();
        let snap = s.snapshot();
        assert_eq!(snap.polls, POLLS_MAX);
        assert!(snap.age < Duration::from_secs(60), "the bind time survived: {:?}", snap.age);
        let t = TaskStats::new(true, false);
        assert!(t.count_poll());
        t.mark_bound();
        assert_eq!(t.snapshot().polls, 1);
    }
}
