//! Exporting runtime metrics: a snapshot of [`RuntimeMetrics`] as metric *families*
//! (`Family`), rendered in the Prometheus text format 0.0.4 (`text`, no dependency) or in
//! OpenMetrics (`openmetrics`, feature `openmetrics`, through the `prometheus-client`
//! crate), and an HTTP endpoint serving them (`serve`, feature `hyper`), which also serves
//! the task dump as JSON (`tasks`).
//!
//! Why one snapshot type and two renderers: the two formats differ in small, strict ways
//! (a counter family is `x_total` in 0.0.4 and `x` with sample `x_total` in OpenMetrics; the
//! `# EOF` line; content types), and Prometheus's own linter (`promtool check metrics`)
//! only reads 0.0.4. Reading the runtime once into families keeps the two outputs the
//! same numbers, and the endpoint picks the renderer by the scrape's `Accept` header, as
//! Prometheus exporters do.
//!
//! Names: `weft_` + tokio's metric name; durations in seconds (`_seconds`), per-worker
//! metrics carry a `worker` label. Histograms export every bucket of the runtime's
//! log-linear layout (`le` = the bucket's upper edge in seconds).
//!
//! **Architecture Invariant:** exporting reads the runtime at scrape time through the public
//! `RuntimeMetrics` only; nothing here is on a scheduler path.

pub mod tasks;
pub mod text;

#[cfg(feature = "openmetrics")]
pub mod openmetrics;

#[cfg(all(feature = "hyper", not(loom)))]
mod serve;
#[cfg(all(feature = "hyper", not(loom)))]
pub use serve::serve;

use crate::runtime::RuntimeMetrics;

/// Kind of a metric family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One sample's value.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Int(u64),
    Float(f64),
    /// Cumulative `(upper edge in seconds, count)` pairs (the last edge is `+Inf`), sum, count.
    Histogram {
        buckets: Vec<(f64, u64)>,
        sum: f64,
        count: u64,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Sample {
    pub(crate) worker: Option<usize>,
    pub(crate) value: Value,
}

/// A metric family: the name (without `_total` for counters), help text, kind, samples.
#[derive(Clone, Debug)]
pub(crate) struct Family {
    pub(crate) name: &'static str,
    pub(crate) help: &'static str,
    pub(crate) kind: Kind,
    pub(crate) samples: Vec<Sample>,
}

fn one(name: &'static str, help: &'static str, kind: Kind, value: Value) -> Family {
    Family { name, help, kind, samples: vec![Sample { worker: None, value }] }
}

fn per_worker(
    m: &RuntimeMetrics,
    name: &'static str,
    help: &'static str,
    kind: Kind,
    f: impl Fn(usize) -> Value,
) -> Family {
    let samples = (0..m.num_workers()).map(|w| Sample { worker: Some(w), value: f(w) }).collect();
    Family { name, help, kind, samples }
}

/// Cumulative buckets from per-bucket counts.
fn histogram(m: &RuntimeMetrics, count_of: impl Fn(usize) -> u64, sum: std::time::Duration) -> Value {
    let n = m.poll_time_histogram_num_buckets();
    let mut cumulative = 0;
    let mut buckets = Vec::with_capacity(n);
    for b in 0..n {
        cumulative += count_of(b);
        let edge = if b == n - 1 { f64::INFINITY } else { m.poll_time_histogram_bucket_range(b).end.as_secs_f64() };
        buckets.push((edge, cumulative));
    }
    Value::Histogram { buckets, sum: sum.as_secs_f64(), count: cumulative }
}

/// Reads every metric of the runtime once.
pub(crate) fn snapshot(m: &RuntimeMetrics) -> Vec<Family> {
    use Kind::*;
    use Value::*;
    let int = |v: usize| Int(v as u64);
    let mut f = vec![
        one("weft_workers", "Number of worker threads.", Gauge, int(m.num_workers())),
        one("weft_alive_tasks", "Tasks spawned and not yet terminated.", Gauge, int(m.num_alive_tasks())),
        one("weft_global_queue_depth", "Tasks in the global (injection) queue.", Gauge, int(m.global_queue_depth())),
        one("weft_spawned_tasks", "Tasks spawned since the runtime was built.", Counter, Int(m.spawned_tasks_count())),
        one(
            "weft_remote_schedule",
            "Tasks scheduled from outside the runtime's workers.",
            Counter,
            Int(m.remote_schedule_count()),
        ),
        one(
            "weft_budget_forced_yield",
            "Times a task was forced to yield because its cooperative budget ran out.",
            Counter,
            Int(m.budget_forced_yield_count()),
        ),
        per_worker(m, "weft_worker_park", "Times the worker parked.", Counter, |w| Int(m.worker_park_count(w))),
        per_worker(m, "weft_worker_park_unpark", "Parks plus unparks of the worker.", Counter, |w| {
            Int(m.worker_park_unpark_count(w))
        }),
        per_worker(m, "weft_worker_noop", "Wake-ups of the worker that found no work.", Counter, |w| {
            Int(m.worker_noop_count(w))
        }),
        per_worker(m, "weft_worker_steal", "Tasks the worker stole from others.", Counter, |w| {
            Int(m.worker_steal_count(w))
        }),
        per_worker(m, "weft_worker_steal_operations", "Steal operations of the worker.", Counter, |w| {
            Int(m.worker_steal_operations(w))
        }),
        per_worker(m, "weft_worker_poll", "Task polls by the worker.", Counter, |w| Int(m.worker_poll_count(w))),
        per_worker(m, "weft_worker_busy_duration_seconds", "Time the worker was not parked.", Counter, |w| {
            Float(m.worker_total_busy_duration(w).as_secs_f64())
        }),
        per_worker(m, "weft_worker_local_schedule", "Tasks scheduled on the worker's own queue.", Counter, |w| {
            Int(m.worker_local_schedule_count(w))
        }),
        per_worker(m, "weft_worker_overflow", "Times the worker's local queue overflowed.", Counter, |w| {
            Int(m.worker_overflow_count(w))
        }),
        per_worker(m, "weft_worker_local_queue_depth", "Tasks in the worker's local queue.", Gauge, |w| {
            int(m.worker_local_queue_depth(w))
        }),
        per_worker(m, "weft_worker_mean_poll_time_seconds", "Weighted mean poll time of the worker.", Gauge, |w| {
            Float(m.worker_mean_poll_time(w).as_secs_f64())
        }),
        one("weft_blocking_threads", "Threads in the blocking pool.", Gauge, int(m.num_blocking_threads())),
        one("weft_idle_blocking_threads", "Idle blocking-pool threads.", Gauge, int(m.num_idle_blocking_threads())),
        one("weft_blocking_queue_depth", "Blocking closures waiting to start.", Gauge, int(m.blocking_queue_depth())),
        one(
            "weft_io_driver_fd_registered",
            "File descriptors registered with the I/O driver.",
            Counter,
            Int(m.io_driver_fd_registered_count()),
        ),
        one(
            "weft_io_driver_fd_deregistered",
            "File descriptors deregistered from the I/O driver.",
            Counter,
            Int(m.io_driver_fd_deregistered_count()),
        ),
        one(
            "weft_io_driver_ready",
            "Readiness events dispatched by the I/O driver.",
            Counter,
            Int(m.io_driver_ready_count()),
        ),
        one("weft_live_timers", "Timers registered and not yet fired or cancelled.", Gauge, Int(m.num_live_timers())),
        one("weft_timers_fired", "Timers fired.", Counter, Int(m.timers_fired_count())),
        one(
            "weft_task_arena_retained_bytes",
            "Bytes the task arena holds from the system (live task cells and free slots).",
            Gauge,
            int(m.task_arena_retained_bytes()),
        ),
    ];
    if m.poll_time_histogram_enabled() {
        f.push(per_worker(m, "weft_poll_time_seconds", "Task poll durations.", Histogram, |w| {
            histogram(m, |b| m.poll_time_histogram_bucket_count(w, b), m.poll_time_histogram_sum(w))
        }));
    }
    if m.schedule_latency_histogram_enabled() {
        f.push(per_worker(
            m,
            "weft_schedule_latency_seconds",
            "Time from a task's wake-up to its poll.",
            Histogram,
            |w| histogram(m, |b| m.schedule_latency_histogram_bucket_count(w, b), m.schedule_latency_histogram_sum(w)),
        ));
    }
    if m.blocking_queue_latency_histogram_enabled() {
        f.push(one(
            "weft_blocking_queue_latency_seconds",
            "Time from spawn_blocking to the start of the closure.",
            Histogram,
            histogram(
                m,
                |b| m.blocking_queue_latency_histogram_bucket_count(b),
                m.blocking_queue_latency_histogram_sum(),
            ),
        ));
    }
    f
}
