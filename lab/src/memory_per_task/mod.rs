//! Memory per idle task: the resident-set growth per live task parked on a oneshot.
//!
//! Like timer lateness this is not a throughput number, so it is its own command
//! (`weft-lab memory-per-task`), not a micro workload. Each round runs every runtime in turn,
//! each in a fresh child process (`weft-lab __memory-per-task`): in one process the allocator
//! keeps the pages a previous round freed, so a later round would grow its RSS by nothing.
//! In the child, on a freshly built runtime:
//! 1. reads RSS (`/proc/self/statm`, resident pages × page size),
//! 2. spawns `tasks` tasks, each awaiting its own oneshot receiver (the senders are kept by
//!    the measuring future), and waits until every task has been polled once and parked
//!    (each bumps a counter before awaiting, so "all alive and parked" is checked, not assumed),
//! 3. reads RSS again: (after − before) ÷ tasks is the figure,
//! 4. sends on every oneshot and joins every task, checking that each returns its own value
//!    (so every task really was alive and really completed).
//!
//! The spawn itself is not timed. RSS deltas include the runtime's own growth (queues, the
//! owned-task list) and each task's oneshot, which is the point: what a user pays per idle
//! task. The median over rounds is quoted.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::framework::adapter::{Adapter, Channels, RtConfig};
use crate::framework::memory::{release_and_join, rss_bytes, spawn_parked};
use crate::framework::runtimes::{self, RuntimeId};
use crate::framework::selection::{this_exe, write_md_json, ChildRuntime, Selection};
use crate::framework::stats;
use std::path::PathBuf;
use std::process::ExitCode;

/// One runtime's figures over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryRow {
    pub runtime: String,
    pub tasks: u64,
    /// Bytes of RSS growth per live idle task, one per round.
    pub bytes_per_task: Vec<f64>,
    pub median_bytes_per_task: f64,
}

/// Runs `rounds` interleaved rounds of `tasks` idle tasks on each runtime, one child process
/// (`exe __memory-per-task`) per runtime per round.
pub fn measure(
    exe: &Path,
    chosen: &[RuntimeId],
    workers: usize,
    rounds: usize,
    tasks: u64,
) -> Result<Vec<MemoryRow>, String> {
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    for _ in 0..rounds {
        for (i, &rt) in chosen.iter().enumerate() {
            if rt.in_child() {
                return Err("async-std's executor is a process global; leave it out of `memory-per-task`".into());
            }
            let out = Command::new(exe)
                .args(["__memory-per-task", "--runtime", rt.name(), "--workers", &workers.to_string()])
                .args(["--tasks", &tasks.to_string()])
                .stdin(Stdio::null())
                .stderr(Stdio::inherit())
                .output()
                .map_err(|e| format!("starting the {} sample: {e}", rt.name()))?;
            let text = String::from_utf8_lossy(&out.stdout);
            let bytes: i64 = text
                .lines()
                .find_map(|l| l.strip_prefix("ok "))
                .and_then(|b| b.trim().parse().ok())
                .filter(|_| out.status.success())
                .ok_or_else(|| format!("{}: the sample failed ({}): {text}", rt.name(), out.status))?;
            per[i].push(bytes as f64 / tasks as f64);
        }
    }
    Ok(chosen
        .iter()
        .zip(per)
        .map(|(rt, xs)| MemoryRow {
            runtime: rt.name().to_string(),
            tasks,
            median_bytes_per_task: stats::percentile(&xs, 50.0),
            bytes_per_task: xs,
        })
        .collect())
}

/// `weft-lab __memory-per-task`: one round in this process; the RSS growth in bytes.
pub fn sample_main(rt: RuntimeId, workers: usize, tasks: u64) -> Result<i64, String> {
    let config = RtConfig::new(rt.flavor(), workers);
    runtimes::dispatch(rt, Round { config: &config, tasks }).map_err(|e| format!("{}: {e}", rt.name()))
}

struct Round<'a> {
    config: &'a RtConfig,
    tasks: u64,
}

impl runtimes::WithAdapter for Round<'_> {
    type Output = Result<i64, String>;
    fn run<R: Adapter>(self) -> Self::Output {
        round::<R>(self.config, self.tasks)
    }
}

/// One round on a fresh runtime: RSS growth in bytes with `tasks` idle tasks alive.
fn round<R: Adapter>(config: &RtConfig, tasks: u64) -> Result<i64, String> {
    if !<R::Channels as Channels>::AVAILABLE {
        return Err("this runtime has no oneshot channel in the lab yet".into());
    }
    let runtime = R::build(config).map_err(|e| format!("building the runtime failed: {e}"))?;
    let out = runtime.block_on(async move {
        let before = rss_bytes()?;
        let parked = spawn_parked::<R>(tasks).await;
        let after = rss_bytes()?;
        release_and_join(parked).await?;
        Ok::<i64, String>(after as i64 - before as i64)
    });
    drop(runtime);
    out
}

/// The table as Markdown, with each weft row's ratio to tokio of the same flavor (if measured).
pub fn markdown(rows: &[MemoryRow], rounds: usize, workers: usize) -> String {
    let median_of = |name: &str| rows.iter().find(|r| r.runtime == name).map(|r| r.median_bytes_per_task);
    let mut s = String::new();
    s.push_str("# Memory per idle task\n\n");
    s.push_str(&format!(
        "RSS growth ÷ live tasks, each task parked on its own oneshot; {rounds} interleaved rounds, fresh runtime per \
         round, {workers} workers; all tasks checked alive, then released and joined. Includes the lab's own 16 B/task \
         (a sender and a join handle kept in two vectors). Lower is better.\n\n"
    ));
    s.push_str("| runtime | tasks | median B/task | rounds (B/task) | ÷ tokio, same flavor |\n|---|---|---|---|---|\n");
    for r in rows {
        let each: Vec<String> = r.bytes_per_task.iter().map(|b| format!("{b:.0}")).collect();
        let peer = r.runtime.strip_prefix("weft").map(|flavor| format!("tokio{flavor}"));
        let ratio = peer
            .and_then(|p| median_of(&p))
            .map_or("–".to_string(), |b| format!("{:.2}×", r.median_bytes_per_task / b));
        s.push_str(&format!(
            "| {} | {} | {:.0} | {} | {} |\n",
            r.runtime,
            r.tasks,
            r.median_bytes_per_task,
            each.join(", "),
            ratio
        ));
    }
    s
}

/// `weft-lab memory-per-task`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved rounds (a fresh runtime per round).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Live idle tasks per round.
    #[arg(long, default_value_t = 1_000_000)]
    pub tasks: u64,
    /// Writes OUT/memory_per_task.md and OUT/memory_per_task.json.
    #[arg(long, default_value = "lab-results/memory-per-task")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// `weft-lab memory-per-task`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let default = [RuntimeId::WeftMt, RuntimeId::TokioMt, RuntimeId::WeftCt, RuntimeId::TokioCt];
    let (chosen, workers) = args.selection.resolve(&default)?;
    let rows = measure(&this_exe()?, &chosen, workers, args.rounds.max(1), args.tasks.max(1))?;
    let md = markdown(&rows, args.rounds.max(1), workers);
    write_md_json(&args.out, "memory_per_task", &md, &rows)?;
    Ok(ExitCode::SUCCESS)
}

/// `__memory-per-task`: one round in this fresh process.
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[command(flatten)]
    pub rt: ChildRuntime,
    #[arg(long)]
    pub tasks: u64,
}

/// `weft-lab __memory-per-task`: one round in this fresh process; prints `ok <bytes>`.
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    let bytes = sample_main(args.rt.id()?, args.rt.workers, args.tasks)?;
    println!("ok {bytes}");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_is_read_and_grows_with_touched_memory() {
        // Other tests of this binary allocate and free concurrently (RSS is per process), so
        // the growth asserted is half of a large touched allocation, not all of it.
        let before = rss_bytes().unwrap();
        let v = vec![1u8; 256 << 20];
        let after = rss_bytes().unwrap();
        assert!(after >= before + (128 << 20), "before {before}, after {after}");
        drop(v);
    }

    /// In process (the child's entry point): every task is checked parked, then released and
    /// joined with its own value; a failed check would be an `Err`.
    #[test]
    fn every_task_is_checked_alive_and_joined() {
        // The RSS delta itself is not asserted here: in this test binary other tests free memory
        // concurrently (the lab takes every sample in a fresh child process for that reason).
        for rt in [RuntimeId::WeftCt, RuntimeId::WeftMt, RuntimeId::TokioCt] {
            sample_main(rt, 2, 2_000).unwrap_or_else(|e| panic!("{}: {e}", rt.name()));
        }
    }

    #[test]
    fn markdown_lists_each_runtime_with_its_ratio() {
        let row = |name: &str, b: f64| MemoryRow {
            runtime: name.into(),
            tasks: 10,
            bytes_per_task: vec![b],
            median_bytes_per_task: b,
        };
        let md = markdown(&[row("weft-mt", 100.0), row("tokio-mt", 200.0), row("weft-ct", 50.0)], 1, 2);
        assert!(md.contains("| weft-mt | 10 | 100 | 100 | 0.50× |"), "{md}");
        assert!(md.contains("| tokio-mt | 10 | 200 | 200 | – |"), "{md}");
        assert!(md.contains("| weft-ct | 10 | 50 | 50 | – |"), "{md}");
    }
}
