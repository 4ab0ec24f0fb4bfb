//! Bytes per idle actor: what a live actor that is waiting for mail costs in resident memory,
//! on every peer.
//!
//! Like `memory-per-task`, each sample is a fresh child process (`weft-lab __actors`):
//! in one process the allocator keeps the pages an earlier sample freed, so a later one
//! would grow by nothing. In the child, on a freshly built runtime of the peer:
//! 1. reads RSS (`/proc/self/statm`);
//! 2. spawns `n` actors, keeping each one's address (weft-actor stops an actor whose last
//!    reference is dropped, so a live actor has one), and asks every actor once, checking each
//!    answer: every actor is alive, started, has had mail, and waits on an empty mailbox;
//! 3. reads RSS again: (after − before − the address vector's own bytes) ÷ n is the figure.
//!
//! The addresses are the caller's, not the actor's, so their vector is subtracted exactly
//! (`n × size_of::<Addr>()`). What is counted is everything else the framework allocates per
//! actor: task, mailbox, any cell or registry entry, and the state.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use serde::Serialize;

use super::adapter::{ActorPeer, Flow};
use crate::framework::memory::rss_bytes;
use crate::framework::stats;

/// Actors per sample in `weft-lab actors`: a million, enough that per-actor bytes dominate
/// the process's fixed overhead.
pub const ACTORS: u64 = 1_000_000;

/// One peer's samples.
#[derive(Debug, Clone, Serialize)]
pub struct IdleRow {
    pub peer: String,
    pub actors: u64,
    pub bytes_per_actor: Vec<f64>,
    pub median: f64,
}

/// Spawns `n` idle actors on `P` and returns the RSS growth per actor in bytes, after checking
/// that every actor answered.
pub fn bytes_per_actor<P: ActorPeer>(n: u64, workers: usize) -> Result<f64, String> {
    P::block_on(workers, async move {
        let before = rss_bytes()?;
        let addrs: Vec<P::Addr> = (0..n).map(|_| P::spawn(Box::new(|m| (m + 1, Flow::Continue)))).collect();
        for (i, a) in addrs.iter().enumerate() {
            let got = P::ask(a, i as u64).await;
            if got != i as u64 + 1 {
                return Err(format!("actor {i} answered {got}, not {}", i + 1));
            }
        }
        let after = rss_bytes()?;
        let own = (addrs.capacity() * std::mem::size_of::<P::Addr>()) as f64;
        drop(addrs);
        Ok((after as f64 - before as f64 - own) / n as f64)
    })
}

/// `weft-lab __actors`: one sample in this fresh process.
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[arg(long)]
    pub peer: String,
    #[arg(long, default_value_t = ACTORS)]
    pub actors: u64,
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
}

/// One sample of `peer` in this process.
pub fn sample(peer: &str, n: u64, workers: usize) -> Result<f64, String> {
    super::with_peer!(peer, |P| bytes_per_actor::<P>(n, workers))
}

/// Prints `ok <bytes per actor>`.
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    if args.actors == 0 {
        return Err("--actors must be at least 1".into());
    }
    let b = sample(&args.peer, args.actors, args.workers)?;
    println!("ok {b:.1}");
    Ok(ExitCode::SUCCESS)
}

/// `rounds` interleaved rounds, one child process per peer per round.
pub fn measure(exe: &Path, peers: &[String], n: u64, workers: usize, rounds: usize) -> Result<Vec<IdleRow>, String> {
    let mut samples = vec![Vec::new(); peers.len()];
    for _ in 0..rounds {
        for (i, p) in peers.iter().enumerate() {
            let out = Command::new(exe)
                .args(["__actors", "--peer", p, "--actors", &n.to_string(), "--workers", &workers.to_string()])
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("starting __actors: {e}"))?;
            let text = String::from_utf8_lossy(&out.stdout);
            let v: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix("ok ")?.trim().parse().ok())
                .ok_or_else(|| format!("{p}: idle actors: {}{}", text.trim(), String::from_utf8_lossy(&out.stderr)))?;
            samples[i].push(v);
        }
    }
    Ok(peers
        .iter()
        .zip(samples)
        .map(|(p, s)| IdleRow { peer: p.clone(), actors: n, median: stats::median(&s), bytes_per_actor: s })
        .collect())
}

/// The table: median bytes per idle actor per peer, and weft-actor's ratio to each.
pub fn markdown(rows: &[IdleRow], rounds: usize) -> String {
    let mut s = format!(
        "\n## Bytes per idle actor\n\n{} actors per sample, each asked once (answer checked) and then idle; \
         RSS growth ÷ actors, the address vector subtracted; a fresh process per peer per sample, {rounds} \
         interleaved rounds, median.\n\n| peer | bytes per actor | weft-actor ÷ peer |\n|---|---|---|\n",
        rows.first().map_or(0, |r| r.actors)
    );
    let weft = rows.iter().find(|r| r.peer == "weft-actor").map(|r| r.median);
    for r in rows {
        let ratio = match weft {
            Some(w) if r.peer != "weft-actor" && r.median > 0.0 => format!("{:.2}x", w / r.median),
            _ => "-".into(),
        };
        s.push_str(&format!("| {} | {:.0} | {ratio} |\n", r.peer, r.median));
    }
    s
}
