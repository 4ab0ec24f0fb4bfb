//! `actors-remote-bench`: one side of a `weft-lab actors-remote` measurement.
//!
//!     actors-remote-bench serve --system weft|zenoh --listen ENDPOINT
//!     actors-remote-bench drive --system weft|zenoh --connect ENDPOINT --workload W --n N
//!
//! `serve` prints `ready` once it accepts and runs until killed. `drive` joins, runs one
//! workload and prints one JSON line (`tell16`, `tell1k`: messages/s, every message counted by
//! the receiver before the clock stops; `ask1`, `ask64`: round trips at 1 or 64 outstanding,
//! p50/p99; `lookup`: names resolved; `watch`: prints `watching`, then `down` the moment the
//! server's death is noticed — the lab kills the server and times the gap).

mod weft_side;
mod zenoh_side;

use std::time::{Duration, Instant};

/// What a workload measured.
pub struct Measured {
    pub ops: u64,
    pub took: Duration,
    /// Per-operation latencies (asks, lookups), µs; empty for throughput runs.
    pub latencies_us: Vec<f64>,
}

/// The drive process's own CPU (user + system) so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p / 100.0).round() as usize]
}

fn usage() -> ! {
    eprintln!("usage: actors-remote-bench serve --system weft|zenoh --listen EP | drive --system weft|zenoh --connect EP --workload W --n N");
    std::process::exit(2)
}

/// Runs `f` for at most `limit`, or fails the process (a hung peer must not hang the lab).
pub async fn bounded<T>(what: &str, limit: Duration, f: impl std::future::Future<Output = T>) -> T {
    match weft::time::timeout(limit, f).await {
        Ok(v) => v,
        Err(_) => {
            eprintln!("actors-remote-bench: {what}: nothing within {limit:?}");
            std::process::exit(3)
        }
    }
}

#[weft::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| usage());
    let (mut system, mut endpoint, mut workload, mut n) = (String::new(), String::new(), String::new(), 1000u64);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--system" => system = value(),
            "--listen" | "--connect" => endpoint = value(),
            "--workload" => workload = value(),
            "--n" => n = value().parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    match (mode.as_str(), system.as_str()) {
        ("serve", "weft") => weft_side::serve(&endpoint).await,
        ("serve", "zenoh") => zenoh_side::serve(&endpoint).await,
        ("drive", sys @ ("weft" | "zenoh")) => {
            let cpu0 = cpu_seconds();
            let m = if sys == "weft" {
                weft_side::drive(&endpoint, &workload, n).await
            } else {
                zenoh_side::drive(&endpoint, &workload, n).await
            };
            let Some(mut m) = m else { return };
            let cpu = cpu_seconds() - cpu0;
            m.latencies_us.sort_by(f64::total_cmp);
            println!(
                "{}",
                serde_json::json!({
                    "system": sys, "workload": workload, "ops": m.ops, "secs": m.took.as_secs_f64(),
                    "per_s": m.ops as f64 / m.took.as_secs_f64(), "driver_cpu_s": cpu,
                    "p50_us": percentile(&m.latencies_us, 50.0), "p99_us": percentile(&m.latencies_us, 99.0),
                })
            );
        }
        _ => usage(),
    }
}

/// Runs `per_task` asks on each of `tasks` tasks, timing each; all latencies, µs.
pub async fn concurrent<F, Fut>(tasks: u64, per_task: u64, ask: F) -> Measured
where
    F: Fn() -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let ask = ask.clone();
            weft::spawn(async move {
                let mut lat = Vec::with_capacity(per_task as usize);
                for _ in 0..per_task {
                    let t = Instant::now();
                    ask().await;
                    lat.push(t.elapsed().as_secs_f64() * 1e6);
                }
                lat
            })
        })
        .collect();
    let mut latencies_us = Vec::new();
    for h in handles {
        latencies_us.extend(h.await.expect("ask task panicked"));
    }
    Measured { ops: tasks * per_task, took: start.elapsed(), latencies_us }
}
