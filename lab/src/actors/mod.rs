//! `weft-lab actors`: actor classics for weft-actor against kameo, ractor, actix and plain
//! tokio tasks + channels.
//!
//! # Shape
//! * `adapter.rs` — `ActorPeer`, the operations every workload is written against (spawn an
//!   actor from a boxed behaviour, tell, tell from inside a handler, ask, and the two
//!   supervision scenarios); `workloads.rs` — each workload once, validating its output.
//! * One file per peer, each on the runtime it needs: `weft_actor.rs` (weft), `tokio_tasks.rs`
//!   (tokio; the baseline) and `weft_tasks.rs` (its twin on weft, both instances of
//!   `plain_tasks.rs`), `kameo.rs` and `ractor.rs` (tokio), `actix.rs` (actix-rt).
//! * `documented.rs` — the `_doc` rows: the ring and skynet written the way each peer's docs
//!   show (own actor types, awaited sends inside handlers), beside the adapter's rows.
//! * `idle.rs` — bytes per idle actor, a memory figure, so measured in a fresh child process
//!   per peer per sample (`__actors`) after the timed table.
//!
//! # Fairness
//! Rounds interleave the peers (round *i* runs every peer once per workload) on a fresh
//! runtime per sample, so the paired ratios in `results.json` cancel the machine's drifts
//! (`results::ratio`). All peers run with the same worker count; panics are silenced with one
//! process-wide no-op hook for every peer, since printing 10,000 messages would dominate.
//!
//! # Rejected alternatives
//! * A generic actor trait with typed messages per peer: each workload would need one actor
//!   type per peer, i.e. be written five times. Boxed `u64` behaviours cost every peer the
//!   same indirect call.
use crate::framework::selection::Selection;
use std::path::PathBuf;
use std::process::ExitCode;

mod actix;
pub mod adapter;
pub mod documented;
pub mod idle;

pub use idle::{run_child, ChildArgs};
mod kameo;
mod plain_tasks;
mod ractor;
mod tokio_tasks;
mod weft_actor;
mod weft_tasks;
pub mod workloads;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::framework::checks::{SmokeOptions, SmokeReport};
use crate::framework::measure::take_long_polls;
use crate::framework::results::{self, Machine, RatioRow, Results, Row, RowStats, Settings, SCHEMA};
use workloads::WORKLOADS;

/// The peers, baseline-comparable with `weft-actor`.
pub const PEERS: &[&str] = &["weft-actor", "kameo", "ractor", "actix", "tokio"];

/// Peers run only when named (`--runtimes`), and by the smoke: `weft-tasks` (plain weft
/// tasks + channels) tells what weft-actor adds on top of its runtime.
pub const DIAGNOSTIC_PEERS: &[&str] = &["weft-tasks"];

/// `Err` naming the known peers when `peers` holds a name that is none of them (a typo must not
/// read as a peer that merely has no results).
fn check_names(peers: &[String]) -> Result<(), String> {
    let known: Vec<&str> = PEERS.iter().chain(DIAGNOSTIC_PEERS).copied().collect();
    match peers.iter().find(|p| !known.contains(&p.as_str())) {
        Some(p) => Err(format!("unknown actor peer {p:?}; known: {}", known.join(", "))),
        None => Ok(()),
    }
}

/// Runs `$body` with `$P` naming the peer type called `$peer`, or errs on an unknown name: the
/// one place a peer's name meets its type.
macro_rules! with_peer {
    ($peer:expr, |$P:ident| $body:expr) => {
        match $peer {
            "weft-actor" => {
                type $P = $crate::actors::weft_actor::WeftActor;
                $body
            }
            "tokio" => {
                type $P = $crate::actors::tokio_tasks::TokioTasks;
                $body
            }
            "weft-tasks" => {
                type $P = $crate::actors::weft_tasks::WeftTasks;
                $body
            }
            "ractor" => {
                type $P = $crate::actors::ractor::Ractor;
                $body
            }
            "kameo" => {
                type $P = $crate::actors::kameo::Kameo;
                $body
            }
            "actix" => {
                type $P = $crate::actors::actix::Actix;
                $body
            }
            other => Err(format!("unknown actor peer {other}")),
        }
    };
}
pub(crate) use with_peer;

fn run_one(peer: &str, workload: &str, n: u64, workers: usize) -> Result<Option<Duration>, String> {
    with_peer!(peer, |P| workloads::run::<P>(workload, n, workers))
}

/// Runs one sample in a thread of its own, on a trimmed heap (`release_free_heap`: the peers
/// share this process), turning a panic outside the workload's own panicking actors into an
/// error.
fn sample(peer: &str, workload: &str, n: u64, workers: usize) -> Result<Option<Duration>, String> {
    let (p, w) = (peer.to_string(), workload.to_string());
    crate::framework::memory::release_free_heap();
    std::thread::spawn(move || run_one(&p, &w, n, workers))
        .join()
        .unwrap_or_else(|_| Err(format!("{workload} on {peer} panicked")))
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ActorOptions {
    pub peers: Vec<String>,
    pub filter: Vec<String>,
    pub workers: usize,
    pub reps: usize,
    pub warmup: usize,
    /// Scale factor in percent of each workload's default size (100 = the default sizes).
    pub percent: u64,
}

fn silence_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

/// Measures every selected workload on every selected peer, interleaved, and returns
/// `results.json`'s shape (ratios: `weft-actor` against every other peer).
pub fn measure(o: &ActorOptions, progress: bool) -> Results {
    silence_panics();
    let mut rows: Vec<Row> = Vec::new();
    for w in WORKLOADS.iter().filter(|w| crate::framework::selection::selected(w.name, &o.filter)) {
        let n = scaled(w.name, w.scale, o.percent);
        let mut samples: Vec<Vec<u64>> = vec![Vec::new(); o.peers.len()];
        let mut status: Vec<Option<String>> = vec![None; o.peers.len()];
        let mut long_polls = vec![0u64; o.peers.len()];
        for round in 0..o.warmup + o.reps {
            for (i, p) in o.peers.iter().enumerate() {
                if status[i].is_some() {
                    continue;
                }
                take_long_polls();
                match sample(p, w.name, n, o.workers) {
                    Ok(Some(t)) if round >= o.warmup => {
                        samples[i].push(t.as_nanos() as u64);
                        long_polls[i] += take_long_polls();
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => status[i] = Some("not yet: the peer cannot run this workload (see its module)".into()),
                    Err(e) => status[i] = Some(format!("failed: {e}")),
                }
                if progress {
                    eprint!(".");
                }
            }
        }
        for (i, p) in o.peers.iter().enumerate() {
            let (st, error) = match &status[i] {
                None => ("ok".to_string(), None),
                Some(s) if s.starts_with("not yet") => ("not yet".to_string(), Some(s.clone())),
                Some(s) => ("failed".to_string(), Some(s.clone())),
            };
            let ok = st == "ok";
            rows.push(Row {
                workload: format!("actors/{}", w.name),
                scale: n,
                runtime: p.clone(),
                status: st,
                error,
                group: "actors".into(),
                stats: if ok { RowStats::of(&samples[i]) } else { None },
                samples_ns: samples[i].clone(),
                long_polls: long_polls[i],
            });
        }
    }
    if progress {
        eprintln!();
    }
    let ratios = ratios(&rows);
    Results {
        schema: SCHEMA,
        machine: Machine::detect(),
        profile: "actors".into(),
        created_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        settings: Settings {
            workers: o.workers,
            reps: o.reps,
            warmup: o.warmup,
            runtimes: o.peers.clone(),
            filter: if o.filter.is_empty() { None } else { Some(o.filter.join(",")) },
        },
        results: rows,
        ratios,
        sections: Default::default(),
    }
}

fn scaled(name: &str, scale: u64, percent: u64) -> u64 {
    let n = (scale * percent / 100).max(10);
    if name.starts_with("skynet") {
        // A power of ten, so every node has ten children.
        10u64.pow(n.ilog10())
    } else {
        n
    }
}

/// `weft-actor` ÷ each other peer, paired by round.
pub fn ratios(rows: &[Row]) -> Vec<RatioRow> {
    let mut out = Vec::new();
    for row in rows.iter().filter(|r| r.runtime == "weft-actor") {
        for b in rows.iter().filter(|b| b.workload == row.workload && b.scale == row.scale && b.runtime != "weft-actor")
        {
            out.extend(results::ratio(row, b));
        }
    }
    out
}

/// The markdown table: median per peer (per operation) and weft-actor's ratio to each.
pub fn markdown(r: &Results) -> String {
    let mut s = String::new();
    let peers = &r.settings.runtimes;
    let _ = writeln!(s, "# weft-lab actors\n");
    let _ = writeln!(
        s,
        "{} workers, {} rounds (+{} warm-up), peers interleaved per round; time per operation (median); \
         ratio = weft-actor ÷ peer (paired by round; < 1 is a win), 95% CI.\n",
        r.settings.workers, r.settings.reps, r.settings.warmup
    );
    let _ = write!(s, "| workload | n |");
    for p in peers {
        let _ = write!(s, " {p} |");
    }
    for p in peers.iter().filter(|p| *p != "weft-actor") {
        let _ = write!(s, " vs {p} |");
    }
    let _ = write!(s, "\n|---|---|");
    for _ in 0..peers.len() * 2 - 1 {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s);
    let mut seen = Vec::new();
    for row in &r.results {
        if seen.contains(&(&row.workload, row.scale)) {
            continue;
        }
        seen.push((&row.workload, row.scale));
        let _ = write!(s, "| {} | {} |", row.workload.trim_start_matches("actors/"), row.scale);
        for p in peers {
            let cell = match r.row(&row.workload, row.scale, p) {
                Some(x) if x.is_ok() => {
                    crate::framework::report::fmt_time(x.median().unwrap_or(0.0) / row.scale as f64)
                }
                Some(x) => x.status.clone(),
                None => "-".into(),
            };
            let _ = write!(s, " {cell} |");
        }
        for p in peers.iter().filter(|p| *p != "weft-actor") {
            let cell = r
                .ratios
                .iter()
                .find(|q| q.workload == row.workload && q.scale == row.scale && &q.baseline == p)
                .map_or("-".to_string(), |q| format!("{:.2}x [{:.2}, {:.2}]", q.median_ratio, q.ci95[0], q.ci95[1]));
            let _ = write!(s, " {cell} |");
        }
        let _ = writeln!(s);
    }
    let notes: Vec<String> = r
        .results
        .iter()
        .filter_map(|x| x.error.as_ref().map(|e| format!("* {} {}: {e}", x.workload, x.runtime)))
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(s, "\n{}", notes.join("\n"));
    }
    let long = crate::framework::report::long_polls(r);
    if !long.is_empty() {
        let _ = writeln!(
            s,
            "\nlong polls (weft's monitor, polls over 10 ms in the counted rounds, counted instead of warned about): {}",
            long.join(", ")
        );
    }
    s
}

/// Measures and writes `DIR/results.json` and `DIR/report.md`.
pub fn run_study(o: &ActorOptions, out: &Path, progress: bool) -> Result<Results, String> {
    let r = measure(o, progress);
    let md = markdown(&r);
    print!("{md}");
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    std::fs::write(out.join("results.json"), r.to_json()).map_err(|e| e.to_string())?;
    std::fs::write(out.join("report.md"), &md).map_err(|e| e.to_string())?;
    println!("\nwrote {}/results.json and report.md", out.display());
    Ok(r)
}

/// The actor workloads at their smoke sizes on every available peer, added to `report`, and
/// the idle-actor sample (1,000 actors, in this process: its answers are checked, its bytes
/// mean nothing here).
pub fn smoke(options: &SmokeOptions, report: &mut SmokeReport) {
    let workers = options.workers;
    silence_panics();
    for p in PEERS.iter().chain(DIAGNOSTIC_PEERS) {
        let outcome = idle::sample(p, 1_000, workers).map(|_| Some(String::new()));
        report.check(&what("idle_bytes", 1_000, p), outcome);
    }
    for w in WORKLOADS {
        for p in PEERS.iter().chain(DIAGNOSTIC_PEERS) {
            let outcome = sample(p, w.name, w.smoke, workers)
                .map(|t| t.map(|t| format!("{:>10}", crate::framework::report::fmt_time(t.as_nanos() as f64))));
            report.check(&what(w.name, w.smoke, p), outcome);
        }
    }
}

/// A smoke line's columns: `actors/NAME  N  PEER`.
fn what(name: &str, n: u64, peer: &str) -> String {
    format!("actors/{name:<15} {n:>6} {peer:<10}")
}

/// `weft-lab actors`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Counted rounds (each runs every peer once per workload).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Discarded warm-up rounds.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Size of every workload, in percent of its default size (e.g. 10 for a quick look).
    #[arg(long, default_value_t = 100)]
    pub percent: u64,
    /// Actors per bytes-per-idle-actor sample (0 skips that table).
    #[arg(long, default_value_t = idle::ACTORS)]
    pub idle_actors: u64,
    /// Rounds of the bytes-per-idle-actor table (a fresh process per peer per round).
    #[arg(long, default_value_t = 3)]
    pub idle_rounds: usize,
    /// Writes OUT/results.json, OUT/idle.json and OUT/report.md.
    #[arg(long, default_value = "lab-results/actors")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// `weft-lab actors`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let peers: Vec<String> = if args.selection.runtimes.is_empty() {
        PEERS.iter().map(|p| p.to_string()).collect()
    } else {
        args.selection.runtimes.clone()
    };
    check_names(&peers)?;
    let options = ActorOptions {
        peers,
        filter: args.selection.filter.clone(),
        workers: args.selection.workers(),
        reps: args.reps.max(1),
        warmup: args.warmup,
        percent: args.percent.max(1),
    };
    let timed = WORKLOADS.iter().any(|w| crate::framework::selection::selected(w.name, &options.filter));
    if timed {
        run_study(&options, &args.out, !args.selection.quiet)?;
    }
    let wants_idle = crate::framework::selection::selected("idle_bytes", &options.filter);
    if args.idle_actors > 0 && wants_idle {
        let exe = crate::framework::selection::this_exe()?;
        let rounds = args.idle_rounds.max(1);
        let rows = idle::measure(&exe, &options.peers, args.idle_actors, options.workers, rounds)?;
        let md = idle::markdown(&rows, rounds);
        print!("{md}");
        std::fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;
        let report = args.out.join("report.md");
        let mut all = if timed { std::fs::read_to_string(&report).map_err(|e| e.to_string())? } else { String::new() };
        all.push_str(&md);
        std::fs::write(&report, all).map_err(|e| e.to_string())?;
        let json = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
        std::fs::write(args.out.join("idle.json"), json).map_err(|e| e.to_string())?;
    }
    Ok(ExitCode::SUCCESS)
}
