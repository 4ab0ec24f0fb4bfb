//! `RuntimeMetrics`: the public, read-only view of a runtime's metrics (tokio's names and
//! meanings, all stable in weft).

use std::ops::Range;
use std::time::Duration;

use super::histogram;
use crate::loom::sync::atomic::Ordering::Relaxed;
use crate::runtime::scheduler;

/// A handle to a runtime's metrics, from [`Handle::metrics`](crate::runtime::Handle::metrics).
///
/// Mirrors `tokio::runtime::RuntimeMetrics` (method names, argument order and meanings), with
/// every metric stable (tokio keeps most behind `--cfg tokio_unstable`). Counters are
/// cumulative since the runtime was built; per-worker counters are published by the worker
/// when it parks, every `event_interval` ticks and when it exits, so a busy worker's values
/// may lag by one such interval (see `runtime/metrics/mod.rs`). Reading after the runtime
/// shut down is allowed and gives the final values.
///
/// Methods taking a `worker` index panic if it is `>= num_workers()`.
#[derive(Clone)]
pub struct RuntimeMetrics {
    handle: scheduler::Handle,
}

impl std::fmt::Debug for RuntimeMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeMetrics").field("num_workers", &self.num_workers()).finish()
    }
}

impl RuntimeMetrics {
    pub(crate) fn new(handle: scheduler::Handle) -> RuntimeMetrics {
        RuntimeMetrics { handle }
    }

    fn m(&self) -> &super::SchedulerMetrics {
        self.handle.metrics()
    }

    #[track_caller]
    fn w(&self, worker: usize) -> &super::WorkerMetrics {
        let workers = &self.m().workers;
        assert!(
            worker < workers.len(),
            "worker index {worker} out of range: the runtime has {} workers",
            workers.len()
        );
        &workers[worker]
    }

    /// Number of worker threads (1 for the current-thread flavor).
    pub fn num_workers(&self) -> usize {
        self.m().workers.len()
    }

    /// Tasks spawned and not yet terminated (completed, cancelled or panicked).
    pub fn num_alive_tasks(&self) -> usize {
        let m = self.m();
        let spawned: u64 =
            m.workers.iter().map(|w| w.spawned_count.load(Relaxed)).sum::<u64>() + m.remote_spawned_count.load(Relaxed);
        let done: u64 = m.workers.iter().map(|w| w.terminated_count.load(Relaxed)).sum::<u64>()
            + m.remote_terminated_count.load(Relaxed);
        spawned.saturating_sub(done) as usize
    }

    /// Tasks waiting in the global (injection) queue.
    pub fn global_queue_depth(&self) -> usize {
        self.handle.global_queue_depth()
    }

    /// Tasks spawned since the runtime was built (not counting `spawn_blocking`).
    pub fn spawned_tasks_count(&self) -> u64 {
        let m = self.m();
        m.workers.iter().map(|w| w.spawned_count.load(Relaxed)).sum::<u64>() + m.remote_spawned_count.load(Relaxed)
    }

    /// Tasks scheduled from outside the runtime's workers (spawned or woken from another
    /// thread), which go through the global queue.
    pub fn remote_schedule_count(&self) -> u64 {
        self.m().remote_schedule_count.load(Relaxed)
    }

    /// Times a task was forced to yield because its cooperative budget ran out.
    pub fn budget_forced_yield_count(&self) -> u64 {
        self.m().workers.iter().map(|w| w.forced_yield_count.load(Relaxed)).sum()
    }

    /// Times the worker parked (went to sleep for lack of work).
    pub fn worker_park_count(&self, worker: usize) -> u64 {
        self.w(worker).park_count.load(Relaxed)
    }

    /// Parks plus unparks of the worker: odd while it is parked, even while it runs.
    pub fn worker_park_unpark_count(&self, worker: usize) -> u64 {
        self.w(worker).park_unpark_count.load(Relaxed)
    }

    /// Times the worker woke up and found nothing to run before parking again.
    pub fn worker_noop_count(&self, worker: usize) -> u64 {
        self.w(worker).noop_count.load(Relaxed)
    }

    /// Tasks this worker stole from other workers (counted on the thief).
    pub fn worker_steal_count(&self, worker: usize) -> u64 {
        self.w(worker).steal_count.load(Relaxed)
    }

    /// Successful steal operations by this worker (each takes one or more tasks).
    pub fn worker_steal_operations(&self, worker: usize) -> u64 {
        self.w(worker).steal_operations.load(Relaxed)
    }

    /// Task polls by this worker, and by a compensating thread standing in for it while it was
    /// stuck in a long poll (weft only: tokio has no stand-ins).
    pub fn worker_poll_count(&self, worker: usize) -> u64 {
        self.w(worker).polls()
    }

    /// Time the worker spent awake (running tasks, searching, maintenance), not parked.
    pub fn worker_total_busy_duration(&self, worker: usize) -> Duration {
        self.w(worker).busy_duration()
    }

    /// Tasks scheduled on this worker's own queue by code running on it (spawns, wakes,
    /// yields).
    pub fn worker_local_schedule_count(&self, worker: usize) -> u64 {
        self.w(worker).local_schedule_count.load(Relaxed)
    }

    /// Times this worker's local queue was full and half of it moved to the global queue.
    pub fn worker_overflow_count(&self, worker: usize) -> u64 {
        self.w(worker).overflow_count.load(Relaxed)
    }

    /// Tasks in this worker's local queue now (not counting its LIFO slot).
    pub fn worker_local_queue_depth(&self, worker: usize) -> usize {
        let _ = self.w(worker);
        self.handle.worker_local_queue_depth(worker)
    }

    /// Exponentially weighted mean poll time. Per-poll when the poll-time histogram is
    /// enabled; otherwise the busy time divided by the polls of each publish interval (which
    /// includes scheduling overhead, so it reads slightly high for very short polls).
    pub fn worker_mean_poll_time(&self, worker: usize) -> Duration {
        Duration::from_nanos(self.w(worker).mean_poll_time_ns.load(Relaxed))
    }

    /// Whether the poll-time histogram is on (`Builder::enable_metrics_poll_time_histogram`).
    pub fn poll_time_histogram_enabled(&self) -> bool {
        self.m().config.poll_time_histogram
    }

    /// Number of buckets of every histogram (the poll-time and blocking-queue-latency ones).
    pub fn poll_time_histogram_num_buckets(&self) -> usize {
        histogram::NUM_BUCKETS
    }

    /// The durations bucket `bucket` counts: `[start, end)`; the last bucket ends at
    /// `Duration::MAX`. Panics if `bucket >= poll_time_histogram_num_buckets()`.
    pub fn poll_time_histogram_bucket_range(&self, bucket: usize) -> Range<Duration> {
        histogram::bucket_range(bucket)
    }

    /// Polls of `worker` whose duration fell in `bucket`; 0 when the histogram is disabled.
    pub fn poll_time_histogram_bucket_count(&self, worker: usize, bucket: usize) -> u64 {
        self.w(worker).poll_histogram.as_ref().map_or(0, |h| h.get(bucket))
    }

    /// weft only: the sum of the durations in worker `worker`'s poll-time histogram (zero
    /// when it is disabled); with the bucket counts it gives the exported histogram's `_sum`.
    pub fn poll_time_histogram_sum(&self, worker: usize) -> Duration {
        Duration::from_nanos(self.w(worker).poll_histogram.as_ref().map_or(0, |h| h.sum()))
    }

    /// weft only: whether the schedule-latency histogram is on
    /// (`Builder::enable_metrics_schedule_latency_histogram`).
    pub fn schedule_latency_histogram_enabled(&self) -> bool {
        self.m().config.schedule_latency_histogram
    }

    /// weft only: polls by `worker` whose wake → poll latency fell in `bucket` (the buckets of
    /// `poll_time_histogram_bucket_range`); 0 when the histogram is disabled. Counts wake-ups
    /// (and yields), not the first poll after `spawn`.
    pub fn schedule_latency_histogram_bucket_count(&self, worker: usize, bucket: usize) -> u64 {
        self.w(worker).schedule_latency.as_ref().map_or(0, |h| h.get(bucket))
    }

    /// weft only: the sum of worker `worker`'s schedule latencies (zero when disabled).
    pub fn schedule_latency_histogram_sum(&self, worker: usize) -> Duration {
        Duration::from_nanos(self.w(worker).schedule_latency.as_ref().map_or(0, |h| h.sum()))
    }

    /// weft only: the sum of all blocking-pool queue latencies recorded.
    pub fn blocking_queue_latency_histogram_sum(&self) -> Duration {
        Duration::from_nanos(self.m().blocking_queue_latency.as_ref().map_or(0, |h| h.sum()))
    }

    /// Threads in the blocking pool (busy and idle).
    pub fn num_blocking_threads(&self) -> usize {
        self.handle.blocking().metrics_snapshot().0
    }

    /// Blocking-pool threads waiting for work.
    pub fn num_idle_blocking_threads(&self) -> usize {
        self.handle.blocking().metrics_snapshot().1
    }

    /// Blocking closures queued and not yet started.
    pub fn blocking_queue_depth(&self) -> usize {
        self.handle.blocking().metrics_snapshot().2
    }

    /// weft only: whether the blocking-pool queue-latency histogram is on (default on;
    /// `Builder::enable_metrics_blocking_queue_latency_histogram`).
    pub fn blocking_queue_latency_histogram_enabled(&self) -> bool {
        self.m().blocking_queue_latency.is_some()
    }

    /// weft only: blocking closures whose wait from `spawn_blocking` to the start of the
    /// closure fell in `bucket` (same buckets as the poll-time histogram).
    pub fn blocking_queue_latency_histogram_bucket_count(&self, bucket: usize) -> u64 {
        let _ = histogram::bucket_range(bucket);
        self.m().blocking_queue_latency.as_ref().map_or(0, |h| h.get(bucket))
    }

    /// File descriptors registered with the I/O driver (0 without `enable_io`).
    pub fn io_driver_fd_registered_count(&self) -> u64 {
        self.handle.driver().io().map_or(0, |io| io.metrics.fd_registered.load(Relaxed))
    }

    /// File descriptors deregistered from the I/O driver.
    pub fn io_driver_fd_deregistered_count(&self) -> u64 {
        self.handle.driver().io().map_or(0, |io| io.metrics.fd_deregistered.load(Relaxed))
    }

    /// Readiness events the I/O driver dispatched.
    pub fn io_driver_ready_count(&self) -> u64 {
        self.handle.driver().io().map_or(0, |io| io.metrics.ready.load(Relaxed))
    }

    /// weft only (tokio has no timer metrics): timers registered and neither fired nor
    /// cancelled yet (0 without `enable_time`).
    pub fn num_live_timers(&self) -> u64 {
        self.handle.driver().time().map_or(0, |t| t.metrics.live())
    }

    /// weft only: bytes of memory the task arena holds from the system (its chunks: live task
    /// cells and free slots alike; 0 with `Builder::task_arena(false)`). After a burst of tasks
    /// it falls back within a trim, when a worker goes idle (see `task/arena.rs`).
    pub fn task_arena_retained_bytes(&self) -> usize {
        self.handle.task_arena().map_or(0, |a| a.retained_bytes())
    }

    /// weft only: timers that fired (including those fired by shutdown).
    pub fn timers_fired_count(&self) -> u64 {
        self.handle.driver().time().map_or(0, |t| t.metrics.fired.load(Relaxed))
    }

    /// weft only: polls the blocked-worker monitor saw keep a worker busy longer than
    /// `Builder::long_poll_threshold` (counted when noticed, so a poll still running counts).
    /// Always 0 on the current-thread flavor or with detection off.
    pub fn long_poll_count(&self) -> u64 {
        match &self.handle {
            scheduler::Handle::MultiThread(h) => h.monitor.long_poll_count(),
            scheduler::Handle::CurrentThread(_) => 0,
        }
    }

    /// weft only: the most recent finished long polls (up to 64, oldest first): task id,
    /// spawn location, worker and observed duration.
    pub fn recent_long_polls(&self) -> Vec<crate::runtime::LongPoll> {
        match &self.handle {
            scheduler::Handle::MultiThread(h) => h.monitor.recent_long_polls(),
            scheduler::Handle::CurrentThread(_) => Vec::new(),
        }
    }

    /// weft only: compensating threads started for blocked workers (see
    /// `Builder::compensate_blocked_workers`).
    pub fn compensating_threads_started_count(&self) -> u64 {
        match &self.handle {
            scheduler::Handle::MultiThread(h) => h.monitor.temps_started.load(Relaxed),
            scheduler::Handle::CurrentThread(_) => 0,
        }
    }
}
