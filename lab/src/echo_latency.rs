//! `weft-lab tcp-echo`: throughput *and* per-message latency of the `tcp_echo` session.
//!
//! The micro suite times `tcp_echo` as one future (throughput only). This command runs the
//! same session (`workloads::net::echo_session`, 64 loopback connections by default,
//! `--connections` for a sweep, 256-byte messages, every echo validated) with each round trip
//! timed, on every runtime in interleaved rounds with a fresh runtime per round, and reports
//! messages per second, the round-trip latency distribution (p50, p99, p99.9) and the CPU
//! time per round trip (user + system of this process over the round: both ends of every
//! connection run on the runtime under test, nothing else runs meanwhile), plus ratios
//! against tokio of the same flavor.

use std::time::Instant;

use serde::Serialize;

use crate::adapter::{Adapter, RtConfig};
use crate::runtimes::{self, RuntimeId};
use crate::stats;
use crate::workloads::net::echo_session;

#[derive(Debug, Clone, Serialize)]
pub struct EchoRow {
    pub runtime: String,
    pub messages: u64,
    /// Median over rounds of messages per second.
    pub msgs_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub connections: u64,
    /// Median over rounds of process CPU time (user + system) per round trip, in µs.
    pub cpu_us_per_msg: f64,
}

/// Runs `rounds` interleaved rounds of `messages` round trips on each runtime.
pub fn measure(
    chosen: &[RuntimeId],
    workers: usize,
    rounds: usize,
    messages: u64,
    connections: u64,
) -> Result<Vec<EchoRow>, String> {
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut cpu_us: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut lat_us: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    for _ in 0..rounds {
        for (i, &rt) in chosen.iter().enumerate() {
            let config = RtConfig::new(rt.flavor(), workers);
            if rt.in_child() {
                return Err("async-std cannot be dropped in process; leave it out of `tcp-echo`".into());
            }
            let (secs, cpu, lat) = runtimes::dispatch(rt, Round { config: &config, messages, connections })
                .map_err(|e| format!("{}: {e}", rt.name()))?;
            rates[i].push(messages as f64 / secs);
            cpu_us[i].push(cpu * 1e6 / messages as f64);
            lat_us[i].extend(lat.into_iter().map(|ns| ns as f64 / 1_000.0));
        }
    }
    Ok(chosen
        .iter()
        .enumerate()
        .map(|(i, rt)| EchoRow {
            runtime: rt.name().to_string(),
            messages: messages * rounds as u64,
            msgs_per_sec: stats::median(&rates[i]),
            p50_us: stats::percentile(&lat_us[i], 50.0),
            p99_us: stats::percentile(&lat_us[i], 99.0),
            p999_us: stats::percentile(&lat_us[i], 99.9),
            connections,
            cpu_us_per_msg: stats::median(&cpu_us[i]),
        })
        .collect())
}

/// One round of `messages` round trips on a freshly built runtime.
struct Round<'a> {
    config: &'a RtConfig,
    messages: u64,
    connections: u64,
}

impl runtimes::WithAdapter for Round<'_> {
    type Output = Result<(f64, f64, Vec<u64>), String>;
    fn run<R: Adapter>(self) -> Self::Output {
        round::<R>(self.config, self.messages, self.connections)
    }
}

/// User + system CPU seconds of this process so far.
fn process_cpu_secs() -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given; RUSAGE_SELF is always valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// One round on a freshly built runtime: (wall seconds, CPU seconds, latencies in ns).
fn round<R: Adapter>(config: &RtConfig, messages: u64, connections: u64) -> Result<(f64, f64, Vec<u64>), String> {
    let runtime = R::build(config).map_err(|e| format!("building the runtime failed: {e}"))?;
    let cpu0 = process_cpu_secs();
    let start = Instant::now();
    let out = runtime.block_on(async move {
        R::join(R::spawn(echo_session::<R>(messages, connections, true)))
            .await
            .map_err(|_| "the echo session panicked".to_string())?
    });
    let secs = start.elapsed().as_secs_f64();
    let cpu = process_cpu_secs() - cpu0;
    drop(runtime);
    out.map(|lat| (secs, cpu, lat))
}

/// The table as Markdown, with ratios against tokio of the same flavor where present.
pub fn markdown(rows: &[EchoRow], rounds: usize, messages: u64, workers: usize, connections: u64) -> String {
    let baseline = |name: &str| {
        let base = if name.ends_with("-ct") { "tokio-ct" } else { "tokio-mt" };
        rows.iter().find(|r| r.runtime == base)
    };
    let mut s = format!("# TCP echo: throughput and round-trip latency, {connections} connections\n\n");
    s.push_str(&format!(
        "{rounds} interleaved rounds × {messages} round trips of 256 bytes over {connections} loopback connections \
         per runtime, {workers} workers, fresh runtime per round; every echo validated. msgs/s and CPU/msg \
         (user + system of the process, both ends on the runtime) are medians over rounds; latencies pool \
         every round trip.\n\n"
    ));
    s.push_str(
        "| runtime | msgs/s | p50 | p99 | p99.9 | CPU/msg | msgs/s ÷ tokio | p99 ÷ tokio | CPU/msg ÷ tokio |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (rate_ratio, p99_ratio, cpu_ratio) = match baseline(&r.runtime) {
            Some(b) => (
                format!("{:.2}×", r.msgs_per_sec / b.msgs_per_sec),
                format!("{:.2}×", r.p99_us / b.p99_us),
                format!("{:.2}×", r.cpu_us_per_msg / b.cpu_us_per_msg),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        s.push_str(&format!(
            "| {} | {:.0} | {:.0} µs | {:.0} µs | {:.0} µs | {:.1} µs | {} | {} | {} |\n",
            r.runtime,
            r.msgs_per_sec,
            r.p50_us,
            r.p99_us,
            r.p999_us,
            r.cpu_us_per_msg,
            rate_ratio,
            p99_ratio,
            cpu_ratio
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_latency_rows_are_complete_and_consistent() {
        let rows = measure(&[RuntimeId::WeftCt, RuntimeId::TokioCt], 1, 1, 256, 16).unwrap();
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r.messages, 256);
            assert_eq!(r.connections, 16);
            assert!(r.cpu_us_per_msg >= 0.0);
            assert!(r.msgs_per_sec > 0.0);
            assert!(r.p50_us > 0.0 && r.p99_us >= r.p50_us && r.p999_us >= r.p99_us, "{r:?}");
        }
        let md = markdown(&rows, 1, 256, 1, 16);
        assert!(md.contains("| weft-ct |") && md.contains("1.00×"));
    }
}
