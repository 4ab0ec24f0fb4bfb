//! `http_hello`: a hyper 1.x HTTP/1.1 "Hello, world!" server on each runtime, driven by a load
//! generator in another process.
//!
//! Requests per second and latency are not a "time one future" micro workload, so this is its
//! own command, `weft-lab http-hello`: for each runtime the lab starts a child process
//! (`weft-lab __http-hello`) that serves `GET /` on 127.0.0.1 (an ephemeral port, printed on
//! stdout) with the runtime's own sockets and hyper adapter ([`Net::hyper_io`]); the parent is
//! the load generator — the *same* client for every runtime (a tokio runtime with a fixed
//! number of keep-alive connections, each sending one request at a time for a fixed
//! duration) — and records every request's latency. Every response is validated (status 200,
//! body `Hello, world!`); a bad response fails the row.
//!
//! Beside requests/s the row reports the server's CPU time per request: the child's CPU-time
//! clock (`service_ab::process_cpu`, every thread's, exited ones included) from the moment it is
//! listening to the end of the load, divided by the requests served. On a 2-core machine the
//! load generator competes with the server for the cores, so CPU per request is the fairer
//! efficiency figure; requests/s says how the two shared the machine.
//!
//! `--load wrk` drives the servers with `wrk` instead (`framework::wrk`: every response checked
//! by its Lua script), so a tail can be told apart from the lab's own client's queueing: the
//! built-in client is itself a two-worker tokio runtime sharing the machine, and at 1,024
//! connections its scheduling is part of every latency it records.
//!
//! Every round keeps its own requests/s, percentiles and CPU per request; the ratios to
//! `tokio-mt` are medians of the per-round ratios (a round runs every runtime back to back)
//! with a 95% bootstrap interval, as the A/B studies report them.
//!
//! With `--idle-connections N` a helper process ([`crate::framework::idle_conns`]) first opens N more
//! keep-alive connections, completes one request on each and leaves them parked in the server
//! for the whole round; the row then also shows the server's RSS with the idle set open and
//! its growth per idle connection, and fails unless all N are still alive at the end.
//!
//! Architecture Invariant: the server code is written once, generic over [`Adapter`]; the
//! load generator never changes with the runtime under test.

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Serialize;

use crate::framework::adapter::{Adapter, Net, RtConfig};
use crate::framework::idle_conns;
use crate::framework::runtimes::{self, async_std::CHILD_ENV, RuntimeId};
use crate::framework::selection::{this_exe, write_md_json, ChildRuntime, Selection};
use crate::framework::service_ab::process_cpu;
use crate::framework::{stats, wrk};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::framework::http1::HELLO_BODY as BODY;

mod load;
pub use load::{Load, LoadSpec};

/// One runtime's row.
#[derive(Debug, Clone, Serialize)]
pub struct HttpRow {
    pub runtime: String,
    pub requests: u64,
    pub requests_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub errors: u64,
    /// Keep-alive connections of the load generator.
    pub connections: usize,
    /// Server CPU time (user + system, all threads) per request, in microseconds.
    pub server_cpu_us_per_req: f64,
    /// Idle keep-alive connections held open beside the active ones (each verified alive at
    /// the end of every round).
    pub idle_connections: usize,
    /// Median over rounds of the server's RSS at the end of the load, in KiB.
    pub server_rss_kib: f64,
    /// Median over rounds of the server's RSS growth while the idle set opened, per idle
    /// connection, in bytes (`None` without idle connections).
    pub rss_per_idle_conn_bytes: Option<f64>,
    /// The load generator (`builtin` or `wrk`).
    pub load: &'static str,
    /// Per-round values in round order, for the paired ratios.
    pub rounds: PerRound,
}

/// One row's values round by round.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PerRound {
    pub requests_per_s: Vec<f64>,
    pub p50_us: Vec<f64>,
    pub p99_us: Vec<f64>,
    pub p999_us: Vec<f64>,
    pub server_cpu_us_per_req: Vec<f64>,
}

/// One server configuration measured: a runtime, with or without its hyper timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Server {
    pub runtime: RuntimeId,
    /// The connection gets the runtime's own hyper timer (`Net::hyper_timer`) and keeps
    /// hyper's default 30 s header-read timeout, as the README's `hello_server` does; without
    /// it the timeout is off (hyper needs a timer for it).
    pub timer: bool,
}

impl Server {
    /// The row's name: the runtime's, plus `+timer`.
    pub fn name(&self) -> String {
        format!("{}{}", self.runtime.name(), if self.timer { "+timer" } else { "" })
    }
}

/// The servers to measure: each runtime, and with `timer` also each runtime that has a hyper
/// timer, with it, right after it (so the two share every round).
pub fn servers(chosen: &[RuntimeId], timer: bool) -> Vec<Server> {
    struct HasTimer;
    impl runtimes::WithAdapter for HasTimer {
        type Output = bool;
        fn run<R: Adapter>(self) -> bool {
            <R::Net as Net>::hyper_timer().is_some()
        }
    }
    let mut out = Vec::new();
    for &runtime in chosen {
        out.push(Server { runtime, timer: false });
        if timer && runtimes::dispatch(runtime, HasTimer) {
            out.push(Server { runtime, timer: true });
        }
    }
    out
}

/// The server: accept forever, one hyper HTTP/1.1 connection task per socket.
async fn serve<R: Adapter>(timer: bool, on_ready: impl FnOnce(SocketAddr)) -> Result<(), String> {
    if timer && <R::Net as Net>::hyper_timer().is_none() {
        return Err("this runtime has no hyper timer".into());
    }
    let (listener, addr) = <R::Net as Net>::bind_loopback().await.map_err(|e| format!("bind: {e}"))?;
    on_ready(addr);
    loop {
        let stream = match <R::Net as Net>::accept(&listener).await {
            Ok(s) => s,
            Err(_) => continue, // one bad accept never stops the server
        };
        let io = <R::Net as Net>::hyper_io(stream);
        R::detach(R::spawn(async move {
            let service = hyper::service::service_fn(|_req| async {
                Ok::<_, Infallible>(hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(BODY))))
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            match <R::Net as Net>::hyper_timer().filter(|_| timer) {
                Some(t) => builder.timer(t),
                None => builder.header_read_timeout(None),
            };
            let _ = builder.serve_connection(io, service).await;
        }));
    }
}

fn serve_on<R: Adapter>(config: &RtConfig, timer: bool) -> Result<(), String> {
    let runtime = R::build(config).map_err(|e| format!("building the runtime failed: {e}"))?;
    runtime.block_on(serve::<R>(timer, |addr| {
        use std::io::Write;
        println!("listening on {addr}");
        let _ = std::io::stdout().flush();
    }))
}

/// `weft-lab __http-hello`: serve until killed.
pub fn server_main(runtime: RuntimeId, workers: usize, timer: bool) -> Result<(), String> {
    struct Serve(RtConfig, bool);
    impl runtimes::WithAdapter for Serve {
        type Output = Result<(), String>;
        fn run<R: Adapter>(self) -> Result<(), String> {
            serve_on::<R>(&self.0, self.1)
        }
    }
    runtimes::dispatch(runtime, Serve(RtConfig::new(runtime.flavor(), workers), timer))
}

/// Kills the child server when dropped (also on early returns).
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs every runtime's server for `rounds` interleaved rounds (runtime A, B, …, then A, B, …
/// again, a fresh server process each time, `duration / rounds` of load each), so a noisy
/// neighbour on a shared machine hurts every runtime alike instead of whichever ran then.
pub fn measure(
    exe: &Path,
    chosen: &[Server],
    workers: usize,
    spec: LoadSpec,
    duration: Duration,
    rounds: usize,
) -> Result<Vec<HttpRow>, String> {
    let rounds = rounds.max(1);
    let round_load = duration / rounds as u32;
    let mut latencies_us: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut requests = vec![0u64; chosen.len()];
    let mut elapsed = vec![Duration::ZERO; chosen.len()];
    let mut errors = vec![0u64; chosen.len()];
    let mut cpu = vec![Duration::ZERO; chosen.len()];
    let mut rss_kib: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut per_idle: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut per_round: Vec<PerRound> = vec![PerRound::default(); chosen.len()];
    for _ in 0..rounds {
        for (i, &server) in chosen.iter().enumerate() {
            let r = one_round(exe, server, workers, spec, round_load)?;
            latencies_us[i].extend(&r.load.latencies_us);
            requests[i] += r.load.requests;
            elapsed[i] += r.load.took;
            errors[i] += r.load.errors;
            cpu[i] += r.server_cpu;
            rss_kib[i].push(r.rss_kib as f64);
            per_idle[i].extend(r.rss_per_idle_conn_bytes);
            let p = &mut per_round[i];
            p.requests_per_s.push(r.load.requests as f64 / r.load.took.as_secs_f64());
            p.p50_us.push(r.load.p50_us);
            p.p99_us.push(r.load.p99_us);
            p.p999_us.push(r.load.p999_us);
            p.server_cpu_us_per_req.push(r.server_cpu.as_nanos() as f64 / 1_000.0 / r.load.requests.max(1) as f64);
        }
    }
    Ok(chosen
        .iter()
        .zip(per_round)
        .enumerate()
        .map(|(i, (rt, p))| {
            let us = &latencies_us[i];
            // The built-in client keeps every latency: percentiles over all rounds' requests.
            // wrk reports its own per run: their median over rounds.
            let pct =
                |p: f64, rounds: &[f64]| if us.is_empty() { stats::median(rounds) } else { stats::percentile(us, p) };
            HttpRow {
                runtime: rt.name(),
                requests: requests[i],
                requests_per_s: requests[i] as f64 / elapsed[i].as_secs_f64(),
                p50_us: pct(50.0, &p.p50_us),
                p99_us: pct(99.0, &p.p99_us),
                p999_us: pct(99.9, &p.p999_us),
                errors: errors[i],
                connections: spec.connections,
                server_cpu_us_per_req: cpu[i].as_nanos() as f64 / 1_000.0 / requests[i].max(1) as f64,
                idle_connections: spec.idle,
                server_rss_kib: stats::median(&rss_kib[i]),
                rss_per_idle_conn_bytes: (!per_idle[i].is_empty()).then(|| stats::median(&per_idle[i])),
                load: spec.name(),
                rounds: p,
            }
        })
        .collect())
}

/// What one round measured.
struct RoundOut {
    load: load::LoadOut,
    server_cpu: Duration,
    /// The server's RSS at the end of the load.
    rss_kib: u64,
    rss_per_idle_conn_bytes: Option<f64>,
}

/// Starts `rt`'s server in a child, opens the idle set (if any), drives the server for
/// `duration`, checks that every idle connection survived, stops the server.
fn one_round(
    exe: &Path,
    server: Server,
    workers: usize,
    spec: LoadSpec,
    duration: Duration,
) -> Result<RoundOut, String> {
    let idle = spec.idle;
    let rt = server.runtime;
    let mut command = Command::new(exe);
    command.args(["__http-hello", "--runtime", rt.name(), "--workers", &workers.to_string()]);
    if server.timer {
        command.arg("--timer");
    }
    let mut child = Child(
        command
            .env(CHILD_ENV, "1")
            .env("ASYNC_STD_THREAD_COUNT", workers.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting the {} server: {e}", server.name()))?,
    );
    let mut line = String::new();
    let stdout = child.0.stdout.take().ok_or("no stdout")?;
    BufReader::new(stdout).read_line(&mut line).map_err(|e| e.to_string())?;
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("{} server did not print `listening on ADDR` (got {line:?})", server.name()))?;
    let pid = child.0.id();
    let mut holder = None;
    let mut rss_per_idle_conn_bytes = None;
    if idle > 0 {
        let rss_before = idle_conns::rss_kib(pid)?;
        let mut h = idle_conns::Holder::spawn(exe, addr, idle, true)?;
        h.wait_open().map_err(|e| format!("{}: {e}", server.name()))?;
        let grown = idle_conns::rss_kib(pid)?.saturating_sub(rss_before);
        rss_per_idle_conn_bytes = Some(grown as f64 * 1024.0 / idle as f64);
        holder = Some(h);
    }
    let cpu_before = process_cpu(pid)?;
    let load = load::run(spec, addr, duration)?;
    let server_cpu = process_cpu(pid)?.saturating_sub(cpu_before);
    let rss_kib = idle_conns::rss_kib(pid)?;
    if let Some(mut h) = holder {
        idle_conns::expect_all_alive(&server.name(), h.count_alive()?, idle)?;
    }
    drop(child);
    Ok(RoundOut { load, server_cpu, rss_kib, rss_per_idle_conn_bytes })
}

/// The Markdown table, with ratios to tokio-mt when it was measured.
pub fn markdown(rows: &[HttpRow], workers: usize, spec: LoadSpec, duration: Duration, rounds: usize) -> String {
    let LoadSpec { connections, idle, .. } = spec;
    let idle_text = if idle > 0 { format!(" + {idle} idle ones (all verified alive)") } else { String::new() };
    let ci_text = if rounds >= 3 { "median of per-round ratios [95% CI]" } else { "ratio of the rows" };
    let mut out = format!(
        "## http_hello — hyper HTTP/1.1 \"Hello, world!\", {connections} keep-alive connections{idle_text}, {:.1} s per runtime in {rounds} interleaved rounds, {workers} server workers, load: {}\n\n\
         Ratios ÷ tokio-mt: {ci_text}.\n\n\
         | runtime | idle | requests/s | p50 | p99 | p99.9 | errors | server CPU/req | server RSS | RSS/idle conn | req/s ÷ tokio-mt | p99 ÷ tokio-mt | p99.9 ÷ tokio-mt | CPU/req ÷ tokio-mt |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        duration.as_secs_f64(),
        spec.name()
    );
    let tokio = rows.iter().find(|r| r.runtime == "tokio-mt");
    for r in rows {
        let [rps, p99, p999, cpu] = match tokio {
            Some(t) => [
                ratio_cell(&r.rounds.requests_per_s, &t.rounds.requests_per_s, r.requests_per_s / t.requests_per_s, 1),
                ratio_cell(&r.rounds.p99_us, &t.rounds.p99_us, r.p99_us / t.p99_us, 2),
                ratio_cell(&r.rounds.p999_us, &t.rounds.p999_us, r.p999_us / t.p999_us, 3),
                ratio_cell(
                    &r.rounds.server_cpu_us_per_req,
                    &t.rounds.server_cpu_us_per_req,
                    r.server_cpu_us_per_req / t.server_cpu_us_per_req,
                    4,
                ),
            ],
            None => ["–".to_string(), "–".to_string(), "–".to_string(), "–".to_string()],
        };
        out += &format!(
            "| {} | {} | {:.0} | {:.0} µs | {:.0} µs | {:.0} µs | {} | {:.1} µs | {:.1} MiB | {} | {rps} | {p99} | {p999} | {cpu} |\n",
            r.runtime,
            r.idle_connections,
            r.requests_per_s,
            r.p50_us,
            r.p99_us,
            r.p999_us,
            r.errors,
            r.server_cpu_us_per_req,
            r.server_rss_kib / 1024.0,
            r.rss_per_idle_conn_bytes.map_or("–".into(), |b| format!("{b:.0} B")),
        );
    }
    out + &timer_cost(rows)
}

/// A ratio cell: with three rounds or more the median of the per-round ratios and its 95%
/// bootstrap interval, else `whole` (the rows' own ratio).
fn ratio_cell(a: &[f64], b: &[f64], whole: f64, seed: u64) -> String {
    if a.len() < 3 || a.len() != b.len() {
        return format!("{whole:.2}×");
    }
    stats::paired_ratio(a, b, seed).to_string()
}

/// For each `X+timer` row beside an `X` row: what the hyper timer costs (same rounds).
fn timer_cost(rows: &[HttpRow]) -> String {
    let pairs: Vec<_> = rows
        .iter()
        .filter_map(|t| {
            let base = t.runtime.strip_suffix("+timer")?;
            Some((rows.iter().find(|r| r.runtime == base)?, t))
        })
        .collect();
    if pairs.is_empty() {
        return String::new();
    }
    let mut out = "\nhyper timer cost (with ÷ without, same rounds; the timer arms hyper's 30 s header-read timeout on every request):\n\n\
                   | runtime | req/s | CPU/req | p99 |\n|---|---:|---:|---:|\n"
        .to_string();
    for (base, t) in pairs {
        out += &format!(
            "| {} | {:.3}× | {:.3}× | {:.2}× |\n",
            base.runtime,
            t.requests_per_s / base.requests_per_s,
            t.server_cpu_us_per_req / base.server_cpu_us_per_req,
            t.p99_us / base.p99_us
        );
    }
    out
}

/// `weft-lab http-hello`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Keep-alive connections of the load generator; a comma-separated list is a sweep
    /// (e.g. `1,64,1024`), one table per count.
    #[arg(long, value_delimiter = ',', default_value = "64")]
    pub connections: Vec<usize>,
    /// Idle keep-alive connections (one request served on each first) held open beside the
    /// active ones, all verified alive at the end of every round; a comma-separated list is a
    /// sweep (e.g. `0,10000`).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub idle_connections: Vec<usize>,
    /// Seconds of load per runtime (split over the rounds).
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Interleaved rounds (a fresh server per runtime per round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Also measure each runtime that has a hyper timer (weft, tokio) with it, as a second
    /// row (`weft-mt+timer`) in the same rounds: the README `hello_server`'s configuration.
    #[arg(long)]
    pub hyper_timer: bool,
    /// The load generator: the lab's own client, or `wrk` (installed separately).
    #[arg(long, value_enum, default_value_t = Load::Builtin)]
    pub load: Load,
    /// Writes OUT/http_hello.md and OUT/http_hello.json.
    #[arg(long, default_value = "lab-results/http_hello")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// `weft-lab http-hello`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let chosen = servers(&args.selection.runtimes(&RuntimeId::ALL)?, args.hyper_timer);
    let workers = args.selection.workers();
    let duration = std::time::Duration::from_secs_f64(args.seconds.max(0.1));
    let most = args.connections.iter().max().copied().unwrap_or(1) + args.idle_connections.iter().max().unwrap_or(&0);
    crate::framework::idle_conns::raise_nofile(most as u64 + crate::framework::idle_conns::FD_SLACK)?;
    let script = match args.load {
        Load::Wrk => {
            Some(wrk::write_script(&args.out, "http_hello", &[std::str::from_utf8(BODY).expect("ASCII body")])?)
        }
        Load::Builtin => None,
    };
    let mut rows = Vec::new();
    let mut md = String::new();
    for &connections in &args.connections {
        for &idle in &args.idle_connections {
            let spec = LoadSpec { wrk: script.as_deref(), connections: connections.max(1), idle };
            let sweep_rows = measure(&this_exe()?, &chosen, workers, spec, duration, args.rounds)?;
            md += &markdown(&sweep_rows, workers, spec, duration, args.rounds.max(1));
            md += "\n";
            rows.extend(sweep_rows);
        }
    }
    write_md_json(&args.out, "http_hello", &md, &rows)?;
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `__http-hello`: one server in this process until killed.
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[command(flatten)]
    pub rt: ChildRuntime,
    /// Give each connection the runtime's hyper timer (hyper's default header-read timeout).
    #[arg(long)]
    pub timer: bool,
}

/// `weft-lab __http-hello`: serve until killed (the parent reads the port from stdout).
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    server_main(args.rt.id()?, args.rt.workers, args.timer)?;
    Ok(ExitCode::SUCCESS)
}
