//! Per-worker counters: `MetricsBatch`, plain fields owned by the worker's core and bumped on
//! the hot path with no synchronisation, and `WorkerMetrics`, the relaxed atomics readers see.
//!
//! The batch holds *cumulative* totals, so publishing is a relaxed `store` of each total (one
//! writer per `WorkerMetrics`), never a read-modify-write. A worker publishes when it parks,
//! at its maintenance tick (every `event_interval` ticks) and when it exits, so a reader is at
//! most one maintenance interval behind a busy worker and exact for a parked or exited one.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::histogram::{AtomicHistogram, HistogramBatch};
use crate::loom::sync::atomic::{AtomicU64, Ordering::Relaxed};

thread_local! {
    /// Terminations of tasks of the scheduler whose handle address is `.0`, counted on this
    /// thread since the batch holding the core last folded them in. One TLS increment per
    /// task end, cheaper than finding the worker's core through the scheduler context.
    static TERMINATED: Cell<(usize, u64)> = const { Cell::new((0, 0)) };
}

/// Counts a task end for the scheduler `owner` if this thread runs that scheduler's core;
/// false otherwise (the caller then counts it in the shared atomic).
#[inline]
pub(crate) fn count_termination(owner: usize) -> bool {
    TERMINATED
        .try_with(|c| {
            let (o, n) = c.get();
            if o == owner {
                c.set((o, n + 1));
                true
            } else {
                false
            }
        })
        .unwrap_or(false)
}

/// Takes this thread's count for `owner` (and keeps counting for it if `keep`).
fn take_terminations(owner: usize, keep: bool) -> u64 {
    TERMINATED
        .try_with(|c| {
            let (o, n) = c.get();
            c.set(if keep { (owner, 0) } else { (0, 0) });
            if o == owner {
                n
            } else {
                0
            }
        })
        .unwrap_or(0)
}

/// Weight of the newest batch in the exponentially weighted mean poll time.
const EWMA_WEIGHT: f64 = 0.1;

/// What a worker publishes. Every field is a cumulative total unless noted.
pub(crate) struct WorkerMetrics {
    pub(crate) park_count: AtomicU64,
    pub(crate) park_unpark_count: AtomicU64,
    pub(crate) noop_count: AtomicU64,
    pub(crate) steal_count: AtomicU64,
    pub(crate) steal_operations: AtomicU64,
    pub(crate) poll_count: AtomicU64,
    pub(crate) busy_ns: AtomicU64,
    pub(crate) local_schedule_count: AtomicU64,
    pub(crate) overflow_count: AtomicU64,
    pub(crate) spawned_count: AtomicU64,
    pub(crate) terminated_count: AtomicU64,
    pub(crate) forced_yield_count: AtomicU64,
    /// Not cumulative: the current exponentially weighted mean poll time.
    pub(crate) mean_poll_time_ns: AtomicU64,
    /// Present when the poll-time histogram is enabled.
    pub(crate) poll_histogram: Option<AtomicHistogram>,
    /// Present when the schedule-latency histogram is enabled; added to directly by the
    /// polling thread (this worker, bar polls off the workers), not batched.
    pub(crate) schedule_latency: Option<AtomicHistogram>,
    /// Polls, and their time, run by compensating threads standing in for this worker while it
    /// was stuck (`multi_thread/compensate.rs`): added to directly (the batch above `store`s its
    /// totals, so it cannot take them), summed into this worker's counts when read.
    pub(crate) stand_in_polls: AtomicU64,
    pub(crate) stand_in_busy_ns: AtomicU64,
}

impl WorkerMetrics {
    pub(crate) fn new(poll_histogram: bool, schedule_latency: bool) -> WorkerMetrics {
        WorkerMetrics {
            park_count: AtomicU64::new(0),
            park_unpark_count: AtomicU64::new(0),
            noop_count: AtomicU64::new(0),
            steal_count: AtomicU64::new(0),
            steal_operations: AtomicU64::new(0),
            poll_count: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            local_schedule_count: AtomicU64::new(0),
            overflow_count: AtomicU64::new(0),
            spawned_count: AtomicU64::new(0),
            terminated_count: AtomicU64::new(0),
            forced_yield_count: AtomicU64::new(0),
            mean_poll_time_ns: AtomicU64::new(0),
            poll_histogram: poll_histogram.then(AtomicHistogram::new),
            schedule_latency: schedule_latency.then(AtomicHistogram::new),
            stand_in_polls: AtomicU64::new(0),
            stand_in_busy_ns: AtomicU64::new(0),
        }
    }

    /// Busy time, stand-ins' polls included.
    pub(crate) fn busy_duration(&self) -> Duration {
        Duration::from_nanos(self.busy_ns.load(Relaxed) + self.stand_in_busy_ns.load(Relaxed))
    }

    /// Polls, stand-ins' included.
    pub(crate) fn polls(&self) -> u64 {
        self.poll_count.load(Relaxed) + self.stand_in_polls.load(Relaxed)
    }
}

/// The worker-owned side. Lives in the worker's `Core`.
pub(crate) struct MetricsBatch {
    park_count: u64,
    park_unpark_count: u64,
    noop_count: u64,
    steal_count: u64,
    steal_operations: u64,
    poll_count: u64,
    busy_ns: u64,
    local_schedule_count: u64,
    overflow_count: u64,
    spawned_count: u64,
    terminated_count: u64,
    /// The scheduler handle's address, keying this thread's `TERMINATED` count.
    owner: usize,
    /// Forced yields are counted in a thread-local by the leaf futures (`coop`); the batch
    /// folds the thread's delta since `forced_yield_base` into `forced_yield_count` whenever
    /// it publishes (always on the thread that holds the core).
    forced_yield_base: u64,
    forced_yield_count: u64,
    /// When the worker last became busy (unparked) or last published its busy time.
    busy_since: Option<Instant>,
    /// `poll_count` when the current mean-poll-time batch began, and the batch's poll time.
    polls_at_batch_start: u64,
    batch_poll_ns: u64,
    mean_poll_time_ns: f64,
    /// `poll_count` at the last unpark (a wake with no poll before the next one is a no-op);
    /// `u64::MAX` before the first.
    polls_at_unpark: u64,
    /// Per-poll timing on (the poll-time histogram is enabled).
    timing: bool,
    poll_histogram: Option<HistogramBatch>,
}

impl MetricsBatch {
    pub(crate) fn new(poll_histogram: bool) -> MetricsBatch {
        MetricsBatch {
            park_count: 0,
            park_unpark_count: 0,
            noop_count: 0,
            steal_count: 0,
            steal_operations: 0,
            poll_count: 0,
            busy_ns: 0,
            local_schedule_count: 0,
            overflow_count: 0,
            spawned_count: 0,
            terminated_count: 0,
            owner: 0,
            forced_yield_base: crate::task::coop::forced_yields_on_this_thread(),
            forced_yield_count: 0,
            busy_since: None,
            polls_at_batch_start: 0,
            batch_poll_ns: 0,
            mean_poll_time_ns: 0.0,
            polls_at_unpark: u64::MAX,
            timing: poll_histogram,
            poll_histogram: poll_histogram.then(HistogramBatch::new),
        }
    }

    /// A thread starts running the core (a worker thread once; a current-thread `block_on`
    /// each time it takes the core).
    pub(crate) fn start(&mut self, owner: usize) {
        self.owner = owner;
        self.terminated_count += take_terminations(owner, true);
        self.forced_yield_base = crate::task::coop::forced_yields_on_this_thread();
        self.busy_since = Some(Instant::now());
    }

    #[inline]
    pub(crate) fn start_poll(&mut self) {
        self.poll_count += 1;
        if self.timing {
            // Clear a value left by a poll this worker did not run (none is expected).
            let _ = crate::task::stats::take_last_poll_nanos();
        }
    }

    /// With timing on, the task harness timed the poll (`task/stats.rs`, for the task's own
    /// statistics) and left the duration in a thread-local: one pair of clock reads serves both
    /// the task and this histogram. A run that polled no future (a cancelled or finished task)
    /// counts as 0 ns.
    #[inline]
    pub(crate) fn end_poll(&mut self) {
        if self.timing {
            let ns = crate::task::stats::take_last_poll_nanos().unwrap_or(0);
            if let Some(h) = self.poll_histogram.as_mut() {
                h.record(ns);
            }
            self.batch_poll_ns += ns;
        }
    }

    #[inline]
    pub(crate) fn inc_local_schedule(&mut self) {
        self.local_schedule_count += 1;
    }

    #[inline]
    pub(crate) fn inc_spawned(&mut self) {
        self.spawned_count += 1;
    }

    #[inline]
    pub(crate) fn inc_overflow(&mut self) {
        self.overflow_count += 1;
    }

    /// One steal operation that took `n` tasks (0 when the victim was empty is not counted).
    pub(crate) fn record_steal(&mut self, n: usize) {
        self.steal_operations += 1;
        self.steal_count += n as u64;
    }

    /// The worker is about to sleep: close the busy period and publish.
    pub(crate) fn about_to_park(&mut self, to: &WorkerMetrics) {
        self.park_count += 1;
        self.park_unpark_count += 1;
        self.close_busy_period(false);
        self.publish(to);
    }

    /// The worker woke up.
    pub(crate) fn unparked(&mut self) {
        self.park_unpark_count += 1;
        if self.poll_count == self.polls_at_unpark {
            self.noop_count += 1;
        }
        self.polls_at_unpark = self.poll_count;
        self.busy_since = Some(Instant::now());
    }

    /// Every `event_interval` ticks of a busy worker: account the busy time so far, publish.
    pub(crate) fn maintenance(&mut self, to: &WorkerMetrics) {
        self.close_busy_period(true);
        self.publish(to);
    }

    fn close_busy_period(&mut self, still_busy: bool) {
        if let Some(since) = self.busy_since.take() {
            let now = Instant::now();
            let elapsed = now.duration_since(since).as_nanos() as u64;
            self.busy_ns += elapsed;
            if !self.timing {
                // Without per-poll timing the busy period is the best estimate of poll time.
                self.batch_poll_ns += elapsed;
            }
            if still_busy {
                self.busy_since = Some(now);
            }
        }
        let batch_polls = self.poll_count - self.polls_at_batch_start;
        if batch_polls > 0 {
            let mean = self.batch_poll_ns as f64 / batch_polls as f64;
            self.mean_poll_time_ns = if self.mean_poll_time_ns == 0.0 {
                mean
            } else {
                self.mean_poll_time_ns + (mean - self.mean_poll_time_ns) * EWMA_WEIGHT
            };
        }
        self.polls_at_batch_start = self.poll_count;
        self.batch_poll_ns = 0;
    }

    /// Stores every total into `to` (relaxed: each value is independent, and this batch is
    /// the only writer).
    pub(crate) fn publish(&mut self, to: &WorkerMetrics) {
        self.terminated_count += take_terminations(self.owner, true);
        let forced_now = crate::task::coop::forced_yields_on_this_thread();
        self.forced_yield_count += forced_now.wrapping_sub(self.forced_yield_base);
        self.forced_yield_base = forced_now;
        to.park_count.store(self.park_count, Relaxed);
        to.park_unpark_count.store(self.park_unpark_count, Relaxed);
        to.noop_count.store(self.noop_count, Relaxed);
        to.steal_count.store(self.steal_count, Relaxed);
        to.steal_operations.store(self.steal_operations, Relaxed);
        to.poll_count.store(self.poll_count, Relaxed);
        to.busy_ns.store(self.busy_ns, Relaxed);
        to.local_schedule_count.store(self.local_schedule_count, Relaxed);
        to.overflow_count.store(self.overflow_count, Relaxed);
        to.spawned_count.store(self.spawned_count, Relaxed);
        to.terminated_count.store(self.terminated_count, Relaxed);
        to.forced_yield_count.store(self.forced_yield_count, Relaxed);
        to.mean_poll_time_ns.store(self.mean_poll_time_ns as u64, Relaxed);
        if let (Some(h), Some(dst)) = (&self.poll_histogram, &to.poll_histogram) {
            h.publish(dst);
        }
    }

    /// The thread stops running the core (a worker exits; a current-thread `block_on`
    /// hands the core back): final publish, and this thread stops counting for it.
    pub(crate) fn exit(&mut self, to: &WorkerMetrics) {
        self.close_busy_period(false);
        self.publish(to);
        self.terminated_count += take_terminations(self.owner, false);
        to.terminated_count.store(self.terminated_count, Relaxed);
    }
}
