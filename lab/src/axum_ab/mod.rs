//! `axum-ab`: a real framework service, A/B on tokio and on weft. One axum app written as users
//! write tokio services (`lab/services/axum-svc`: a JSON route, a route calling a second local
//! service through reqwest, a `tokio::fs` read, a `spawn_blocking` hash, and a `/legacy` route
//! that blocks its worker for 50 ms) is built twice — the real tokio, and the same lock with
//! `[patch.crates-io] tokio = compat/tokio` — and loaded with `wrk`.
//!
//! Two scenarios, each at every `--connections` count, builds interleaved round by round (a
//! fresh server process each round, the same backend process for both):
//! - **plain**: wrk rotates over `/json`, `/relay`, `/file`, `/hash`.
//! - **blocking** (`--blocking-connections`): the same load, plus a second wrk sending paced
//!   requests to `/legacy` at 1% of the plain round's tokio request rate (so both builds face
//!   the same blocking load per second); the table is the *other* routes' latency, which is
//!   what a blocked worker costs everyone else.
//!
//! Each round first proves which runtime runs (worker thread names only that runtime uses) and
//! checks every route's answer byte for byte; during load the wrk script checks every response
//! (status and route marker) and a bad one fails the row. Server CPU per request is the
//! service process's user + system time over the load (exited threads included) divided by
//! the requests it answered; the backend's CPU is not counted.
//!
//! Builds, processes, rounds and tables: `framework::service_ab`; the load: `framework::wrk`.
//!
//! Architecture Invariant: the two builds share one source file and one dependency set; only
//! the patch lines differ (`services/axum-svc/{tokio,weft}/Cargo.toml`).

mod service;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::framework::idle_conns;
use crate::framework::selection::write_md_json;
use crate::framework::service_ab::{self, Build, Round, Row, Running};
use crate::framework::wrk;
use service::PAGE_MARKER;

/// The routes of the plain load (rotated by wrk).
const ROUTES: [&str; 4] = ["/json", "/relay", "/file", "/hash"];
/// What `/legacy` blocks for (the service's constant; used to pace its connections).
const LEGACY_BLOCK_MS: f64 = 50.0;
/// The blocking route's share of all requests (paced at the plain tokio rate).
const LEGACY_SHARE: f64 = 0.01;

/// `weft-lab axum-ab`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// wrk connections for the plain scenario; a comma-separated list is a sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,64,1024")]
    pub connections: Vec<usize>,
    /// wrk connections for the blocking scenario (each also runs plain first, which sets the
    /// `/legacy` pace); `0` skips the scenario.
    #[arg(long, value_delimiter = ',', default_value = "64")]
    pub blocking_connections: Vec<usize>,
    /// Seconds of load per build per round (whole seconds: wrk's unit).
    #[arg(long, default_value_t = 4)]
    pub seconds: u64,
    /// Interleaved rounds (tokio, weft, tokio, weft, …).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Where the two service builds go.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/axum-ab"))]
    pub target_dir: PathBuf,
    /// Build the services unoptimised (CI's smoke run: checks the command works end to end
    /// from a clean clone; its numbers mean nothing).
    #[arg(long)]
    pub debug_services: bool,
    /// Writes OUT/axum_ab.md and OUT/axum_ab.json.
    #[arg(long, default_value = "lab-results/axum_ab")]
    pub out: PathBuf,
}

/// Everything a round needs besides the build.
struct Setup {
    exes: [PathBuf; 2],
    backend: String,
    page_path: PathBuf,
    page: Vec<u8>,
    script: PathBuf,
    per_round: Duration,
}

/// `/legacy` pacing: connections and the pause before each request, for `rate` requests/s.
fn legacy_pace(rate: f64) -> (usize, u64) {
    let rate = rate.max(0.5);
    // Enough connections that each waits ≥ the block time between requests.
    let conns = ((rate * 2.0 * LEGACY_BLOCK_MS / 1000.0).ceil() as usize).max(1);
    let cycle_ms = conns as f64 * 1000.0 / rate;
    (conns, (cycle_ms - LEGACY_BLOCK_MS).round().max(1.0) as u64)
}

fn one_round(setup: &Setup, build: Build, connections: usize, legacy: Option<(usize, u64)>) -> Result<Round, String> {
    let exe = &setup.exes[build as usize];
    let page = setup.page_path.to_str().ok_or("page path is not UTF-8")?;
    let server = Running::start(exe, &["--backend", &setup.backend, "--file", page])?;
    server.expect_runtime(build)?;
    service::check_routes(&server, &setup.page, legacy.is_some())?;
    let cpu_before = server.cpu()?;
    let main = wrk::Wrk::start(&setup.script, server.addr, connections, setup.per_round, &ROUTES, 0)?;
    let legacy_wrk = match legacy {
        Some((conns, delay)) => {
            Some(wrk::Wrk::start(&setup.script, server.addr, conns, setup.per_round, &["/legacy"], delay)?)
        }
        None => None,
    };
    let main = main.finish()?;
    let side = legacy_wrk.map(wrk::Wrk::finish).transpose()?;
    let cpu = server.cpu()?.saturating_sub(cpu_before);
    Ok(Round { main, side, cpu })
}

/// Both builds, `rounds` interleaved rounds; one row per build.
fn measure(
    setup: &Setup,
    scenario: &'static str,
    connections: usize,
    legacy: Option<(usize, u64)>,
    rounds: usize,
) -> Result<[Row; 2], String> {
    service_ab::measure("axum-ab", scenario, connections, rounds, |build| one_round(setup, build, connections, legacy))
}

fn markdown(rows: &[Row], setup: &Setup, rounds: usize) -> String {
    let mut md = format!(
        "## axum-ab — one axum service, real tokio vs patched to weft, wrk, {rounds} interleaved rounds of {:.1} s per build\n\n\
         Routes under load: {} (rotated); blocking scenario adds paced `/legacy` requests (50 ms `std::thread::sleep` on the worker) at {:.0}% of the plain tokio rate, and the table is the other routes' latency. CPU/req: the service process's user+system time per answered request. Ratios are weft ÷ tokio, median of per-round pairs [95% bootstrap CI].\n\n",
        setup.per_round.as_secs_f64(),
        ROUTES.join(", "),
        LEGACY_SHARE * 100.0
    );
    for pair in rows.chunks(2) {
        let [tokio, weft] = pair else { continue };
        md += &format!("### {}, {} connections\n\n", tokio.scenario, tokio.connections);
        md += &service_ab::pair_markdown(tokio, weft, Some("/legacy"));
    }
    md
}

/// `weft-lab axum-ab`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let most = args.connections.iter().chain(&args.blocking_connections).max().copied().unwrap_or(1);
    idle_conns::raise_nofile(most as u64 * 2 + idle_conns::FD_SLACK)?;
    let exes = service_ab::build_both("axum-svc", &args.target_dir, args.debug_services)?;
    let work = args.out.join("work");
    let script = wrk::write_script(&work, "axum_ab", &["\"route\":\"", PAGE_MARKER])?;
    let page = service::page();
    let page_path = work.join("page.html");
    std::fs::write(&page_path, &page).map_err(|e| format!("{}: {e}", page_path.display()))?;
    // The second local service `/relay` calls: the same for both builds, its CPU not counted.
    let backend = Running::start(&exes[Build::Tokio as usize], &["--serve-backend"])?;
    let setup = Setup {
        exes,
        backend: format!("http://{}", backend.addr),
        page_path,
        page,
        script,
        per_round: Duration::from_secs(args.seconds.max(1)),
    };
    let rounds = args.rounds.max(1);
    let mut rows: Vec<Row> = Vec::new();
    let blocking: Vec<usize> = args.blocking_connections.iter().copied().filter(|&c| c > 0).collect();
    let mut plain: Vec<usize> = args.connections.clone();
    plain.extend(blocking.iter().filter(|c| !args.connections.contains(c)));
    for &c in &plain {
        rows.extend(measure(&setup, "plain", c.max(1), None, rounds)?);
    }
    for &c in &blocking {
        let tokio_rps = rows
            .iter()
            .find(|r| r.scenario == "plain" && r.build == "tokio" && r.connections == c)
            .map(|r| r.requests_per_s)
            .ok_or("no plain tokio row to pace /legacy by")?;
        let pace = legacy_pace(tokio_rps * LEGACY_SHARE / (1.0 - LEGACY_SHARE));
        rows.extend(measure(&setup, "blocking", c, Some(pace), rounds)?);
    }
    let mut md = markdown(&rows, &setup, rounds);
    if args.debug_services {
        md.insert_str(0, "**Unoptimised service builds (`--debug-services`): these numbers mean nothing.**\n\n");
    }
    write_md_json(&args.out, "axum_ab", &md, &rows)?;
    let failed: u64 = rows.iter().map(|r| r.errors + r.bad).sum();
    drop(backend);
    if failed > 0 {
        eprintln!("axum-ab: {failed} failed or bad responses (see the errors and bad columns)");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_pace_keeps_each_connection_idle_between_blocks() {
        for rate in [0.5, 3.0, 80.0, 400.0] {
            let (conns, delay) = legacy_pace(rate);
            let achieved = conns as f64 * 1000.0 / (delay as f64 + LEGACY_BLOCK_MS);
            assert!((achieved / rate - 1.0).abs() < 0.05, "rate {rate}: {conns} conns, {delay} ms → {achieved}");
            assert!(delay as f64 >= LEGACY_BLOCK_MS - 1.0, "rate {rate}: a connection would be back-to-back");
        }
    }

    #[test]
    fn the_page_carries_the_marker_and_is_4_kib() {
        let p = service::page();
        assert!(p.len() <= 4096 && p.len() > 4000);
        assert!(std::str::from_utf8(&p).unwrap().contains(PAGE_MARKER));
    }
}
