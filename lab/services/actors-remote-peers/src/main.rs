//! `actors-remote-peers`: one side of a `weft-lab actors-remote` measurement for the peers —
//! kameo's `remote` feature (libp2p) and ractor_cluster — on the real tokio.
//!
//!     actors-remote-peers serve --system kameo|ractor --listen ENDPOINT
//!     actors-remote-peers drive --system kameo|ractor --connect ENDPOINT --workload W --n N
//!
//! Same command line, same JSON line and the same workloads as `actors-remote-bench`
//! (../actors-remote): `tell16`, `tell1k` (messages/s, every message counted by the receiver
//! before the clock stops), `ask1`, `ask64` (16-byte echo round trips at 1 or 64 outstanding,
//! p50/p99), `lookup` (the server actor's registered name resolved N times), `watch` (prints
//! `watching`, then `down REASON` the moment the server's death is noticed, or `down timeout`
//! after 10 s without a notice). ENDPOINT is Zenoh's form, `tcp/HOST:PORT`, as the lab passes
//! it; each side turns it into its own (a libp2p multiaddr, a socket address).
//!
//! Each side is written the way its own documentation shows (kameo's custom-swarm guide and
//! `examples/custom_swarm.rs`; ractor's `ractor_playground/src/distributed.rs`): this crate
//! measures the libraries as their users meet them, not tuned forks of them.

mod kameo_side;
mod ractor_side;

use std::time::{Duration, Instant};

/// What a workload measured.
pub struct Measured {
    pub ops: u64,
    pub took: Duration,
    /// Per-operation latencies (asks, lookups), µs; empty for throughput runs.
    pub latencies_us: Vec<f64>,
}

/// How long a `watch` driver waits for a notice before printing `down timeout`.
pub const WATCH_LIMIT: Duration = Duration::from_secs(10);

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
    eprintln!("usage: actors-remote-peers serve --system kameo|ractor --listen EP | drive --system kameo|ractor --connect EP --workload W --n N");
    std::process::exit(2)
}

/// `tcp/HOST:PORT` (the lab's form) → `(HOST, PORT)`.
pub fn host_port(endpoint: &str) -> (String, u16) {
    let rest = endpoint.strip_prefix("tcp/").unwrap_or_else(|| usage());
    let (host, port) = rest.rsplit_once(':').unwrap_or_else(|| usage());
    (host.to_string(), port.parse().unwrap_or_else(|_| usage()))
}

/// Runs `f` for at most `limit`, or fails the process (a hung peer must not hang the lab).
pub async fn bounded<T>(what: &str, limit: Duration, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(limit, f).await {
        Ok(v) => v,
        Err(_) => {
            eprintln!("actors-remote-peers: {what}: nothing within {limit:?}");
            std::process::exit(3)
        }
    }
}

/// Polls `count` until it reaches `n` past `before`, then asserts it is exactly `n`; fails the
/// process if the count stops moving for 5 s (lost messages never arrive).
pub async fn until_counted<F, Fut>(before: u64, n: u64, mut count: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let (mut last, mut moved) = (u64::MAX, Instant::now());
    loop {
        let got = count().await - before;
        if got >= n {
            assert_eq!(got, n, "the receiver counted {got} of {n} tells");
            return;
        }
        if got != last {
            (last, moved) = (got, Instant::now());
        } else if moved.elapsed() > Duration::from_secs(5) {
            eprintln!("actors-remote-peers: the receiver counted {got} of {n} tells and stopped there");
            std::process::exit(4)
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
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
        ("serve", "kameo") => kameo_side::serve(&endpoint).await,
        ("serve", "ractor") => ractor_side::serve(&endpoint).await,
        ("drive", sys @ ("kameo" | "ractor")) => {
            let cpu0 = cpu_seconds();
            let m = if sys == "kameo" {
                kameo_side::drive(&endpoint, &workload, n).await
            } else {
                ractor_side::drive(&endpoint, &workload, n).await
            };
            let Some(mut m) = m else { std::process::exit(0) };
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
            // Both systems keep background tasks (a swarm, a node server) that outlive main's
            // future; leave without waiting for them.
            std::process::exit(0)
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
            tokio::spawn(async move {
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
