//! The exit summary: with `WEFT_METRICS_DUMP=<path>` in the environment, every runtime appends
//! one JSON line describing its whole life to `<path>` when it is dropped — the runtime's own
//! view of a run, for tools that start a program and want to know afterwards what its runtime
//! saw (`weft-lab tune` reads it to explain which configuration won and why).
//!
//! Why at drop, and why a file: the numbers are final only after the workers, the monitor and
//! the blocking pool have stopped (a long poll still running is recorded by the monitor as it
//! exits), and a file works for any program without a server or an API call. The variable is
//! read when the runtime is dropped (not at `build()`), so it costs nothing until then.
//!
//! Shape (one object per line; every key always present, `null` where a value does not apply):
//! ```json
//! {"pid":4242,"runtime_index":0,"runtime_id":9876,"flavor":"multi_thread","workers":2,
//!  "config":{"worker_threads":2,"max_blocking_threads":16,"blocking_keep_alive_ms":10000,
//!    "global_queue_interval":31,"event_interval":61,"long_poll_threshold_ms":10,"compensate":true},
//!  "polls":120,"steals":3,"steal_operations":2,"parks":40,"noops":5,"busy_seconds":0.12,
//!  "spawned_tasks":30,"remote_schedules":4,"overflows":0,"forced_yields":0,
//!  "long_poll_count":1,"recent_long_polls":[{"task_id":7,"file":"src/main.rs","line":12,
//!    "column":5,"worker":1,"duration_ms":52.1}],"compensating_threads_started":1,
//!  "blocking":{"peak_threads":1,"completed":3,"queue_latency_count":3,
//!    "queue_latency_p50_ms":0.02,"queue_latency_p99_ms":0.03}}
//! ```
//! `runtime_index` counts the summaries this process wrote (0, 1, …), so lines from several
//! runtimes of one process, and from several processes (`pid`), can be told apart. The
//! queue-latency percentiles are the upper bounds of the histogram buckets they fall in (25%
//! resolution, see `histogram.rs`), `null` when nothing was queued or the histogram is off.
//!
//! Failure is never fatal: a path that cannot be opened or written costs one warning line on
//! stderr (`weft: cannot write the metrics summary to …`), never a panic inside `drop`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Duration;

use super::histogram;
use crate::loom::unmodeled::{AtomicU64, Ordering::Relaxed};
use crate::runtime::{scheduler, Handle, RuntimeFlavor};

/// The environment variable naming the file to append to.
pub(crate) const DUMP_VAR: &str = "WEFT_METRICS_DUMP";

/// Summaries written by this process so far (the next `runtime_index`).
static WRITTEN: AtomicU64 = AtomicU64::new(0);

/// Called once by `Runtime::drop`, after shutdown: appends the summary if the variable is set.
pub(crate) fn write_if_requested(handle: &Handle) {
    let Some(path) = std::env::var_os(DUMP_VAR).filter(|p| !p.is_empty()) else { return };
    let index = WRITTEN.fetch_add(1, Relaxed);
    let line = render(handle, index);
    let result = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        // One `write_all` of the whole line: with O_APPEND, lines from concurrent writers
        // (several runtimes, several processes) do not interleave in practice.
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = result {
        eprintln!("weft: cannot write the metrics summary to {} ({DUMP_VAR}): {e}", path.to_string_lossy());
    }
}

/// The summary of `handle`'s runtime as one JSON line (ending in `\n`).
pub(crate) fn render(handle: &Handle, index: u64) -> String {
    let m = handle.metrics();
    let workers = m.num_workers();
    let sum = |f: &dyn Fn(usize) -> u64| (0..workers).map(f).sum::<u64>();
    let busy: Duration = (0..workers).map(|w| m.worker_total_busy_duration(w)).sum();
    let config = handle.inner.config();
    let (threshold, compensate) = match &handle.inner {
        scheduler::Handle::MultiThread(h) => (h.monitor.config.threshold, Some(h.monitor.config.compensate)),
        scheduler::Handle::CurrentThread(_) => (Duration::ZERO, None),
    };
    let (max_blocking, keep_alive, peak_blocking, completed) = handle.inner.blocking().summary();
    let flavor = match handle.runtime_flavor() {
        RuntimeFlavor::CurrentThread => "current_thread",
        RuntimeFlavor::MultiThread => "multi_thread",
    };

    let mut out = String::with_capacity(1024);
    let _ = write!(
        out,
        "{{\"pid\":{},\"runtime_index\":{index},\"runtime_id\":{},\"flavor\":\"{flavor}\",\"workers\":{workers},",
        std::process::id(),
        handle.id(),
    );
    let _ = write!(
        out,
        "\"config\":{{\"worker_threads\":{workers},\"max_blocking_threads\":{max_blocking},\
         \"blocking_keep_alive_ms\":{},\"global_queue_interval\":{},\"event_interval\":{},\
         \"long_poll_threshold_ms\":{},\"compensate\":{}}},",
        keep_alive.as_millis(),
        config.global_queue_interval,
        config.event_interval,
        threshold.as_millis(),
        compensate.map_or("null".to_string(), |c| c.to_string()),
    );
    let _ = write!(
        out,
        "\"polls\":{},\"steals\":{},\"steal_operations\":{},\"parks\":{},\"noops\":{},\"busy_seconds\":{},\
         \"spawned_tasks\":{},\"remote_schedules\":{},\"overflows\":{},\"forced_yields\":{},",
        sum(&|w| m.worker_poll_count(w)),
        sum(&|w| m.worker_steal_count(w)),
        sum(&|w| m.worker_steal_operations(w)),
        sum(&|w| m.worker_park_count(w)),
        sum(&|w| m.worker_noop_count(w)),
        busy.as_secs_f64(),
        m.spawned_tasks_count(),
        m.remote_schedule_count(),
        sum(&|w| m.worker_overflow_count(w)),
        m.budget_forced_yield_count(),
    );
    let _ = write!(out, "\"long_poll_count\":{},\"recent_long_polls\":[", m.long_poll_count());
    for (i, poll) in m.recent_long_polls().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"task_id\":{},\"file\":", poll.task_id.as_u64());
        crate::util::json::push_string(&mut out, poll.spawn_location.file());
        let _ = write!(
            out,
            ",\"line\":{},\"column\":{},\"worker\":{},\"duration_ms\":{}}}",
            poll.spawn_location.line(),
            poll.spawn_location.column(),
            poll.worker,
            millis(poll.duration),
        );
    }
    let queued: Vec<u64> = if m.blocking_queue_latency_histogram_enabled() {
        (0..histogram::NUM_BUCKETS).map(|b| m.blocking_queue_latency_histogram_bucket_count(b)).collect()
    } else {
        Vec::new()
    };
    let _ = writeln!(
        out,
        "],\"compensating_threads_started\":{},\"blocking\":{{\"peak_threads\":{peak_blocking},\
         \"completed\":{completed},\"queue_latency_count\":{},\"queue_latency_p50_ms\":{},\
         \"queue_latency_p99_ms\":{}}}}}",
        m.compensating_threads_started_count(),
        queued.iter().sum::<u64>(),
        bucket_percentile(&queued, 0.50).map_or("null".to_string(), millis),
        bucket_percentile(&queued, 0.99).map_or("null".to_string(), millis),
    );
    out
}

/// Milliseconds as a JSON number (`Display` of an `f64` never uses an exponent).
fn millis(d: Duration) -> String {
    (d.as_secs_f64() * 1e3).to_string()
}

/// The upper bound of the bucket holding the `q` quantile of `counts` (its lower bound for the
/// open-ended last bucket); `None` when the histogram is empty.
fn bucket_percentile(counts: &[u64], q: f64) -> Option<Duration> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (bucket, &c) in counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            let range = histogram::bucket_range(bucket);
            return Some(if range.end == Duration::MAX { range.start } else { range.end });
        }
    }
    None
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn bucket_percentile_picks_the_bucket_holding_the_rank() {
        let mut counts = vec![0u64; histogram::NUM_BUCKETS];
        assert_eq!(bucket_percentile(&counts, 0.5), None);
        let (small, large) = (histogram::bucket_of(1_000), histogram::bucket_of(40_000_000));
        counts[small] = 98;
        counts[large] = 2;
        assert_eq!(bucket_percentile(&counts, 0.50), Some(histogram::bucket_range(small).end));
        assert_eq!(bucket_percentile(&counts, 0.98), Some(histogram::bucket_range(small).end));
        assert_eq!(bucket_percentile(&counts, 0.99), Some(histogram::bucket_range(large).end));
        let last = histogram::NUM_BUCKETS - 1;
        counts[last] = 1_000;
        assert_eq!(bucket_percentile(&counts, 0.99), Some(histogram::bucket_range(last).start));
    }
}
