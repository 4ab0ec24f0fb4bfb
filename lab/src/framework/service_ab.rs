//! The A/B service studies' common ground (`axum-ab`, `data-ab`): one service source under
//! `lab/services/NAME/src`, built twice (`NAME/tokio`: the real tokio; `NAME/weft`: the same
//! dependencies with `[patch.crates-io] tokio = compat/tokio`), each build started as a child
//! process, proved to run the runtime its name claims, and loaded with `wrk` in interleaved
//! rounds (a fresh server process per round). A study supplies its routes, its checks and one
//! round; this module turns rounds into rows (medians over rounds, paired weft ÷ tokio ratios
//! with bootstrap CIs) and the rows into a table.
//!
//! Server CPU per request is the service process's user + system time over the load (exited
//! threads included) divided by the requests it answered; the servers it talks to (a backend,
//! PostgreSQL, Redis) are not counted.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use serde::Serialize;

use super::{services, stats, wrk};

/// Which build of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// `lab/services/NAME/tokio`: the real tokio.
    Tokio,
    /// `lab/services/NAME/weft`: the same source, tokio patched to `compat/tokio`.
    Weft,
}

impl Build {
    pub const BOTH: [Build; 2] = [Build::Tokio, Build::Weft];

    pub fn name(self) -> &'static str {
        match self {
            Build::Tokio => "tokio",
            Build::Weft => "weft",
        }
    }

    /// The worker thread name (`/proc/PID/task/*/comm`, 15 bytes) only this runtime uses.
    fn worker_comm(self) -> &'static str {
        match self {
            Build::Tokio => "tokio-rt-worker",
            Build::Weft => "weft-worker",
        }
    }
}

/// Builds both variants of `lab/services/{project}` (`--locked`, into `target_dir`; release
/// unless `debug`, which only CI's smoke runs use: their numbers mean nothing) and returns their
/// binaries (`{project}-tokio`, `{project}-weft`). The weft build is first checked to hold no
/// real tokio (`cargo tree -i tokio`).
pub fn build_both(project: &str, target_dir: &Path, debug: bool) -> Result<[PathBuf; 2], String> {
    services::expect_only_the_facade(&format!("{project}/weft"))?;
    let build = |b: Build| {
        let name = format!("{project}/{}", b.name());
        services::build(&name, &format!("{project}-{}", b.name()), target_dir, debug)
    };
    Ok([build(Build::Tokio)?, build(Build::Weft)?])
}

/// A service process, killed on drop.
pub struct Running {
    child: Child,
    pub addr: SocketAddr,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Starts `exe args…` and waits for its `listening on ADDR` line.
    pub fn start(exe: &Path, args: &[&str]) -> Result<Running, String> {
        let (mut child, line, _) = crate::framework::services::start_and_read_line(exe, args)?;
        let addr = line.strip_prefix("listening on ").and_then(|a| a.parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{} did not print `listening on ADDR` (got {line:?})", exe.display()));
        };
        Ok(Running { child, addr })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails unless the process runs `build`'s runtime: its worker threads carry a name only
    /// that runtime gives them (so a patch that silently fell through to the real tokio, or
    /// the reverse, cannot pass as an A/B).
    pub fn expect_runtime(&self, build: Build) -> Result<(), String> {
        let dir = format!("/proc/{}/task", self.pid());
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))? {
            let comm = entry.map_err(|e| e.to_string())?.path().join("comm");
            names.push(std::fs::read_to_string(comm).unwrap_or_default().trim().to_string());
        }
        let other = Build::BOTH.into_iter().find(|&b| b != build).expect("two builds");
        if !names.iter().any(|n| n == build.worker_comm()) || names.iter().any(|n| n == other.worker_comm()) {
            return Err(format!("the {} build does not run {} (threads: {names:?})", build.name(), build.name()));
        }
        Ok(())
    }

    /// CPU time of the whole process so far (`process_cpu`).
    pub fn cpu(&self) -> Result<Duration, String> {
        process_cpu(self.pid())
    }

    /// `GET path` over a fresh connection: the status and body.
    pub fn get(&self, path: &str) -> Result<(u16, String), String> {
        super::http1::exchange(self.addr, &self.addr.to_string(), "GET", path, "")
    }

    /// `GET path`, which must answer 200 with JSON.
    pub fn get_json(&self, path: &str) -> Result<serde_json::Value, String> {
        let (status, body) = self.get(path)?;
        if status != 200 {
            return Err(format!("GET {path}: status {status}: {body}"));
        }
        serde_json::from_str(&body).map_err(|e| format!("GET {path}: {e}: {body}"))
    }
}

/// CPU time of process `pid` so far, every thread's, exited ones included, in nanoseconds: the
/// process's CPU-time clock (`clock_getcpuclockid`). `/proc/PID/stat`'s utime + stime count in
/// 10 ms ticks, and summing `/proc/PID/task/*/schedstat` loses threads that exit during a round
/// (the blocking pool's, compensation threads); this clock has neither fault. Every study that
/// measures a server's CPU uses this one definition.
pub fn process_cpu(pid: u32) -> Result<Duration, String> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| format!("pid {pid} out of range"))?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid place for the one clock id the call writes.
    let rc = unsafe { libc::clock_getcpuclockid(pid, &mut clock) };
    if rc != 0 {
        return Err(format!("CPU clock of process {pid}: {}", std::io::Error::from_raw_os_error(rc)));
    }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid place for the time the call writes; `clock` came from the call above.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(format!("CPU clock of process {pid}: {}", std::io::Error::last_os_error()));
    }
    Ok(Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// What one round of one build measured.
pub struct Round {
    /// The measured load.
    pub main: wrk::Summary,
    /// A second load beside it whose latency is not the row's (`axum-ab`'s paced `/legacy`).
    pub side: Option<wrk::Summary>,
    /// The service's CPU over the load.
    pub cpu: Duration,
}

impl Round {
    fn answered(&self) -> u64 {
        self.main.requests + self.side.map_or(0, |l| l.requests)
    }
}

/// One build in one scenario, over all rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub scenario: &'static str,
    pub build: &'static str,
    pub connections: usize,
    /// Requests of the measured load, all rounds.
    pub requests: u64,
    /// Medians over rounds.
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Server CPU (user + system) per answered request, all rounds, µs.
    pub server_cpu_us_per_req: f64,
    /// Requests of the side load, and their share of all answered requests.
    pub side_requests: u64,
    pub side_share: f64,
    /// wrk errors (socket, timeout, status) and responses failing the script's check.
    pub errors: u64,
    pub bad: u64,
    /// Per-round values, for the paired ratios.
    pub rounds_rps: Vec<f64>,
    pub rounds_p99_us: Vec<f64>,
    pub rounds_p999_us: Vec<f64>,
    pub rounds_cpu_us_per_req: Vec<f64>,
}

/// Both builds, `rounds` interleaved rounds (tokio, weft, tokio, weft, …) of `one_round`;
/// one row per build (tokio's first).
pub fn measure(
    study: &str,
    scenario: &'static str,
    connections: usize,
    rounds: usize,
    mut one_round: impl FnMut(Build) -> Result<Round, String>,
) -> Result<[Row; 2], String> {
    let mut per_build: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
    for r in 0..rounds {
        for build in Build::BOTH {
            eprintln!("{study}: {scenario}, {connections} connections, round {}/{rounds}, {}", r + 1, build.name());
            per_build[build as usize].push(one_round(build)?);
        }
    }
    Ok(Build::BOTH.map(|build| row(scenario, build, connections, &per_build[build as usize])))
}

fn row(scenario: &'static str, build: Build, connections: usize, rounds: &[Round]) -> Row {
    let rps: Vec<f64> = rounds.iter().map(|r| r.main.requests as f64 / r.main.took.as_secs_f64()).collect();
    let med = |f: fn(&wrk::Summary) -> f64| stats::median(&rounds.iter().map(|r| f(&r.main)).collect::<Vec<_>>());
    let side_requests: u64 = rounds.iter().filter_map(|r| r.side.map(|l| l.requests)).sum();
    let total: u64 = rounds.iter().map(Round::answered).sum();
    let cpu: Duration = rounds.iter().map(|r| r.cpu).sum();
    let sum =
        |f: fn(&wrk::Summary) -> u64| rounds.iter().map(|r| f(&r.main) + r.side.as_ref().map_or(0, f)).sum::<u64>();
    Row {
        scenario,
        build: build.name(),
        connections,
        requests: rounds.iter().map(|r| r.main.requests).sum(),
        requests_per_s: stats::median(&rps),
        p50_us: med(|s| s.p50_us),
        p99_us: med(|s| s.p99_us),
        p999_us: med(|s| s.p999_us),
        server_cpu_us_per_req: cpu.as_secs_f64() * 1e6 / total.max(1) as f64,
        side_requests,
        side_share: side_requests as f64 / total.max(1) as f64,
        errors: sum(|s| s.errors),
        bad: sum(|s| s.bad),
        rounds_rps: rps,
        rounds_p99_us: rounds.iter().map(|r| r.main.p99_us).collect(),
        rounds_p999_us: rounds.iter().map(|r| r.main.p999_us).collect(),
        rounds_cpu_us_per_req: rounds.iter().map(|r| r.cpu.as_secs_f64() * 1e6 / r.answered().max(1) as f64).collect(),
    }
}

/// The paired weft ÷ tokio ratios of a row pair.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Ratios {
    pub rps: stats::RatioEstimate,
    pub cpu_per_req: stats::RatioEstimate,
    pub p99: stats::RatioEstimate,
    pub p999: stats::RatioEstimate,
}

pub fn ratios(tokio: &Row, weft: &Row) -> Ratios {
    Ratios {
        rps: stats::paired_ratio(&weft.rounds_rps, &tokio.rounds_rps, 1),
        cpu_per_req: stats::paired_ratio(&weft.rounds_cpu_us_per_req, &tokio.rounds_cpu_us_per_req, 2),
        p99: stats::paired_ratio(&weft.rounds_p99_us, &tokio.rounds_p99_us, 3),
        p999: stats::paired_ratio(&weft.rounds_p999_us, &tokio.rounds_p999_us, 4),
    }
}

/// A pair's table (tokio's row, weft's row) and its ratio line; `side` names the side-load
/// column (`None`: no such column).
pub fn pair_markdown(tokio: &Row, weft: &Row, side: Option<&str>) -> String {
    let side_head = side.map_or(String::new(), |s| format!(" {s} share |"));
    let side_rule = if side.is_some() { "---:|" } else { "" };
    let mut md = format!(
        "| build | req/s | p50 µs | p99 µs | p99.9 µs | CPU µs/req |{side_head} errors | bad |\n|---|---:|---:|---:|---:|---:|{side_rule}---:|---:|\n"
    );
    for r in [tokio, weft] {
        let side_cell = if side.is_some() { format!(" {:.2}% |", r.side_share * 100.0) } else { String::new() };
        md += &format!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} |{side_cell} {} | {} |\n",
            r.build, r.requests_per_s, r.p50_us, r.p99_us, r.p999_us, r.server_cpu_us_per_req, r.errors, r.bad
        );
    }
    let q = ratios(tokio, weft);
    md += &format!("\nweft ÷ tokio: req/s {}, CPU/req {}, p99 {}, p99.9 {}\n\n", q.rps, q.cpu_per_req, q.p99, q.p999);
    md
}
