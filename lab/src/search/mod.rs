//! `weft-lab search`: the session-search workload of report 002 (ccms's *Final Optimization
//! Summary*, docs/notes/reference-reports.md) — a search over a
//! directory of Claude Code transcripts (`<project>/<session>.jsonl`), run by several engines
//! that must return identical answers. The tool itself is the `weft-search` crate; this study
//! imports its query language and per-file search, and adds the comparison engines, the corpus
//! generator, the engine bench and the bench against ccms ([`versus`]).
//!
//! # Glossary
//! - *corpus*: the directory searched; [`corpus`] generates a realistic one per seed.
//! - *engine*: how files reach the one shared per-file search ([`engines`]).
//! - *hit*: a matching line; answers list the newest `limit` hits plus the total count.
//!
//! # Invariants
//! - One matcher: every engine feeds bytes into `weft_search::search::FileSearch`; engines
//!   differ only in I/O and threading. The bench compares every answer with the first one, every sample.
//! - Order is a total order: timestamp descending, then file index (sorted path order), then
//!   line number; so answers do not depend on completion order.
//! - Nothing is dropped silently: unreadable files, invalid lines and oversized lines are
//!   counted in [`weft_search::answer::Answer`]; an incomplete answer says so on its last line.
//! - Each bench sample runs in a fresh child process (`search __run`): the smol pool size is read
//!   from the environment once per process, and peak RSS (VmHWM) is then per sample.
//!
//! # Rejected alternatives
//! - Timing in-process with one runtime reused: hides runtime start-up and, for smol, cannot
//!   change the pool size between variants.
//! - Keeping every hit's text until the merge: a common word hits most lines; each file keeps only
//!   its newest `limit` hits (the global newest `limit` are among them) and a count.

pub mod bench;
pub mod corpus;
pub mod engines;
pub mod tui_latency;
pub mod versus;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Subcommand;
use serde::{Deserialize, Serialize};

use weft_search::answer::Answer;

use engines::{Engine, RunSpec};

use crate::framework::checks::{SmokeOptions, SmokeReport};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: SearchCommand,
}

#[derive(Subcommand, Debug)]
enum SearchCommand {
    /// Generate a corpus of Claude Code-shaped transcripts into DIR.
    #[command(name = "gen-corpus")]
    GenCorpus(GenArgs),
    /// Every engine (and a blocking-pool sweep) on a generated corpus, interleaved and repeated.
    Bench(bench::BenchArgs),
    /// weft-search against ccms (built from its source): whole processes, same corpus and
    /// queries, interleaved rounds, identical hit counts checked.
    Versus(versus::VersusArgs),
    /// Keystroke-to-first-result of weft-search's interactive search under tmux.
    #[command(name = "tui-latency")]
    TuiLatency(tui_latency::TuiLatencyArgs),
    /// Internal: one timed search in this process; prints a JSON `ChildResult`.
    #[command(name = "__run", hide = true)]
    Run(RunArgs),
}

#[derive(clap::Args, Debug)]
pub struct GenArgs {
    #[command(flatten)]
    pub corpus: corpus::CorpusSpec,
    pub dir: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[arg(long)]
    engine: String,
    #[arg(long)]
    pool: Option<usize>,
    #[arg(long)]
    workers: Option<usize>,
    #[arg(long)]
    path: PathBuf,
    #[arg(long)]
    query: String,
    #[arg(long, default_value_t = 50)]
    limit: usize,
}

/// What a `__run` child prints.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChildResult {
    pub elapsed_ns: u64,
    /// Peak resident set of the child (VmHWM), KiB.
    pub peak_rss_kb: u64,
    pub outcome: Answer,
    /// weft's long-poll warning lines in the child's stderr (counted by the parent).
    #[serde(default)]
    pub long_poll_warnings: u64,
}

/// Counts weft's default long-poll warnings (`weft: task 7 spawned at … blocked worker 0 for
/// 15 ms`) in a child's stderr, which the parent otherwise keeps to itself on success.
pub fn long_poll_warnings(stderr: &str) -> u64 {
    stderr.lines().filter(|l| l.starts_with("weft: task ") && l.contains(" blocked worker ")).count() as u64
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    match args.command {
        SearchCommand::GenCorpus(g) => {
            if g.dir.exists() && std::fs::read_dir(&g.dir).map_err(|e| e.to_string())?.next().is_some() {
                return Err(format!("{} is not empty; give an empty or new directory", g.dir.display()));
            }
            let spec = g.corpus.clone();
            let start = Instant::now();
            let s = corpus::generate(&spec, &g.dir).map_err(|e| format!("writing {}: {e}", g.dir.display()))?;
            println!(
                "{} files, {:.1} MB, {} lines ({} invalid), median file {:.0} KB, largest {:.1} MB, in {:.1} s",
                s.files,
                s.bytes as f64 / 1e6,
                s.lines,
                s.invalid_lines,
                s.median_file as f64 / 1e3,
                s.largest_file as f64 / 1e6,
                start.elapsed().as_secs_f64()
            );
            Ok(ExitCode::SUCCESS)
        }
        SearchCommand::Bench(b) => bench::command(b),
        SearchCommand::Versus(v) => versus::command(v),
        SearchCommand::TuiLatency(t) => tui_latency::command(t),
        SearchCommand::Run(r) => run_child(r),
    }
}

fn run_child(r: RunArgs) -> Result<ExitCode, String> {
    let engine = Engine::parse(&r.engine)?;
    let spec = RunSpec { engine, pool: r.pool, workers: r.workers.unwrap_or_else(engines::cores), limit: r.limit };
    let (outcome, elapsed) = engines::run(&spec, &r.path, &r.query)
        .map_err(|e| format!("{}: {}", r.path.display(), engines::describe_io(&e)))?;
    let result = ChildResult {
        elapsed_ns: elapsed.as_nanos() as u64,
        peak_rss_kb: peak_rss_kb(),
        outcome,
        long_poll_warnings: 0,
    };
    println!("{}", serde_json::to_string(&result).map_err(|e| e.to_string())?);
    Ok(ExitCode::SUCCESS)
}

/// This process's peak resident set (VmHWM), KiB; 0 where /proc is unavailable.
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Reads a child's pipe to its end on a thread of its own (so neither pipe can fill and stall
/// the child while the other is read).
pub fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

/// The weft-search binary: `given`, or the one next to this executable.
pub fn weft_search_bin(given: Option<&Path>) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let bin = given.map(Path::to_path_buf).unwrap_or_else(|| exe.with_file_name("weft-search"));
    if !bin.exists() {
        return Err(format!(
            "{} not found: `cargo build --release -p weft-search` or give --weft-search",
            bin.display()
        ));
    }
    Ok(bin)
}

/// One engine run in a child process (`exe search __run …`), killed after `timeout`.
pub fn child_run(
    exe: &Path,
    spec: &RunSpec,
    root: &Path,
    query: &str,
    timeout: Duration,
) -> Result<ChildResult, String> {
    let mut cmd = Command::new(exe);
    cmd.args(["search", "__run", "--engine", spec.engine.name(), "--query", query]).arg("--path").arg(root).args([
        "--limit",
        &spec.limit.to_string(),
        "--workers",
        &spec.workers.to_string(),
    ]);
    // The blocking crate reads BLOCKING_MAX_THREADS once per process: set it per child.
    cmd.env_remove("BLOCKING_MAX_THREADS");
    match (spec.engine, spec.pool) {
        (Engine::Smol | Engine::SmolTuned, Some(n)) => {
            cmd.env("BLOCKING_MAX_THREADS", n.to_string());
        }
        (Engine::SmolTuned, None) => {
            cmd.env("BLOCKING_MAX_THREADS", engines::cores().to_string());
        }
        (_, Some(n)) => {
            cmd.args(["--pool", &n.to_string()]);
        }
        _ => {}
    }
    let mut child =
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("spawning {exe:?}: {e}"))?;
    let out_reader = read_all(child.stdout.take().expect("stdout is piped"));
    let err_reader = read_all(child.stderr.take().expect("stderr is piped"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} did not finish within {timeout:?}", spec.engine.name()));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{} exited with {status}: {}", spec.engine.name(), err.trim()));
    }
    let mut result: ChildResult = serde_json::from_str(out.trim())
        .map_err(|e| format!("{}: unreadable child output ({e}): {out}", spec.engine.name()))?;
    result.long_poll_warnings = long_poll_warnings(&err);
    Ok(result)
}

/// `weft-lab smoke`'s search case: a tiny corpus, every engine in a child process, several
/// queries; every answer must equal the sequential engine's.
pub fn smoke(options: &SmokeOptions, report: &mut SmokeReport) {
    let dir = std::env::temp_dir().join(format!("weft-lab-search-smoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = corpus::CorpusSpec { files: 12, seed: 7, total_mb: Some(2) };
    if let Err(e) = corpus::generate(&spec, &dir) {
        return report.check("search corpus", Err(format!("generating the corpus: {e}")));
    }
    for q in ["tokio AND spawn", "\"thread pool\" OR /dead+lock/i", "NOT the", "zanzibar"] {
        let mut reference: Option<Answer> = None;
        for engine in Engine::ALL {
            let spec = RunSpec { engine, pool: None, workers: 2, limit: 20 };
            let outcome = match child_run(&options.exe, &spec, &dir, q, Duration::from_secs(120)) {
                Err(e) => Err(e),
                Ok(r) => match &reference {
                    None if r.outcome.total_hits == 0 && q != "zanzibar" => {
                        Err("no hits on the smoke corpus".to_string())
                    }
                    None => {
                        let hits = r.outcome.total_hits;
                        reference = Some(r.outcome);
                        Ok(Some(format!("{hits} hits")))
                    }
                    Some(want) if *want == r.outcome => Ok(Some(format!("{} hits, identical", r.outcome.total_hits))),
                    Some(_) => Err("answer differs from sequential".to_string()),
                },
            };
            report.check(&format!("search {q:?} {}:", engine.name()), outcome);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
