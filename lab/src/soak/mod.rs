//! `weft-lab soak --minutes N`: one server process per runtime under mixed load for N minutes,
//! watched every 10 s for anything that grows.
//!
//! The server (`server.rs`, weft and tokio from one macro) serves HTTP while its background
//! tasks reset timers, push through a full channel, call `block_in_place` and block a worker
//! now and then; `/work` requests run `spawn_blocking`. The load (this process, plain threads
//! and blocking sockets, so the load generator shares no code with either runtime):
//! `--clients` threads each open a keep-alive connection, send 50 requests (every 10th to
//! `/work`, its answer checked), close it and open the next (connection churn), while
//! `--idle` keep-alive connections stay open and send one request every 20 s. Every 10 s the
//! sampler reads the server's RSS (`/proc/PID/statm`), open fds (`/proc/PID/fd`), threads
//! (`/proc/PID/task`), alive tasks (its `/stats`, the runtime's own metric: a scrape) and the
//! window's p99 latency.
//!
//! Verdict: after warm-up (the first fifth, at least two samples), a least-squares line per
//! series; a series *grows* when its slope is positive with t > 3 and the fitted rise over the
//! run exceeds a tolerance (RSS: 5% and 4 MB; fds 8; threads 4; tasks 5% and 20; p99: 50% and
//! 2 ms), so noise and a plateau pass and a leak does not. Any failed request fails the run.
//! Output: `soak.md` (the verdict), `soak.json` (every sample), `soak.svg` (the chart) and
//! `soak.html` (both on one page); `--render` redraws them from a saved `soak.json`.
//! Runtimes run one after the other by default, each with the machine to itself; `--together`
//! runs them at the same time instead (each its own server and load threads), so both see the
//! same machine for the whole run and the wall time is one runtime's. Interleaving in short
//! rounds was rejected: it would cut each runtime's continuous run, which is what a soak is.

mod server;
mod verdict;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

pub use verdict::{grows, Growth};

/// One 10-second sample of the server.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Sample {
    pub t_s: f64,
    pub rss_mb: f64,
    pub fds: f64,
    pub threads: f64,
    pub alive_tasks: f64,
    pub p99_ms: f64,
    pub requests: u64,
}

/// One runtime's soak.
#[derive(Debug, Clone, Serialize)]
pub struct SoakRun {
    pub runtime: String,
    pub minutes: f64,
    pub requests: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    pub samples: Vec<Sample>,
    pub growth: Vec<Growth>,
}

impl SoakRun {
    pub fn passed(&self) -> bool {
        self.errors == 0 && self.growth.iter().all(|g| !g.grows)
    }
}

/// `weft-lab soak`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Minutes per runtime.
    #[arg(long, default_value_t = 30.0)]
    pub minutes: f64,
    /// Runtimes, run one after the other (weft-mt, tokio-mt).
    #[arg(long, value_delimiter = ',', default_value = "weft-mt,tokio-mt")]
    pub runtimes: Vec<String>,
    /// Runs the runtimes at the same time, side by side, instead of one after the other.
    #[arg(long)]
    pub together: bool,
    /// Server worker threads.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Load threads (each churning through connections).
    #[arg(long, default_value_t = 4)]
    pub clients: usize,
    /// Idle keep-alive connections held open.
    #[arg(long, default_value_t = 64)]
    pub idle: usize,
    /// Sampling interval in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub every: f64,
    /// Writes OUT/soak.md, OUT/soak.json, OUT/soak.svg and OUT/soak.html.
    #[arg(long, default_value = "lab-results/soak")]
    pub out: PathBuf,
    /// Runs nothing: renders a `soak.json` written earlier (verdicts recomputed from its
    /// samples) into OUT; the other flags should describe that run.
    #[arg(long)]
    pub render: Option<PathBuf>,
}

/// What `soak.json` keeps of a run (the verdicts are recomputed from the samples).
#[derive(serde::Deserialize)]
struct SavedRun {
    runtime: String,
    minutes: f64,
    requests: u64,
    errors: u64,
    first_error: Option<String>,
    samples: Vec<Sample>,
}

fn load(path: &std::path::Path) -> Result<Vec<SoakRun>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let saved: Vec<SavedRun> =
        serde_json::from_str(&text).map_err(|e| format!("{}: not a soak.json: {e}", path.display()))?;
    Ok(saved
        .into_iter()
        .map(|r| SoakRun {
            growth: verdict::judge(&r.samples),
            runtime: r.runtime,
            minutes: r.minutes,
            requests: r.requests,
            errors: r.errors,
            first_error: r.first_error,
            samples: r.samples,
        })
        .collect())
}

/// `__soak`'s flags.
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[arg(long)]
    pub runtime: String,
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
}

/// `weft-lab __soak`: serves until killed.
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    match args.runtime.as_str() {
        "weft-mt" => server::serve_weft(args.workers)?,
        "tokio-mt" => server::serve_tokio(args.workers)?,
        other => return Err(format!("soak: unknown runtime {other:?} (weft-mt or tokio-mt)")),
    }
    Ok(ExitCode::SUCCESS)
}

/// One request on an open keep-alive connection; the body.
fn request(reader: &mut BufReader<TcpStream>, path: &str) -> Result<String, String> {
    write!(reader.get_mut(), "GET {path} HTTP/1.1\r\nHost: soak\r\n\r\n").map_err(|e| format!("write: {e}"))?;
    let mut status = String::new();
    reader.read_line(&mut status).map_err(|e| format!("read: {e}"))?;
    if !status.starts_with("HTTP/1.1 200") {
        return Err(format!("status line {status:?}"));
    }
    let mut len = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).map_err(|e| format!("read: {e}"))? == 0 {
            return Err("closed inside the headers".into());
        }
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len.ok_or("no content-length")?];
    reader.read_exact(&mut body).map_err(|e| format!("read body: {e}"))?;
    String::from_utf8(body).map_err(|e| e.to_string())
}

fn connect(addr: SocketAddr) -> Result<BufReader<TcpStream>, String> {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    Ok(BufReader::new(s))
}

/// Shared between the load threads and the sampler.
#[derive(Default)]
struct Load {
    stop: AtomicBool,
    requests: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
    /// This window's latencies in µs.
    window: Mutex<Vec<u32>>,
}

impl Load {
    fn fail(&self, e: String) {
        self.errors.fetch_add(1, Relaxed);
        self.first_error.lock().unwrap().get_or_insert(e);
    }
}

/// A load thread: connections of 50 requests each, every 10th to `/work`.
fn churn(addr: SocketAddr, load: &Load) {
    while !load.stop.load(Relaxed) {
        let mut conn = match connect(addr) {
            Ok(c) => c,
            Err(e) => {
                load.fail(e);
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        for i in 0..50 {
            let path = if i % 10 == 9 { "/work" } else { "/" };
            let start = Instant::now();
            match request(&mut conn, path) {
                Ok(body) if path == "/work" && body != server::WORK_SUM.to_string() => {
                    load.fail(format!("/work answered {body:?}"));
                }
                Ok(_) => {
                    load.window.lock().unwrap().push(start.elapsed().as_micros().min(u32::MAX as u128) as u32);
                    load.requests.fetch_add(1, Relaxed);
                }
                Err(e) => {
                    load.fail(e);
                    break;
                }
            }
        }
    }
}

/// Holds `n` keep-alive connections, each sending a request every 20 s.
fn idlers(addr: SocketAddr, n: usize, load: &Load) {
    let mut conns: Vec<BufReader<TcpStream>> = Vec::new();
    for _ in 0..n {
        match connect(addr) {
            Ok(c) => conns.push(c),
            Err(e) => load.fail(e),
        }
    }
    let mut last = Instant::now() - Duration::from_secs(20);
    while !load.stop.load(Relaxed) {
        if last.elapsed() >= Duration::from_secs(20) {
            last = Instant::now();
            for c in &mut conns {
                if let Err(e) = request(c, "/") {
                    load.fail(format!("idle connection: {e}"));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn count_dir(path: String) -> Result<f64, String> {
    Ok(std::fs::read_dir(&path).map_err(|e| format!("{path}: {e}"))?.count() as f64)
}

/// Kills the server when dropped.
struct ServerProcess(std::process::Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs one runtime's soak.
pub fn soak_one(args: &Args, runtime: &str) -> Result<SoakRun, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["__soak", "--runtime", runtime, "--workers", &args.workers.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting the {runtime} soak server: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let server = ServerProcess(child);
    let pid = server.0.id();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).map_err(|e| e.to_string())?;
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("{runtime}: the server said {line:?}"))?;
    let load = Arc::new(Load::default());
    let mut threads = Vec::new();
    for _ in 0..args.clients {
        let load = load.clone();
        threads.push(std::thread::spawn(move || churn(addr, &load)));
    }
    {
        let (load, n) = (load.clone(), args.idle);
        threads.push(std::thread::spawn(move || idlers(addr, n, &load)));
    }
    let start = Instant::now();
    let total = Duration::from_secs_f64(args.minutes * 60.0);
    let every = Duration::from_secs_f64(args.every.max(0.5));
    let mut stats_conn = connect(addr)?;
    let mut samples = Vec::new();
    while start.elapsed() < total {
        std::thread::sleep(every.min(total.saturating_sub(start.elapsed())).max(Duration::from_millis(10)));
        let mut window = std::mem::take(&mut *load.window.lock().unwrap());
        window.sort_unstable();
        let p99 = window.get((window.len() * 99 / 100).min(window.len().saturating_sub(1))).copied().unwrap_or(0);
        let stats = request(&mut stats_conn, "/stats")?;
        let alive = stats
            .lines()
            .find_map(|l| l.strip_prefix("alive_tasks ")?.parse::<f64>().ok())
            .ok_or_else(|| format!("/stats said {stats:?}"))?;
        samples.push(Sample {
            t_s: start.elapsed().as_secs_f64(),
            rss_mb: crate::framework::idle_conns::rss_kib(pid)? as f64 * 1024.0 / 1e6,
            fds: count_dir(format!("/proc/{pid}/fd"))?,
            threads: count_dir(format!("/proc/{pid}/task"))?,
            alive_tasks: alive,
            p99_ms: f64::from(p99) / 1e3,
            requests: window.len() as u64,
        });
    }
    load.stop.store(true, Relaxed);
    for t in threads {
        let _ = t.join();
    }
    drop(server);
    let growth = verdict::judge(&samples);
    let first_error = load.first_error.lock().unwrap().clone();
    Ok(SoakRun {
        runtime: runtime.to_string(),
        minutes: args.minutes,
        requests: load.requests.load(Relaxed),
        errors: load.errors.load(Relaxed),
        first_error,
        samples,
        growth,
    })
}

/// The verdict table as Markdown.
pub fn markdown(runs: &[SoakRun], args: &Args) -> String {
    let mut s = String::from("# Soak\n\n");
    s.push_str(&format!(
        "{} min per runtime{}, {} workers, {} churning clients (50 requests per connection, every 10th `/work` via \
         spawn_blocking), {} idle keep-alive connections; timers reset every ms, a full bounded channel, block_in_place \
         every 500 ms, a 30 ms blocking task every 2 s. Sampled every {} s; a series grows when its post-warm-up slope is \
         positive with t > 3 and its fitted rise beats the tolerance.\n\n",
        args.minutes,
        if args.together { ", all runtimes at the same time" } else { ", one after the other" },
        args.workers,
        args.clients,
        args.idle,
        args.every
    ));
    s.push_str("| runtime | requests | errors | series: first → last (fitted rise over the run) | verdict |\n|---|---|---|---|---|\n");
    for r in runs {
        let series: Vec<String> = r
            .growth
            .iter()
            .map(|g| {
                format!(
                    "{} {:.1} → {:.1} ({:+.1}){}",
                    g.series,
                    g.first,
                    g.last,
                    g.rise,
                    if g.grows { " GROWS" } else { "" }
                )
            })
            .collect();
        let verdict = if r.passed() { "pass" } else { "FAIL" };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            r.runtime,
            r.requests,
            r.errors,
            series.join("; "),
            verdict
        ));
        if let Some(e) = &r.first_error {
            s.push_str(&format!("\n{}: first error: {e}\n", r.runtime));
        }
    }
    s
}

/// `weft-lab soak`.
pub fn run(mut args: Args) -> Result<ExitCode, String> {
    let runs = match &args.render {
        Some(path) => {
            let runs = load(path)?;
            args.minutes = runs.first().map_or(args.minutes, |r| r.minutes);
            runs
        }
        None => measure(&args)?,
    };
    let md = markdown(&runs, &args);
    crate::framework::selection::write_md_json(&args.out, "soak", &md, &runs)?;
    let svg = verdict::chart(&runs)?;
    std::fs::write(args.out.join("soak.svg"), &svg).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("soak.html"), html(&md, &svg)).map_err(|e| e.to_string())?;
    println!("wrote {} and soak.html", args.out.join("soak.svg").display());
    if runs.iter().all(SoakRun::passed) {
        Ok(ExitCode::SUCCESS)
    } else {
        Err("the soak failed: a series grew or a request failed (see soak.md)".into())
    }
}

fn measure(args: &Args) -> Result<Vec<SoakRun>, String> {
    if args.minutes <= 0.0 {
        return Err("--minutes must be positive".into());
    }
    if let Some(r) = args.runtimes.iter().find(|r| !["weft-mt", "tokio-mt"].contains(&r.as_str())) {
        return Err(format!("soak: unknown runtime {r:?} (weft-mt or tokio-mt)"));
    }
    if args.together {
        eprintln!("soak: {} at the same time for {} min", args.runtimes.join(", "), args.minutes);
        std::thread::scope(|s| {
            let handles: Vec<_> = args.runtimes.iter().map(|rt| s.spawn(|| soak_one(args, rt))).collect();
            handles
                .into_iter()
                .map(|h| h.join().map_err(|_| "a soak thread panicked".to_string())?)
                .collect::<Result<Vec<_>, String>>()
        })
    } else {
        let mut runs = Vec::new();
        for rt in &args.runtimes {
            eprintln!("soak: {rt} for {} min", args.minutes);
            runs.push(soak_one(args, rt)?);
        }
        Ok(runs)
    }
}

/// `soak.html`: the verdict (its markdown, as preformatted text) and the chart inline, one
/// self-contained page.
fn html(md: &str, svg: &str) -> String {
    let text = crate::framework::report::escape_html(md);
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>weft-lab soak</title><style>\
         body{{font-family:system-ui,sans-serif;margin:2em auto;max-width:1000px;padding:0 1em}}\
         pre{{white-space:pre-wrap;font-size:13px}}svg{{max-width:100%;height:auto}}</style></head>\
         <body><pre>{text}</pre>{svg}</body></html>\n"
    )
}
