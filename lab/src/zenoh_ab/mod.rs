//! `zenoh-ab`: Zenoh itself, A/B on tokio and on weft. One Zenoh program written with Zenoh's
//! documented API (`lab/services/zenoh-ab`) is built twice — the real tokio, and the same
//! dependencies with `[patch.crates-io] tokio = compat/tokio` — so Zenoh's five internal
//! runtimes, its blocking bridges and this program's own runtime all run on the build's runtime.
//!
//! Each round starts, per build (the order alternates round by round), a serving peer (a
//! counting subscriber, an echo queryable) proved to run the runtime its build claims, then one
//! fresh driver peer per workload over loopback TCP: `put16`/`put1k` put samples with congestion
//! control Block (the clock stops when the server has counted every one, asserted equal),
//! `get1`/`get64` run echo round trips with 1 or 64 outstanding (each reply checked). CPU per
//! message is both processes' user + system time over the workload (the driver's own, reported
//! by it; the server's from `/proc`). Ratios are weft ÷ tokio over same-round pairs.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use serde::{Deserialize, Serialize};

use crate::framework::service_ab::{self, Build, Running};
use crate::framework::services;
use crate::framework::stats;

/// The workloads, in the order each round runs them.
const WORKLOADS: [&str; 4] = ["put16", "put1k", "get1", "get64"];

/// `weft-lab zenoh-ab`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved rounds (each build once per round, fresh processes).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Samples per put run.
    #[arg(long, default_value_t = 200_000)]
    pub puts: u64,
    /// Round trips per get run.
    #[arg(long, default_value_t = 5_000)]
    pub gets: u64,
    /// Where the two builds go.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/zenoh-ab"))]
    pub target_dir: PathBuf,
    /// Build unoptimised (CI's smoke run: checks the command works end to end from a clean
    /// clone; its numbers mean nothing).
    #[arg(long)]
    pub debug_services: bool,
    /// Writes OUT/results.json and OUT/report.md.
    #[arg(long, default_value = "lab-results/zenoh-ab")]
    pub out: PathBuf,
}

/// One driver run (its JSON line), plus its build and the server's CPU over it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Run {
    #[serde(default)]
    build: String,
    workload: String,
    ops: u64,
    secs: f64,
    p50_us: f64,
    p99_us: f64,
    driver_cpu_s: f64,
    #[serde(default)]
    server_cpu_s: f64,
}

impl Run {
    fn per_s(&self) -> f64 {
        self.ops as f64 / self.secs
    }

    fn cpu_us_per_op(&self) -> f64 {
        (self.driver_cpu_s + self.server_cpu_s) * 1e6 / self.ops.max(1) as f64
    }
}

fn drive(exe: &PathBuf, build: Build, server: &Running, workload: &str, n: u64) -> Result<Run, String> {
    let cpu0 = server.cpu()?;
    let endpoint = format!("tcp/{}", server.addr);
    let n = n.to_string();
    let out = Command::new(exe)
        .args(["drive", "--connect", &endpoint, "--workload", workload, "--n", &n])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("starting {}: {e}", exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{} {workload}: the driver failed ({}): {text}", build.name(), out.status));
    }
    let mut run: Run = serde_json::from_str(text.lines().last().unwrap_or(""))
        .map_err(|e| format!("{} {workload}: {e}: {text:?}", build.name()))?;
    run.build = build.name().to_string();
    run.server_cpu_s = (server.cpu()? - cpu0).as_secs_f64();
    Ok(run)
}

/// One build's runs in one round: a fresh server, one driver per workload.
fn round(exe: &PathBuf, build: Build, args: &Args) -> Result<Vec<Run>, String> {
    let listen = format!("tcp/127.0.0.1:{}", services::free_port()?);
    let server = Running::start(exe, &["serve", "--listen", &listen])?;
    server.expect_runtime(build)?;
    let mut runs = Vec::new();
    for workload in WORKLOADS {
        let n = if workload.starts_with("put") { args.puts } else { args.gets };
        runs.push(drive(exe, build, &server, workload, n)?);
    }
    Ok(runs)
}

fn report(runs: &[Run], args: &Args) -> String {
    let mut md = format!(
        "## zenoh-ab — Zenoh 1.10.2 on the real tokio and on weft, two processes on loopback, {} interleaved rounds\n\n\
         put: samples put with congestion control Block, every one counted by the server; get: echo round trips \
         at 1 and 64 outstanding. CPU/msg: driver + server user+system time. Medians over rounds; ratios weft ÷ \
         tokio, median of same-round pairs [95% CI].\n\n\
         | workload | build | msgs/s | p50 µs | p99 µs | CPU µs/msg |\n|---|---|---:|---:|---:|---:|\n",
        args.rounds
    );
    let mut ratios = String::from("\nweft ÷ tokio:\n\n");
    for (k, w) in WORKLOADS.into_iter().enumerate() {
        let of = |b: Build| runs.iter().filter(|r| r.workload == w && r.build == b.name()).collect::<Vec<_>>();
        let col = |b: Build, f: fn(&Run) -> f64| of(b).into_iter().map(f).collect::<Vec<f64>>();
        for b in Build::BOTH {
            let lat = |f: fn(&Run) -> f64| {
                if w.starts_with("put") {
                    "–".to_string()
                } else {
                    format!("{:.1}", stats::median(&col(b, f)))
                }
            };
            md += &format!(
                "| {w} | {} | {:.0} | {} | {} | {:.2} |\n",
                b.name(),
                stats::median(&col(b, Run::per_s)),
                lat(|r| r.p50_us),
                lat(|r| r.p99_us),
                stats::median(&col(b, Run::cpu_us_per_op)),
            );
        }
        let ratio = |f: fn(&Run) -> f64, seed: u64| {
            stats::paired_ratio(&col(Build::Weft, f), &col(Build::Tokio, f), seed).to_string()
        };
        let seed = 10 * k as u64;
        ratios +=
            &format!("- {w}: msgs/s {}, CPU/msg {}", ratio(Run::per_s, seed + 1), ratio(Run::cpu_us_per_op, seed + 2));
        if w.starts_with("get") {
            ratios += &format!(", p50 {}, p99 {}", ratio(|r| r.p50_us, seed + 3), ratio(|r| r.p99_us, seed + 4));
        }
        ratios += "\n";
    }
    md + &ratios
}

/// `weft-lab zenoh-ab`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let exes = service_ab::build_both("zenoh-ab", &args.target_dir, args.debug_services)?;
    let mut runs = Vec::new();
    for r in 0..args.rounds.max(1) {
        // Alternate which build goes first, so neither always runs on a machine the other warmed.
        let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let build = Build::BOTH[i];
            eprintln!("zenoh-ab: round {}/{}, {}", r + 1, args.rounds, build.name());
            runs.extend(round(&exes[i], build, &args)?);
        }
    }
    let mut md = report(&runs, &args);
    if args.debug_services {
        md.insert_str(0, "**Unoptimised builds (`--debug-services`): these numbers mean nothing.**\n\n");
    }
    print!("{md}");
    std::fs::create_dir_all(&args.out).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("report.md"), &md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&runs).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("results.json"), json).map_err(|e| e.to_string())?;
    println!("\nwrote {}/{{results.json,report.md}}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
