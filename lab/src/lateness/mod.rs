//! Timer lateness: how long after its deadline each runtime's `sleep` completes.
//!
//! Timer *accuracy* is not a throughput number, so it is not a micro workload: `weft-lab
//! lateness` runs the same set of sleeps on every runtime — `timers` tasks per round, each
//! sleeping a deterministic duration between 1 and 20 ms — in interleaved rounds (a fresh
//! runtime per round, as in the micro suite), and reports the distribution of
//! `elapsed − requested` per runtime: p50, p99, max. A sleep that completes *early* is a
//! correctness failure and is counted separately (it should always be 0).

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::framework::adapter::{Adapter, RtConfig};
use crate::framework::runtimes::{self, RuntimeId};
use crate::framework::selection::{write_md_json, Selection};
use crate::framework::stats;
use std::path::PathBuf;
use std::process::ExitCode;

/// One runtime's lateness distribution, in microseconds.
#[derive(Debug, Clone, Serialize)]
pub struct LatenessRow {
    pub runtime: String,
    pub sleeps: usize,
    pub early: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// The requested duration of sleep `i` (1–20 ms, spread over the range, same for everyone).
fn requested(i: u64) -> Duration {
    Duration::from_micros(1_000 + (i * 7_919) % 19_000)
}

/// Runs `rounds` interleaved rounds of `timers` sleeps on each runtime.
pub fn measure(chosen: &[RuntimeId], workers: usize, rounds: usize, timers: u64) -> Result<Vec<LatenessRow>, String> {
    let mut lateness: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut early = vec![0usize; chosen.len()];
    for _ in 0..rounds {
        for (i, &rt) in chosen.iter().enumerate() {
            let config = RtConfig::new(rt.flavor(), workers);
            if rt.in_child() {
                return Err("async-std cannot be dropped in process; leave it out of `lateness`".into());
            }
            let samples =
                runtimes::dispatch(rt, Round { config: &config, timers }).map_err(|e| format!("{}: {e}", rt.name()))?;
            for late_ns in samples {
                if late_ns < 0 {
                    early[i] += 1;
                } else {
                    lateness[i].push(late_ns as f64 / 1_000.0);
                }
            }
        }
    }
    Ok(chosen
        .iter()
        .enumerate()
        .map(|(i, rt)| {
            let xs = &lateness[i];
            let pct = |p| if xs.is_empty() { f64::NAN } else { stats::percentile(xs, p) };
            LatenessRow {
                runtime: rt.name().to_string(),
                sleeps: xs.len() + early[i],
                early: early[i],
                p50_us: pct(50.0),
                p99_us: pct(99.0),
                max_us: xs.iter().copied().fold(f64::NAN, f64::max),
            }
        })
        .collect())
}

/// One round of `timers` sleeps on a freshly built runtime.
struct Round<'a> {
    config: &'a RtConfig,
    timers: u64,
}

impl runtimes::WithAdapter for Round<'_> {
    type Output = Result<Vec<i128>, String>;
    fn run<R: Adapter>(self) -> Self::Output {
        round::<R>(self.config, self.timers)
    }
}

/// One round on a freshly built runtime: lateness of each sleep in ns (negative = early).
fn round<R: Adapter>(config: &RtConfig, timers: u64) -> Result<Vec<i128>, String> {
    let runtime = R::build(config).map_err(|e| format!("building the runtime failed: {e}"))?;
    let out = runtime.block_on(async move {
        let handles: Vec<_> = (0..timers)
            .map(|i| {
                R::spawn(async move {
                    let want = requested(i);
                    let start = Instant::now();
                    R::sleep(want).await;
                    start.elapsed().as_nanos() as i128 - want.as_nanos() as i128
                })
            })
            .collect();
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(R::join(h).await.map_err(|_| "a sleeping task panicked".to_string())?);
        }
        Ok::<_, String>(out)
    });
    drop(runtime);
    out
}

/// The table as Markdown.
pub fn markdown(rows: &[LatenessRow], rounds: usize, timers: u64, workers: usize) -> String {
    let mut s = String::new();
    s.push_str("# Timer lateness\n\n");
    s.push_str(&format!(
        "{rounds} interleaved rounds × {timers} concurrent sleeps of 1–20 ms per runtime, {workers} workers \
         (fresh runtime per round). Lateness = elapsed − requested; lower is better. \
         `early` counts sleeps that returned before their deadline (a bug; should be 0).\n\n"
    ));
    s.push_str("| runtime | sleeps | early | p50 | p99 | max |\n|---|---|---|---|---|---|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {:.0} µs | {:.0} µs | {:.0} µs |\n",
            r.runtime, r.sleeps, r.early, r.p50_us, r.p99_us, r.max_us
        ));
    }
    s
}

/// `weft-lab lateness`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved rounds (a fresh runtime per round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Concurrent sleeps per round.
    #[arg(long, default_value_t = 2000)]
    pub timers: u64,
    /// Writes OUT/lateness.md and OUT/lateness.json.
    #[arg(long, default_value = "lab-results/lateness")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// `weft-lab lateness`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let (chosen, workers) = args.selection.resolve(&RuntimeId::IN_PROCESS)?;
    let rows = measure(&chosen, workers, args.rounds.max(1), args.timers.max(1))?;
    let md = markdown(&rows, args.rounds, args.timers, workers);
    write_md_json(&args.out, "lateness", &md, &rows)?;
    let early: usize = rows.iter().map(|r| r.early).sum();
    Ok(if early == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_durations_span_1_to_20_ms() {
        let ds: Vec<Duration> = (0..2000).map(requested).collect();
        assert!(ds.iter().all(|d| *d >= Duration::from_millis(1) && *d < Duration::from_millis(20)));
        assert!(ds.iter().any(|d| *d < Duration::from_millis(2)));
        assert!(ds.iter().any(|d| *d > Duration::from_millis(19)));
    }

    #[test]
    fn weft_never_wakes_early_and_markdown_lists_each_runtime() {
        let rows = measure(&[RuntimeId::WeftCt, RuntimeId::TokioCt], 1, 1, 50).unwrap();
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r.sleeps, 50);
            assert_eq!(r.early, 0, "{} woke a sleep early", r.runtime);
            assert!(r.p50_us >= 0.0 && r.p99_us >= r.p50_us && r.max_us >= r.p99_us);
        }
        let md = markdown(&rows, 1, 50, 1);
        assert!(md.contains("| weft-ct |") && md.contains("| tokio-ct |"));
    }
}
