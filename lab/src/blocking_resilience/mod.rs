//! `weft-lab blocking-resilience`: what one blocking task does to everybody else.
//!
//! Like timer lateness this is a latency distribution, not a throughput number, so it is a
//! subcommand rather than a micro workload. Each round builds a runtime with 2 workers; one
//! task spawns `tasks` short tasks (each records its *scheduling latency*: start of its first
//! poll − its spawn) and a 10 ms timer, then blocks its worker for `block` — in
//! `std::thread::sleep` (the `sleep` mode) or in a busy loop (`spin`). The tasks land on the
//! blocked worker's own queue (and LIFO slot), the case where a runtime that does not
//! compensate relies on stealing alone. Reported per runtime and mode: p50/p99/max of the
//! others' scheduling latency and the timer's lateness. Rounds are interleaved across runtimes
//! (fresh runtime per round).
//!
//! weft is measured twice, with compensation on and off; the switch is the `WEFT_COMPENSATE`
//! environment variable (the path a deployment uses), set by this single-threaded driver
//! between rounds while no runtime is alive.
//!
//! Validation: every short task must have run exactly once and the blocker must have blocked
//! for at least `block`; otherwise the round fails.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::framework::adapter::{Adapter, RtConfig};
use crate::framework::runtimes::{self, RuntimeId};
use crate::framework::selection::{write_md_json, Selection};
use crate::framework::stats;
use std::path::PathBuf;
use std::process::ExitCode;

const WORKERS: usize = 2;
const TIMER: Duration = Duration::from_millis(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Sleep,
    Spin,
}

/// One (runtime, mode) row; latencies in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub runtime: String,
    pub mode: Mode,
    pub tasks: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Lateness of the 10 ms timer (one per round): the worst round.
    pub timer_late_max_ms: f64,
}

/// A measured contestant: a runtime, and for weft whether compensation is on.
#[derive(Debug, Clone, Copy)]
struct Contestant {
    rt: RuntimeId,
    compensate: Option<bool>,
}

impl Contestant {
    fn label(self) -> String {
        match self.compensate {
            Some(true) => format!("{} (compensation on)", self.rt.name()),
            Some(false) => format!("{} (compensation off)", self.rt.name()),
            None => self.rt.name().to_string(),
        }
    }
}

/// Runs `rounds` interleaved rounds per contestant and mode.
pub fn measure(chosen: &[RuntimeId], rounds: usize, tasks: usize, block: Duration) -> Result<Vec<Row>, String> {
    let mut contestants = Vec::new();
    for &rt in chosen {
        if rt.in_child() {
            return Err("async-std cannot be dropped in process; leave it out of `blocking-resilience`".into());
        }
        if rt.flavor() != crate::framework::adapter::Flavor::MultiThread {
            continue; // one worker blocked = the whole current-thread runtime blocked
        }
        if rt.is_weft() {
            contestants.push(Contestant { rt, compensate: Some(true) });
            contestants.push(Contestant { rt, compensate: Some(false) });
        } else {
            contestants.push(Contestant { rt, compensate: None });
        }
    }
    let mut rows = Vec::new();
    for mode in [Mode::Sleep, Mode::Spin] {
        let mut lat: Vec<Vec<f64>> = vec![Vec::new(); contestants.len()];
        let mut timer: Vec<f64> = vec![0.0; contestants.len()];
        for _ in 0..rounds {
            for (i, c) in contestants.iter().enumerate() {
                // Only weft rounds touch the environment (and put back what was there).
                let saved = c.compensate.map(|on| {
                    let saved = std::env::var_os("WEFT_COMPENSATE");
                    std::env::set_var("WEFT_COMPENSATE", if on { "1" } else { "0" });
                    saved
                });
                let config = RtConfig::new(c.rt.flavor(), WORKERS);
                let out = runtimes::dispatch(c.rt, Round { config: &config, tasks, block, mode });
                match saved {
                    Some(Some(v)) => std::env::set_var("WEFT_COMPENSATE", v),
                    Some(None) => std::env::remove_var("WEFT_COMPENSATE"),
                    None => {}
                }
                let out = out.map_err(|e| format!("{}: {e}", c.label()))?;
                lat[i].extend(out.latencies_ms);
                timer[i] = timer[i].max(out.timer_late_ms);
            }
        }
        for (i, c) in contestants.iter().enumerate() {
            let xs = &lat[i];
            rows.push(Row {
                runtime: c.label(),
                mode,
                tasks: xs.len(),
                p50_ms: stats::percentile(xs, 50.0),
                p99_ms: stats::percentile(xs, 99.0),
                max_ms: xs.iter().copied().fold(f64::NAN, f64::max),
                timer_late_max_ms: timer[i],
            });
        }
    }
    Ok(rows)
}

struct Round<'a> {
    config: &'a RtConfig,
    tasks: usize,
    block: Duration,
    mode: Mode,
}

struct RoundOut {
    latencies_ms: Vec<f64>,
    timer_late_ms: f64,
}

impl runtimes::WithAdapter for Round<'_> {
    type Output = Result<RoundOut, String>;
    fn run<R: Adapter>(self) -> Self::Output {
        round::<R>(self.config, self.tasks, self.block, self.mode)
    }
}

fn block_worker(mode: Mode, d: Duration) {
    match mode {
        Mode::Sleep => std::thread::sleep(d),
        Mode::Spin => {
            let start = Instant::now();
            while start.elapsed() < d {
                std::hint::spin_loop();
            }
        }
    }
}

fn round<R: Adapter>(config: &RtConfig, tasks: usize, block: Duration, mode: Mode) -> Result<RoundOut, String> {
    let runtime = R::build(config).map_err(|e| format!("building the runtime failed: {e}"))?;
    let ran = Arc::new(AtomicUsize::new(0));
    let ran2 = ran.clone();
    let out = runtime.block_on(async move {
        let blocker = R::spawn(async move {
            let timer = R::spawn(async {
                let start = Instant::now();
                R::sleep(TIMER).await;
                start.elapsed().saturating_sub(TIMER)
            });
            let handles: Vec<_> = (0..tasks)
                .map(|_| {
                    let ran = ran2.clone();
                    let spawned = Instant::now();
                    R::spawn(async move {
                        ran.fetch_add(1, Relaxed);
                        spawned.elapsed()
                    })
                })
                .collect();
            let start = Instant::now();
            block_worker(mode, block);
            (timer, handles, start.elapsed())
        });
        let (timer, handles, blocked) = R::join(blocker).await.map_err(|_| "the blocker panicked".to_string())?;
        let mut latencies_ms = Vec::with_capacity(handles.len());
        for h in handles {
            let d = R::join(h).await.map_err(|_| "a short task panicked".to_string())?;
            latencies_ms.push(d.as_secs_f64() * 1e3);
        }
        let late = R::join(timer).await.map_err(|_| "the timer task panicked".to_string())?;
        Ok::<_, String>((latencies_ms, late, blocked))
    });
    drop(runtime);
    let (latencies_ms, late, blocked) = out?;
    let n = ran.load(Relaxed);
    if n != tasks || latencies_ms.len() != tasks {
        return Err(format!("{n} of {tasks} short tasks ran"));
    }
    if blocked < block {
        return Err(format!("the blocker blocked {blocked:?}, less than {block:?}"));
    }
    Ok(RoundOut { latencies_ms, timer_late_ms: late.as_secs_f64() * 1e3 })
}

/// The table as Markdown.
pub fn markdown(rows: &[Row], rounds: usize, tasks: usize, block: Duration) -> String {
    let mut s = String::from("# Blocking resilience\n\n");
    s.push_str(&format!(
        "{WORKERS} workers; per round one task spawns {tasks} short tasks and a {} ms timer, then \
         blocks its worker for {} ms (`sleep`: `std::thread::sleep`, `spin`: busy loop). Latency = \
         first poll − spawn of the short tasks; timer = worst lateness over {rounds} interleaved \
         rounds. Lower is better.\n\n",
        TIMER.as_millis(),
        block.as_millis()
    ));
    s.push_str("| runtime | mode | tasks | p50 | p99 | max | timer late (max) |\n|---|---|---|---|---|---|---|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {:?} | {} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms |\n",
            r.runtime, r.mode, r.tasks, r.p50_ms, r.p99_ms, r.max_ms, r.timer_late_max_ms
        ));
    }
    s
}

/// `weft-lab blocking-resilience`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved rounds per runtime and mode (a fresh runtime per round).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Short tasks spawned before the block.
    #[arg(long, default_value_t = 1000)]
    pub tasks: usize,
    /// How long the blocking task blocks its worker, in ms.
    #[arg(long, default_value_t = 1000)]
    pub block_ms: u64,
    /// Writes OUT/blocking.md and OUT/blocking.json.
    #[arg(long, default_value = "lab-results/blocking")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// `weft-lab blocking-resilience`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let chosen = args.selection.runtimes(&[RuntimeId::WeftMt, RuntimeId::TokioMt, RuntimeId::Smol])?;
    let block = std::time::Duration::from_millis(args.block_ms);
    let rows = measure(&chosen, args.rounds.max(1), args.tasks.max(1), block)?;
    let md = markdown(&rows, args.rounds, args.tasks, block);
    write_md_json(&args.out, "blocking", &md, &rows)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_is_accounted_for_and_the_table_has_a_row_per_mode() {
        // tokio only: the weft rows set `WEFT_COMPENSATE`, and unit tests share the process
        // environment with other tests building weft runtimes (the CLI run covers weft).
        let rows = measure(&[RuntimeId::TokioMt, RuntimeId::TokioCt], 1, 50, Duration::from_millis(30)).unwrap();
        assert_eq!(rows.len(), 2, "current-thread runtimes are left out; sleep and spin");
        for r in &rows {
            assert_eq!(r.tasks, 50, "{}", r.runtime);
            assert!(r.p50_ms <= r.p99_ms && r.p99_ms <= r.max_ms, "{r:?}");
        }
        let md = markdown(&rows, 1, 50, Duration::from_millis(30));
        assert!(md.contains("| tokio-mt | Sleep |") && md.contains("| tokio-mt | Spin |"), "{md}");
    }
}
