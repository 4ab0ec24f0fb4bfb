//! `actors-remote`: actors across processes, measured. Two processes on loopback — a server
//! and a driver — for each system: **weft-actor-remote** and **raw Zenoh** (a subscriber,
//! queryables and a liveliness token: the floor under weft-actor-remote, which rides it), both
//! `lab/services/actors-remote` on weft; and the peers, **kameo** with its `remote` feature
//! (libp2p) and **ractor_cluster**, both `lab/services/actors-remote-peers` on the real tokio,
//! each written the way its own documentation shows. Each service is built on first use into
//! its own target directory (Zenoh and libp2p stay out of the lab's own build; `--systems`
//! picks which are built and run).
//!
//! Workloads, each a fresh driver process against the round's server: remote tell throughput
//! with 16 B and 1 KiB messages (the receiver counts every one before the clock stops), ask
//! round trips at 1 and 64 outstanding (p50/p99), 10,000 lookups of a name, and the time from
//! the server's SIGKILL to the driver's notice (weft: a monitor; raw Zenoh: its liveliness
//! subscriber; kameo: `link_remote`'s `PeerDisconnected`; ractor: the node server's
//! session-disconnected event; a driver that hears nothing in 10 s says `down timeout`).
//! CPU per operation is both processes' user + system time over the workload. Systems
//! alternate round by round; ratios are weft ÷ zenoh and weft ÷ the best peer (kameo or
//! ractor, whichever has the higher median ops/s for that workload) over same-round pairs.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::framework::{service_ab, services, stats};

/// Every system, in report order.
const SYSTEMS: [&str; 4] = ["weft", "zenoh", "kameo", "ractor"];

/// The systems `lab/services/actors-remote-peers` serves; the rest are `actors-remote`'s.
const PEERS: [&str; 2] = ["kameo", "ractor"];

/// `weft-lab actors-remote`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved rounds (each system once per round, fresh processes).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Messages per tell run (the 1 KiB run sends a quarter).
    #[arg(long, default_value_t = 200_000)]
    pub tells: u64,
    /// Asks per ask run.
    #[arg(long, default_value_t = 5_000)]
    pub asks: u64,
    /// Lookups per lookup run.
    #[arg(long, default_value_t = 10_000)]
    pub lookups: u64,
    /// Systems to measure, in any order: weft, zenoh, kameo, ractor.
    #[arg(long, value_delimiter = ',', default_value = "weft,zenoh,kameo,ractor")]
    pub systems: Vec<String>,
    /// Where the weft/zenoh service builds go.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/actors-remote"))]
    pub target_dir: PathBuf,
    /// Where the kameo/ractor service builds go (real tokio: a graph of its own).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/actors-remote-peers"))]
    pub peers_target_dir: PathBuf,
    /// Build unoptimised (CI's smoke run; its numbers mean nothing).
    #[arg(long)]
    pub debug_services: bool,
    /// Writes OUT/results.json and OUT/report.md.
    #[arg(long, default_value = "lab-results/actors-remote")]
    pub out: PathBuf,
}

/// One driver run's result (its JSON line), plus the server's CPU over it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct Run {
    system: String,
    workload: String,
    ops: u64,
    secs: f64,
    per_s: f64,
    p50_us: f64,
    p99_us: f64,
    driver_cpu_s: f64,
    #[serde(default)]
    server_cpu_s: f64,
}

/// A child killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_endpoint() -> Result<String, String> {
    Ok(format!("tcp/127.0.0.1:{}", services::free_port()?))
}

fn cpu_of(pid: u32) -> Result<f64, String> {
    service_ab::process_cpu(pid).map(|d| d.as_secs_f64())
}

/// Starts a process and waits for the line `expect` on its stdout (returning the reader).
fn start(exe: &std::path::Path, args: &[&str], expect: &str) -> Result<(Proc, BufReader<ChildStdout>), String> {
    let (child, line, out) = services::start_and_read_line(exe, args)?;
    let proc = Proc(child);
    if line != expect {
        return Err(format!("{} {args:?}: expected {expect:?}, got {line:?}", exe.display()));
    }
    Ok((proc, out))
}

fn drive(exe: &std::path::Path, system: &str, ep: &str, workload: &str, n: u64, server: u32) -> Result<Run, String> {
    let cpu0 = cpu_of(server)?;
    let n = n.to_string();
    let out = Command::new(exe)
        .args(["drive", "--system", system, "--connect", ep, "--workload", workload, "--n", &n])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{system} {workload} driver failed ({}): {text}", out.status));
    }
    let mut run: Run = serde_json::from_str(text.lines().last().unwrap_or(""))
        .map_err(|e| format!("{system} {workload}: {e}: {text}"))?;
    run.server_cpu_s = cpu_of(server)? - cpu0;
    Ok(run)
}

/// SIGKILL of the server to the driver's notice; `None` when the driver heard nothing within
/// its 10 s (`down timeout`).
fn detection(exe: &std::path::Path, system: &str, ep: &str, mut server: Proc) -> Result<Option<Duration>, String> {
    let (_watcher, mut out) =
        start(exe, &["drive", "--system", system, "--connect", ep, "--workload", "watch"], "watching")?;
    let killed = Instant::now();
    server.0.kill().map_err(|e| e.to_string())?;
    let mut line = String::new();
    out.read_line(&mut line).map_err(|e| e.to_string())?;
    let took = killed.elapsed();
    match line.trim() {
        "down timeout" => Ok(None),
        l if l.starts_with("down") => Ok(Some(took)),
        _ => Err(format!("{system}: the watcher printed {line:?}, not a down notice")),
    }
}

#[derive(Serialize)]
struct Results {
    rounds: Vec<Vec<Run>>,
    /// Per round and system; `None`: not noticed within 10 s.
    detection_ms: Vec<(String, Option<f64>)>,
}

fn median_of(runs: &[&Run], f: fn(&Run) -> f64) -> f64 {
    stats::median(&runs.iter().map(|r| f(r)).collect::<Vec<_>>())
}

/// Per-run figures the report compares: ops/s, p50 µs, CPU µs/op.
fn figures(r: &Run) -> [f64; 3] {
    [r.per_s, r.p50_us, (r.driver_cpu_s + r.server_cpu_s) * 1e6 / r.ops.max(1) as f64]
}

/// `a ÷ b` over same-round pairs, one cell per figure the workload has.
fn ratio_cells(w: &str, a: &[[f64; 3]], b: &[[f64; 3]]) -> String {
    let cell = |i: usize| {
        let pick = |v: &[[f64; 3]]| v.iter().map(|f| f[i]).collect::<Vec<_>>();
        stats::paired_ratio(&pick(a), &pick(b), i as u64 + 1).to_string()
    };
    if w.starts_with("tell") {
        format!("ops/s {}, CPU/op {}", cell(0), cell(2))
    } else {
        format!("ops/s {}, p50 {}, CPU/op {}", cell(0), cell(1), cell(2))
    }
}

fn report(res: &Results, args: &Args, systems: &[&str]) -> String {
    let mut md = format!(
        "## actors-remote — two processes on loopback, {} interleaved rounds\n\n\
         weft = weft-actor-remote (a served `demo::Counter`, tells of `Blob`s, asks of `Echo(16 B)`, `Node::lookup`, a monitor); zenoh = raw Zenoh 1.10.2 on weft (put to a counting subscriber, get on an echo queryable, liveliness get, a liveliness subscriber); kameo = kameo 0.22 `remote` on libp2p TCP+noise+yamux, real tokio (`tell(..).send_ack()` 64 in flight — its fire-and-forget `send` drops messages past 100 concurrent streams —, `ask`, `RemoteActorRef::lookup` over Kademlia, `link_remote`); ractor = ractor_cluster 0.15, real tokio (`cast`, `call` through the remote actor, `pg::get_members` — local state, no wire —, the node server's session events). CPU/op: driver + server user+system time. Ratios: median of same-round pairs [95% CI].\n\n\
         | workload | system | ops/s | p50 µs | p99 µs | CPU µs/op |\n|---|---|---:|---:|---:|---:|\n",
        args.rounds
    );
    let all: Vec<&Run> = res.rounds.iter().flatten().collect();
    let (mut vs_zenoh, mut vs_peer) = (String::new(), String::new());
    for w in ["tell16", "tell1k", "ask1", "ask64", "lookup"] {
        let mut per_sys: Vec<(&str, Vec<[f64; 3]>)> = Vec::new();
        for &sys in systems {
            let runs: Vec<&Run> = all.iter().copied().filter(|r| r.workload == w && r.system == sys).collect();
            let lat = |f: fn(&Run) -> f64| {
                if w.starts_with("tell") {
                    "–".to_string()
                } else {
                    format!("{:.1}", median_of(&runs, f))
                }
            };
            md += &format!(
                "| {w} | {sys} | {:.0} | {} | {} | {:.2} |\n",
                median_of(&runs, |r| r.per_s),
                lat(|r| r.p50_us),
                lat(|r| r.p99_us),
                median_of(&runs, |r| figures(r)[2])
            );
            per_sys.push((sys, runs.iter().map(|r| figures(r)).collect()));
        }
        let of = |name: &str| per_sys.iter().find(|(s, _)| *s == name).map(|(_, v)| v);
        let Some(weft) = of("weft") else { continue };
        if let Some(zenoh) = of("zenoh") {
            vs_zenoh += &format!("- {w}: {}\n", ratio_cells(w, weft, zenoh));
        }
        let median_ops = |v: &[[f64; 3]]| stats::median(&v.iter().map(|f| f[0]).collect::<Vec<_>>());
        let best = PEERS
            .iter()
            .filter_map(|p| of(p).map(|v| (*p, v)))
            .max_by(|a, b| median_ops(a.1).total_cmp(&median_ops(b.1)));
        if let Some((peer, v)) = best {
            vs_peer += &format!("- {w} (best peer: {peer}): {}\n", ratio_cells(w, weft, v));
        }
    }
    if !vs_zenoh.is_empty() {
        md += "\nweft ÷ zenoh:\n\n";
        md += &vs_zenoh;
    }
    if !vs_peer.is_empty() {
        md += "\nweft ÷ best peer (kameo or ractor, higher median ops/s):\n\n";
        md += &vs_peer;
    }
    md += "\nSIGKILL of the server → the driver's notice (median, ms):";
    for &sys in systems {
        let v: Vec<Option<f64>> = res.detection_ms.iter().filter(|(s, _)| s == sys).map(|(_, ms)| *ms).collect();
        let seen: Vec<f64> = v.iter().flatten().copied().collect();
        md += &match (seen.len(), v.len()) {
            (0, _) => format!(" {sys} not detected within 10 s;"),
            (k, n) if k < n => {
                format!(" {sys} {:.1} ({} of {n} not detected within 10 s);", stats::median(&seen), n - k)
            }
            _ => format!(" {sys} {:.1};", stats::median(&seen)),
        };
    }
    md += "\n";
    md
}

/// `weft-lab actors-remote`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    if let Some(bad) = args.systems.iter().find(|s| !SYSTEMS.contains(&s.as_str())) {
        return Err(format!("--systems: unknown system {bad:?} (known: {})", SYSTEMS.join(", ")));
    }
    let systems: Vec<&str> = SYSTEMS.into_iter().filter(|s| args.systems.iter().any(|a| a == s)).collect();
    let (wants_bench, wants_peers) =
        (systems.iter().any(|s| !PEERS.contains(s)), systems.iter().any(|s| PEERS.contains(s)));
    let bench = if wants_bench {
        Some(services::build("actors-remote", "actors-remote-bench", &args.target_dir, args.debug_services)?)
    } else {
        None
    };
    let peers = if wants_peers {
        Some(services::build(
            "actors-remote-peers",
            "actors-remote-peers",
            &args.peers_target_dir,
            args.debug_services,
        )?)
    } else {
        None
    };
    let mut res = Results { rounds: Vec::new(), detection_ms: Vec::new() };
    for round in 0..args.rounds.max(1) {
        let mut runs = Vec::new();
        for &sys in &systems {
            eprintln!("actors-remote: round {}/{}, {sys}", round + 1, args.rounds);
            let exe = if PEERS.contains(&sys) { &peers } else { &bench }.as_ref().expect("built above");
            let ep = free_endpoint()?;
            let (server, _out) = start(exe, &["serve", "--system", sys, "--listen", &ep], "ready")?;
            let pid = server.0.id();
            for (w, n) in [
                ("tell16", args.tells),
                ("tell1k", args.tells / 4),
                ("ask1", args.asks),
                ("ask64", args.asks),
                ("lookup", args.lookups),
            ] {
                runs.push(drive(exe, sys, &ep, w, n, pid)?);
            }
            let took = detection(exe, sys, &ep, server)?;
            res.detection_ms.push((sys.to_string(), took.map(|d| d.as_secs_f64() * 1e3)));
        }
        res.rounds.push(runs);
    }
    let mut md = report(&res, &args, &systems);
    if args.debug_services {
        md.insert_str(0, "**Unoptimised builds (`--debug-services`): these numbers mean nothing.**\n\n");
    }
    print!("{md}");
    std::fs::create_dir_all(&args.out).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("report.md"), &md).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("results.json"), serde_json::to_string_pretty(&res).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    println!("\nwrote {}/{{results.json,report.md}}", args.out.display());
    Ok(ExitCode::SUCCESS)
}
