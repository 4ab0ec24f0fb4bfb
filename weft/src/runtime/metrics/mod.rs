//! Runtime metrics: what the schedulers, the drivers and the blocking pool count, and how a
//! reader on any thread sees it ([`RuntimeMetrics`], from `Handle::metrics()`).
//!
//! # Glossary
//! * **batch** (`worker::MetricsBatch`) — a worker's own counters: plain `u64` fields inside
//!   its `Core`, bumped with no synchronisation on the hot path (a poll, a local schedule, a
//!   steal).
//! * **published** (`worker::WorkerMetrics`) — the relaxed atomics a reader loads. The batch
//!   keeps cumulative totals and publishes them with plain `store`s (it is the only writer).
//! * **shared counters** (`SchedulerMetrics`, `IoDriverMetrics`, `TimerCounters`) — events
//!   that already cross threads under a lock or a syscall (a spawn from outside the runtime,
//!   a socket registration, a timer registration): a relaxed `fetch_add` there is noise next
//!   to the lock it sits beside.
//! * **task ends** — counted for `num_alive_tasks` (= spawned − ended) through
//!   `Schedule::task_terminated`, called once per task from `task/harness.rs`: a thread-local
//!   counter keyed by the scheduler whose core the thread runs (`worker::count_termination`),
//!   folded into the batch when it publishes; ends on any other thread (shutdown from the
//!   dropping thread) go to a shared atomic.
//! * **gauges** (queue depths, live tasks, blocking threads) — read from the live structures
//!   at the moment `RuntimeMetrics` is asked, never cached.
//!
//! # When values are published
//! A worker publishes when it parks, every `event_interval` ticks (its maintenance tick) and
//! when it exits; the current-thread scheduler when it parks in the driver, every
//! `event_interval` ticks and when `block_on` hands its core back. So a parked or exited
//! worker's numbers are exact, and a busy worker's are at most one maintenance interval old.
//! After the runtime is dropped the numbers are final (every worker published on exit) and
//! reading them is still allowed: `RuntimeMetrics` holds the scheduler handle alive.
//!
//! **Architecture Invariant:** no metric adds a shared atomic write to the per-poll or
//! per-local-schedule path. Per-poll clock reads happen only with the poll-time histogram on.
//!
//! # Task identity
//! Every task's header records its spawn location (`#[track_caller]` down the spawn path to
//! `task::new_task`: one pointer per task, no clock read). `Handle::dump_tasks` walks the
//! owned-task lists (`dump.rs`) and reads each task's statistics (`task/stats.rs`: poll count
//! always, poll times with poll timing on, age from one clock read when the task first goes
//! idle), kept in the cell's trailer rather than the header every queue operation touches.
//!
//! # Histograms
//! `histogram.rs`: log-linear buckets (4 per power of two from 128 ns to ~69 s). The
//! poll-time histogram is per worker (batched like the counters); the schedule-latency
//! histogram (opt-in: wake → start of the poll, from a timestamp in the task's cold
//! statistics, `task/stats.rs`) is per worker, added to by the polling worker; the blocking-pool
//! queue-latency histogram is one set of shared atomics (a blocking spawn is a
//! microsecond-scale hand-off to another thread, so a relaxed add is free by comparison).
//!
//! # Exit summary
//! `exit_summary.rs`: with `WEFT_METRICS_DUMP=<path>` set, `Runtime::drop` appends one JSON
//! line of final totals, effective configuration and recent long polls to `<path>`
//! (`weft-lab tune` reads it for its diagnosis).
//!
//! # Rejected alternatives
//! * *Shared atomics per event* (simple, always exact): a contended cache line per spawn and
//!   per poll; the lab's spawn microbenchmarks run a few hundred ns per task, where one
//!   contended RMW is visible.
//! * *Thread-local counters read by walking threads*: no portable way to read another
//!   thread's TLS, and a worker's counters must survive the thread (metrics after shutdown).
//! * *Per-poll timing always on* (for a true mean poll time): two clock reads per poll. The
//!   mean poll time is instead a batch average (busy time / polls between publishes, folded
//!   into an exponentially weighted mean) unless the poll-time histogram is enabled, in which
//!   case the per-poll times are used.

pub(crate) mod dump;
pub(crate) mod exit_summary;
pub(crate) mod histogram;
mod runtime;
pub(crate) mod worker;

pub use dump::{TaskInfo, TaskState};
pub use runtime::RuntimeMetrics;

use crossbeam_utils::CachePadded;
use std::time::Instant;

use crate::loom::sync::atomic::{AtomicU64, Ordering::Relaxed};
use histogram::AtomicHistogram;
use worker::WorkerMetrics;

/// Which optional (costly) measurements a runtime takes; set by the `Builder`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MetricsConfig {
    /// Per-poll clock reads feeding the poll-time histogram (and the exact mean poll time).
    pub(crate) poll_time_histogram: bool,
    /// Submit → start latency of blocking-pool closures.
    pub(crate) blocking_queue_latency_histogram: bool,
    /// Wake → poll latency of tasks (a clock read per wake and per poll; per-worker histograms).
    pub(crate) schedule_latency_histogram: bool,
}

impl MetricsConfig {
    /// The defaults, with `WEFT_METRICS_POLL_TIME_HISTOGRAM=1` and
    /// `WEFT_METRICS_SCHEDULE_LATENCY_HISTOGRAM=1` turning those histograms on (so their cost
    /// can be measured without code changes).
    pub(crate) fn from_env() -> MetricsConfig {
        let on = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
        MetricsConfig {
            poll_time_histogram: on("WEFT_METRICS_POLL_TIME_HISTOGRAM"),
            blocking_queue_latency_histogram: true,
            schedule_latency_histogram: on("WEFT_METRICS_SCHEDULE_LATENCY_HISTOGRAM"),
        }
    }
}

/// Counters owned by a scheduler handle (either flavor).
///
/// The shared counters are each on their own cache line (`CachePadded`): `config` and the
/// `workers` pointer are read on every poll and spawn, and when they shared a line with
/// `remote_spawned_count` every spawn from outside the workers would invalidate that line in
/// every worker's cache (the lab's `spawn_many` on the multi-thread runtime; figures in
/// docs/notes/performance-figures.md, "Scheduler metrics").
pub(crate) struct SchedulerMetrics {
    pub(crate) workers: Box<[WorkerMetrics]>,
    /// Tasks pushed to the injection queue from outside the workers (spawns and wakes).
    pub(crate) remote_schedule_count: CachePadded<AtomicU64>,
    /// Tasks spawned from outside any worker of this runtime.
    pub(crate) remote_spawned_count: CachePadded<AtomicU64>,
    /// Tasks that terminated while no worker core of this runtime was on the thread.
    pub(crate) remote_terminated_count: CachePadded<AtomicU64>,
    pub(crate) blocking_queue_latency: Option<CachePadded<AtomicHistogram>>,
    pub(crate) config: MetricsConfig,
}

impl SchedulerMetrics {
    pub(crate) fn new(num_workers: usize, config: MetricsConfig) -> SchedulerMetrics {
        SchedulerMetrics {
            workers: (0..num_workers)
                .map(|_| WorkerMetrics::new(config.poll_time_histogram, config.schedule_latency_histogram))
                .collect(),
            remote_schedule_count: CachePadded::new(AtomicU64::new(0)),
            remote_spawned_count: CachePadded::new(AtomicU64::new(0)),
            remote_terminated_count: CachePadded::new(AtomicU64::new(0)),
            blocking_queue_latency: config
                .blocking_queue_latency_histogram
                .then(|| CachePadded::new(AtomicHistogram::new())),
            config,
        }
    }

    pub(crate) fn inc_remote_schedule(&self) {
        self.remote_schedule_count.fetch_add(1, Relaxed);
    }

    pub(crate) fn inc_remote_spawned(&self) {
        self.remote_spawned_count.fetch_add(1, Relaxed);
    }

    pub(crate) fn inc_remote_terminated(&self) {
        self.remote_terminated_count.fetch_add(1, Relaxed);
    }

    /// A task scheduled `latency` ago is being polled by worker `worker` (its own histogram, so
    /// the relaxed adds stay on a line that worker alone writes, except for polls off the workers).
    pub(crate) fn record_schedule_latency(&self, worker: usize, latency: std::time::Duration) {
        if let Some(h) = self.workers.get(worker).and_then(|w| w.schedule_latency.as_ref()) {
            h.record_shared(latency.as_nanos().min(u64::MAX as u128) as u64);
        }
    }

    /// A blocking-pool closure queued at `queued_at` starts now.
    pub(crate) fn record_blocking_queue_latency(&self, queued_at: Instant) {
        if let Some(h) = &self.blocking_queue_latency {
            h.record_shared(queued_at.elapsed().as_nanos() as u64);
        }
    }
}

/// Counters of the I/O driver (`runtime/io`).
#[derive(Default)]
pub(crate) struct IoDriverMetrics {
    pub(crate) fd_registered: AtomicU64,
    pub(crate) fd_deregistered: AtomicU64,
    pub(crate) ready: AtomicU64,
}

impl IoDriverMetrics {
    pub(crate) fn inc_registered(&self) {
        self.fd_registered.fetch_add(1, Relaxed);
    }
    pub(crate) fn inc_deregistered(&self) {
        self.fd_deregistered.fetch_add(1, Relaxed);
    }
    /// One driver turn dispatched `n` readiness events (one add per turn, by the owner).
    pub(crate) fn add_ready(&self, n: u64) {
        if n > 0 {
            self.ready.fetch_add(n, Relaxed);
        }
    }
}

/// Counters of the time driver; each is bumped under the driver's lock.
#[derive(Default)]
pub(crate) struct TimerCounters {
    pub(crate) registered: AtomicU64,
    pub(crate) fired: AtomicU64,
    pub(crate) cancelled: AtomicU64,
}

impl TimerCounters {
    pub(crate) fn inc_registered(&self) {
        self.registered.fetch_add(1, Relaxed);
    }
    pub(crate) fn inc_fired(&self) {
        self.fired.fetch_add(1, Relaxed);
    }
    pub(crate) fn inc_cancelled(&self) {
        self.cancelled.fetch_add(1, Relaxed);
    }
    pub(crate) fn live(&self) -> u64 {
        let done = self.fired.load(Relaxed) + self.cancelled.load(Relaxed);
        self.registered.load(Relaxed).saturating_sub(done)
    }
}
