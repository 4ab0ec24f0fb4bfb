//! Memory after a burst: how much of a burst's resident memory a runtime keeps once the burst
//! is over, and how soon it gives the rest back.
//!
//! A server that once saw a burst of connections or jobs should not keep their memory for its
//! whole life. Each round runs every runtime in turn, each in a fresh child process
//! (`weft-lab __memory-burst`; in one process the allocator would keep the previous round's
//! pages). In the child, on a freshly built runtime, inside `block_on`:
//! 1. reads RSS (the baseline),
//! 2. spawns `tasks` tasks, each awaiting its own oneshot, and waits until every one has been
//!    polled and parked (each bumps a counter first: checked, not assumed); reads RSS (the peak),
//! 3. sends on every oneshot and joins every task, checking each returns its own value,
//! 4. sleeps in steps of `--interval-ms` for `--seconds`, reading RSS after each (and, on weft,
//!    `RuntimeMetrics::task_arena_retained_bytes`). The runtime is idle but alive, as a
//!    server between bursts is; its timers still run, so it parks and wakes as it would.
//!
//! Retained = RSS − baseline. The table quotes medians over rounds at 1 s, 3 s and the end,
//! and each weft row's retained bytes at 1 s over tokio's of the same flavor.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::framework::adapter::{Adapter, Channels, RtConfig};
use crate::framework::memory::{release_and_join, rss_bytes, spawn_parked};
use crate::framework::runtimes::{self, RuntimeId};
use crate::framework::selection::{this_exe, write_md_json, ChildRuntime, Selection};
use crate::framework::stats;

/// One child's readings.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Trace {
    pub baseline: u64,
    pub peak: u64,
    /// (ms after the last join, RSS, weft's task-arena bytes if weft).
    pub samples: Vec<(u64, u64, Option<u64>)>,
}

impl Trace {
    /// The child's stdout form: `baseline B`, `peak B`, `s MS RSS ARENA|-` lines, then `ok`.
    fn to_lines(&self) -> String {
        let mut s = format!("baseline {}\npeak {}\n", self.baseline, self.peak);
        for (ms, rss, arena) in &self.samples {
            let arena = arena.map_or("-".to_string(), |a| a.to_string());
            s.push_str(&format!("s {ms} {rss} {arena}\n"));
        }
        s.push_str("ok\n");
        s
    }

    fn parse(text: &str) -> Result<Trace, String> {
        let mut trace = Trace { baseline: 0, peak: 0, samples: Vec::new() };
        let mut ok = false;
        let num =
            |s: Option<&str>| s.and_then(|s| s.parse::<u64>().ok()).ok_or_else(|| format!("bad line in {text:?}"));
        for line in text.lines() {
            let mut w = line.split_whitespace();
            match w.next() {
                Some("baseline") => trace.baseline = num(w.next())?,
                Some("peak") => trace.peak = num(w.next())?,
                Some("s") => {
                    let (ms, rss) = (num(w.next())?, num(w.next())?);
                    let arena = match w.next() {
                        Some("-") => None,
                        other => Some(num(other)?),
                    };
                    trace.samples.push((ms, rss, arena));
                }
                Some("ok") => ok = true,
                _ => {}
            }
        }
        if !ok || trace.samples.is_empty() {
            return Err(format!("the sample did not finish: {text:?}"));
        }
        Ok(trace)
    }

    /// Retained bytes (RSS − baseline) at the first sample at or after `ms`, and the arena's.
    fn at(&self, ms: u64) -> (f64, Option<f64>) {
        let s = self.samples.iter().find(|s| s.0 >= ms).unwrap_or_else(|| self.samples.last().expect("non-empty"));
        (s.1.saturating_sub(self.baseline) as f64, s.2.map(|a| a as f64))
    }
}

/// One runtime's figures over the rounds (medians).
#[derive(Debug, Clone, Serialize)]
pub struct BurstRow {
    pub runtime: String,
    pub tasks: u64,
    pub peak_retained: f64,
    pub retained_1s: f64,
    pub retained_3s: f64,
    pub retained_end: f64,
    pub arena_1s: Option<f64>,
    pub traces: Vec<Trace>,
}

struct Round<'a> {
    config: &'a RtConfig,
    tasks: u64,
    seconds: f64,
    interval: Duration,
}

impl runtimes::WithAdapter for Round<'_> {
    type Output = Result<Trace, String>;
    fn run<R: Adapter>(self) -> Self::Output {
        burst::<R>(&self)
    }
}

/// weft's task-arena bytes when the current runtime is weft's.
fn weft_arena_bytes() -> Option<u64> {
    weft::runtime::Handle::try_current().ok().map(|h| h.metrics().task_arena_retained_bytes() as u64)
}

fn burst<R: Adapter>(round: &Round<'_>) -> Result<Trace, String> {
    if !<R::Channels as Channels>::AVAILABLE {
        return Err("this runtime has no oneshot channel in the lab yet".into());
    }
    let (tasks, seconds, interval) = (round.tasks, round.seconds, round.interval);
    let runtime = R::build(round.config).map_err(|e| format!("building the runtime failed: {e}"))?;
    runtime.block_on(async move {
        let baseline = rss_bytes()?;
        let parked = spawn_parked::<R>(tasks).await;
        let peak = rss_bytes()?;
        release_and_join(parked).await?;
        let start = Instant::now();
        let mut samples = Vec::new();
        while start.elapsed().as_secs_f64() < seconds {
            R::sleep(interval).await;
            samples.push((start.elapsed().as_millis() as u64, rss_bytes()?, weft_arena_bytes()));
        }
        Ok(Trace { baseline, peak, samples })
    })
}

/// Runs `rounds` interleaved rounds on each runtime, one child process per runtime per round.
pub fn measure(exe: &Path, chosen: &[RuntimeId], workers: usize, args: &Args) -> Result<Vec<BurstRow>, String> {
    let mut per: Vec<Vec<Trace>> = vec![Vec::new(); chosen.len()];
    for _ in 0..args.rounds.max(1) {
        for (i, &rt) in chosen.iter().enumerate() {
            if rt.in_child() {
                return Err("async-std's executor is a process global; leave it out of `memory-burst`".into());
            }
            let out = Command::new(exe)
                .args(["__memory-burst", "--runtime", rt.name(), "--workers", &workers.to_string()])
                .args(["--tasks", &args.tasks.to_string(), "--seconds", &args.seconds.to_string()])
                .args(["--interval-ms", &args.interval_ms.to_string()])
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output()
                .map_err(|e| format!("starting the {} sample: {e}", rt.name()))?;
            if !out.status.success() {
                return Err(format!("{}: the sample failed ({})", rt.name(), out.status));
            }
            per[i]
                .push(Trace::parse(&String::from_utf8_lossy(&out.stdout)).map_err(|e| format!("{}: {e}", rt.name()))?);
        }
    }
    let end_ms = (args.seconds * 1000.0) as u64;
    Ok(chosen
        .iter()
        .zip(per)
        .map(|(rt, traces)| {
            let med = |f: &dyn Fn(&Trace) -> f64| stats::median(&traces.iter().map(f).collect::<Vec<_>>());
            let arenas: Vec<f64> = traces.iter().filter_map(|t| t.at(1000).1).collect();
            BurstRow {
                runtime: rt.name().to_string(),
                tasks: args.tasks,
                peak_retained: med(&|t| t.peak.saturating_sub(t.baseline) as f64),
                retained_1s: med(&|t| t.at(1000).0),
                retained_3s: med(&|t| t.at(3000).0),
                retained_end: med(&|t| t.at(end_ms).0),
                arena_1s: (!arenas.is_empty()).then(|| stats::median(&arenas)),
                traces,
            }
        })
        .collect())
}

fn mb(b: f64) -> String {
    format!("{:.1}", b / 1e6)
}

/// The table as Markdown.
pub fn markdown(rows: &[BurstRow], args: &Args, workers: usize) -> String {
    let of = |name: &str| rows.iter().find(|r| r.runtime == name).map(|r| r.retained_1s);
    let mut s = String::from("# Memory after a burst\n\n");
    s.push_str(&format!(
        "{} tasks spawned, each parked on its own oneshot, then released and joined (every value checked); then the \
         runtime idles (alive, sleeping in {} ms steps) for {} s. Retained = RSS − RSS before the burst, MB; medians of \
         {} interleaved rounds, a fresh child process per runtime per round, {workers} workers. Lower is better.\n\n",
        args.tasks, args.interval_ms, args.seconds, args.rounds
    ));
    s.push_str(
        "| runtime | peak | after 1 s | after 3 s | at the end | task arena after 1 s | after 1 s ÷ tokio, same flavor |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let ratio = r
            .runtime
            .strip_prefix("weft")
            .and_then(|flavor| of(&format!("tokio{flavor}")))
            .map_or("–".to_string(), |t| format!("{:.2}×", r.retained_1s / t.max(1.0)));
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.runtime,
            mb(r.peak_retained),
            mb(r.retained_1s),
            mb(r.retained_3s),
            mb(r.retained_end),
            r.arena_1s.map_or("–".to_string(), mb),
            ratio
        ));
    }
    s
}

/// `weft-lab memory-burst`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved rounds (a fresh process per runtime per round).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Tasks in the burst.
    #[arg(long, default_value_t = 1_000_000)]
    pub tasks: u64,
    /// How long to watch RSS after the burst.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// RSS sampling interval.
    #[arg(long, default_value_t = 100)]
    pub interval_ms: u64,
    /// Writes OUT/memory_burst.md and OUT/memory_burst.json (with every sample).
    #[arg(long, default_value = "lab-results/memory-burst")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// `weft-lab memory-burst`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let default = [RuntimeId::WeftMt, RuntimeId::TokioMt, RuntimeId::WeftCt, RuntimeId::TokioCt];
    let (chosen, workers) = args.selection.resolve(&default)?;
    let rows = measure(&this_exe()?, &chosen, workers, &args)?;
    let md = markdown(&rows, &args, workers);
    write_md_json(&args.out, "memory_burst", &md, &rows)?;
    Ok(ExitCode::SUCCESS)
}

/// `__memory-burst`: one runtime's burst in this fresh process.
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[command(flatten)]
    pub rt: ChildRuntime,
    #[arg(long)]
    pub tasks: u64,
    #[arg(long)]
    pub seconds: f64,
    #[arg(long)]
    pub interval_ms: u64,
}

fn sample(rt: RuntimeId, workers: usize, tasks: u64, seconds: f64, interval: Duration) -> Result<Trace, String> {
    let config = RtConfig::new(rt.flavor(), workers);
    runtimes::dispatch(rt, Round { config: &config, tasks, seconds, interval })
        .map_err(|e| format!("{}: {e}", rt.name()))
}

/// `weft-lab __memory-burst`: prints the trace (`Trace::to_lines`).
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    let trace = sample(
        args.rt.id()?,
        args.rt.workers,
        args.tasks,
        args.seconds,
        Duration::from_millis(args.interval_ms.max(1)),
    )?;
    print!("{}", trace.to_lines());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In process: every task is checked parked, released and joined; the trace has its
    /// samples, and weft's carry the arena metric while tokio's do not.
    #[test]
    fn a_burst_is_checked_and_traced_on_weft_and_tokio() {
        for rt in [RuntimeId::WeftMt, RuntimeId::WeftCt, RuntimeId::TokioMt] {
            let t =
                sample(rt, 2, 5_000, 0.05, Duration::from_millis(10)).unwrap_or_else(|e| panic!("{}: {e}", rt.name()));
            assert!(t.samples.len() >= 3, "{}: {t:?}", rt.name());
            assert_eq!(t.samples[0].2.is_some(), rt.name().starts_with("weft"), "{}: {t:?}", rt.name());
            assert_eq!(Trace::parse(&t.to_lines()).unwrap(), t, "the child's lines round-trip");
        }
    }

    #[test]
    fn an_unfinished_child_is_an_error() {
        assert!(Trace::parse("baseline 1\npeak 2\ns 100 3 -\n").is_err());
        assert!(Trace::parse("baseline 1\npeak 2\nok\n").is_err());
        let t = Trace::parse("baseline 10\npeak 50\ns 100 40 7\ns 1100 20 5\nok\n").unwrap();
        assert_eq!(t.at(1000), (10.0, Some(5.0)));
        assert_eq!(t.at(0), (30.0, Some(7.0)));
    }
}
