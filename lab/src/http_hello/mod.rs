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
//! Beside requests/s the row reports the server's CPU time per request: the child's on-CPU
//! nanoseconds (summed over its threads' `/proc/PID/task/*/schedstat`) from the moment it is
//! listening to the end of the load, divided by the requests served. On a 2-core machine the
//! load generator competes with the server for the cores, so CPU per request is the fairer
//! efficiency figure; requests/s says how the two shared the machine.
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
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::framework::adapter::{Adapter, Net, RtConfig};
use crate::framework::idle_conns;
use crate::framework::runtimes::{self, async_std::CHILD_ENV, RuntimeId};
use crate::framework::selection::{this_exe, write_md_json, ChildRuntime, Selection};
use crate::framework::stats;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::framework::http1::HELLO_BODY as BODY;

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
    connections: usize,
    idle: usize,
    duration: Duration,
    rounds: usize,
) -> Result<Vec<HttpRow>, String> {
    let rounds = rounds.max(1);
    let per_round = duration / rounds as u32;
    let mut latencies_us: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut elapsed = vec![Duration::ZERO; chosen.len()];
    let mut errors = vec![0u64; chosen.len()];
    let mut cpu = vec![Duration::ZERO; chosen.len()];
    let mut rss_kib: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut per_idle: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    for _ in 0..rounds {
        for (i, &server) in chosen.iter().enumerate() {
            let r = one_round(exe, server, workers, connections, idle, per_round)?;
            latencies_us[i].extend(r.latencies.iter().map(|d| d.as_nanos() as f64 / 1_000.0));
            elapsed[i] += r.took;
            errors[i] += r.errors;
            cpu[i] += r.server_cpu;
            rss_kib[i].push(r.rss_kib as f64);
            per_idle[i].extend(r.rss_per_idle_conn_bytes);
        }
    }
    Ok(chosen
        .iter()
        .enumerate()
        .map(|(i, rt)| {
            let us = &latencies_us[i];
            let pct = |p| if us.is_empty() { f64::NAN } else { stats::percentile(us, p) };
            HttpRow {
                runtime: rt.name(),
                requests: us.len() as u64,
                requests_per_s: us.len() as f64 / elapsed[i].as_secs_f64(),
                p50_us: pct(50.0),
                p99_us: pct(99.0),
                p999_us: pct(99.9),
                errors: errors[i],
                connections,
                server_cpu_us_per_req: cpu[i].as_nanos() as f64 / 1_000.0 / us.len().max(1) as f64,
                idle_connections: idle,
                server_rss_kib: stats::median(&rss_kib[i]),
                rss_per_idle_conn_bytes: (!per_idle[i].is_empty()).then(|| stats::median(&per_idle[i])),
            }
        })
        .collect())
}

/// On-CPU time of every live thread of process `pid` (`schedstat`: nanoseconds on a CPU).
fn process_cpu(pid: u32) -> Result<Duration, String> {
    let dir = format!("/proc/{pid}/task");
    let mut ns = 0u64;
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("reading {dir}: {e}"))? {
        let path = entry.map_err(|e| e.to_string())?.path().join("schedstat");
        // A thread that exited meanwhile has no file any more; its time is lost either way.
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        ns += text
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("unexpected {}: {text:?}", path.display()))?;
    }
    Ok(Duration::from_nanos(ns))
}

/// What one round measured.
struct RoundOut {
    latencies: Vec<Duration>,
    /// Load connections that failed.
    errors: u64,
    /// The load's wall time.
    took: Duration,
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
    connections: usize,
    idle: usize,
    duration: Duration,
) -> Result<RoundOut, String> {
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
    let (latencies, errors, took) = drive(addr, connections, duration)?;
    let server_cpu = process_cpu(pid)?.saturating_sub(cpu_before);
    let rss_kib = idle_conns::rss_kib(pid)?;
    if let Some(mut h) = holder {
        idle_conns::expect_all_alive(&server.name(), h.count_alive()?, idle)?;
    }
    drop(child);
    Ok(RoundOut { latencies, errors, took, server_cpu, rss_kib, rss_per_idle_conn_bytes })
}

/// The load generator: `connections` keep-alive connections, one request in flight each.
fn drive(addr: SocketAddr, connections: usize, duration: Duration) -> Result<(Vec<Duration>, u64, Duration), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let start = Instant::now();
        let deadline = start + duration;
        let tasks: Vec<_> = (0..connections).map(|_| tokio::spawn(client(addr, deadline))).collect();
        let mut all = Vec::new();
        let mut errors = 0;
        for t in tasks {
            match t.await {
                Ok(Ok(lat)) => all.extend(lat),
                Ok(Err(_)) | Err(_) => errors += 1,
            }
        }
        Ok((all, errors, start.elapsed()))
    })
}

async fn client(addr: SocketAddr, deadline: Instant) -> Result<Vec<Duration>, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let request = b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
    let mut lat = Vec::with_capacity(1 << 16);
    let mut buf = vec![0u8; 4096];
    while Instant::now() < deadline {
        let t0 = Instant::now();
        s.write_all(request).await.map_err(|e| e.to_string())?;
        // Read one response: headers, then a Content-Length body.
        let mut have = 0;
        let (head_end, body_len) = loop {
            let n = s.read(&mut buf[have..]).await.map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("server closed the connection".into());
            }
            have += n;
            if let Some(end) = find(&buf[..have], b"\r\n\r\n") {
                let head = std::str::from_utf8(&buf[..end]).map_err(|_| "non-UTF-8 head")?;
                if !head.starts_with("HTTP/1.1 200") {
                    return Err(format!("bad status: {head}"));
                }
                let len = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>())
                    })
                    .ok_or("no content-length")?
                    .map_err(|_| "bad content-length")?;
                break (end + 4, len);
            }
            if have == buf.len() {
                return Err("response head too large".into());
            }
        };
        while have < head_end + body_len {
            let n = s.read(&mut buf[have..]).await.map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("server closed mid-body".into());
            }
            have += n;
        }
        if &buf[head_end..head_end + body_len] != BODY || have != head_end + body_len {
            return Err("wrong body".into());
        }
        lat.push(t0.elapsed());
    }
    Ok(lat)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The Markdown table, with ratios to tokio-mt when it was measured.
pub fn markdown(
    rows: &[HttpRow],
    workers: usize,
    connections: usize,
    idle: usize,
    duration: Duration,
    rounds: usize,
) -> String {
    let idle_text = if idle > 0 { format!(" + {idle} idle ones (all verified alive)") } else { String::new() };
    let mut out = format!(
        "## http_hello — hyper HTTP/1.1 \"Hello, world!\", {connections} keep-alive connections{idle_text}, {:.1} s per runtime in {rounds} interleaved rounds, {workers} server workers\n\n\
         | runtime | idle | requests/s | p50 | p99 | p99.9 | errors | server CPU/req | server RSS | RSS/idle conn | req/s ÷ tokio-mt | p99 ÷ tokio-mt | CPU/req ÷ tokio-mt |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        duration.as_secs_f64()
    );
    let tokio = rows.iter().find(|r| r.runtime == "tokio-mt");
    for r in rows {
        let (rps, p99, cpu) = match tokio {
            Some(t) => (
                format!("{:.2}×", r.requests_per_s / t.requests_per_s),
                format!("{:.2}×", r.p99_us / t.p99_us),
                format!("{:.2}×", r.server_cpu_us_per_req / t.server_cpu_us_per_req),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        out += &format!(
            "| {} | {} | {:.0} | {:.0} µs | {:.0} µs | {:.0} µs | {} | {:.1} µs | {:.1} MiB | {} | {} | {} | {} |\n",
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
            rps,
            p99,
            cpu
        );
    }
    out + &timer_cost(rows)
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
    let mut rows = Vec::new();
    let mut md = String::new();
    for &connections in &args.connections {
        for &idle in &args.idle_connections {
            let sweep_rows = measure(&this_exe()?, &chosen, workers, connections.max(1), idle, duration, args.rounds)?;
            md += &markdown(&sweep_rows, workers, connections, idle, duration, args.rounds.max(1));
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
