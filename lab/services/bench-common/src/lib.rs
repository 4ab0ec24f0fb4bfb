//! `bench-common`: what the lab's remote-messaging benchmark programs share, written once.
//!
//! Its users are three programs under `lab/services/`, each a cargo workspace of its own with
//! its own lock, each depending on this crate by path: `actors-remote` (weft-actor-remote and
//! raw Zenoh, on weft), `actors-remote-peers` (kameo and ractor_cluster, on the real tokio) and
//! `zenoh-ab` (Zenoh, built once on tokio and once on weft). Each is one process of a
//! two-process measurement that `weft-lab actors-remote` or `weft-lab zenoh-ab` starts: `serve`
//! prints a ready line and serves until killed; `drive` runs one workload and prints one JSON
//! line, which the lab parses.
//!
//! Shared here: the command line ([`Program::args`]); failing the process rather than hanging
//! the lab ([`Program::bounded`], [`Program::poll_until`]); the count-and-time loop of the
//! throughput workloads ([`Program::timed_delivery`]); the timed concurrent loop of the ask
//! workloads ([`concurrent`]); the JSON line with the driver's CPU and latency percentiles
//! ([`report`]); and, with the `zenoh` feature, the raw-Zenoh server and the driver's calls
//! to it ([`zenoh`](mod@zenoh)). What each system does per message stays in its program.
//!
//! Tasks and timers go through tokio's API. A weft build patches `tokio` to `compat/tokio`
//! (weft's own functions under tokio's paths), so this code runs on whichever runtime its
//! program is built on; and it adds no package to any user's graph, which all hold tokio (or
//! the facade) and libc already.

#[cfg(feature = "zenoh")]
pub mod zenoh;

use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

/// The bound on every workload: a hung peer fails the run instead of hanging the lab.
pub const LIMIT: Duration = Duration::from_secs(60);

/// How long a receiver's count may stand still before [`Program::timed_delivery`] gives up:
/// lost messages never arrive.
const STALL: Duration = Duration::from_secs(5);

/// What a workload measured.
pub struct Measured {
    pub ops: u64,
    pub took: Duration,
    /// Per-operation latencies (asks, lookups), µs; empty for throughput runs.
    pub latencies_us: Vec<f64>,
}

/// One benchmark program: its name, which prefixes its failures, and its usage line.
pub struct Program {
    pub name: &'static str,
    pub usage: &'static str,
}

/// A command line: `MODE [--system S] [--listen EP | --connect EP] [--workload W] [--n N]`.
pub struct Args {
    /// `serve` or `drive`: the program checks.
    pub mode: String,
    /// Empty when not given.
    pub system: String,
    /// `--listen`'s or `--connect`'s value, in Zenoh's form (`tcp/HOST:PORT`) as the lab passes it.
    pub endpoint: String,
    pub workload: String,
    pub n: u64,
}

/// The workloads of an `actors-remote` driver, by their command-line names.
pub enum Workload {
    /// `tell16`, `tell1k`: one-way messages of this many bytes, every one counted by the receiver.
    Tell(usize),
    /// `ask1`, `ask64`: round trips with this many outstanding.
    Ask(u64),
    /// `lookup`: the server actor's name resolved N times.
    Lookup,
    /// `watch`: the server's death noticed.
    Watch,
}

impl Workload {
    /// The workload named `name`; any other name panics (a driver has nothing else to run).
    pub fn parse(name: &str) -> Workload {
        match name {
            "tell16" => Workload::Tell(16),
            "tell1k" => Workload::Tell(1024),
            "ask1" => Workload::Ask(1),
            "ask64" => Workload::Ask(64),
            "lookup" => Workload::Lookup,
            "watch" => Workload::Watch,
            other => panic!("unknown workload {other}"),
        }
    }
}

impl Program {
    /// Prints the usage line and exits with status 2.
    pub fn usage(&self) -> ! {
        eprintln!("usage: {}", self.usage);
        std::process::exit(2)
    }

    /// Prints `NAME: what` and exits with status 3.
    pub fn fail(&self, what: impl Display) -> ! {
        eprintln!("{}: {what}", self.name);
        std::process::exit(3)
    }

    /// This process's command line, `n` defaulting to `default_n`; a flag it does not know, a
    /// flag without its value or a count that is not a number prints the usage.
    pub fn args(&self, default_n: u64) -> Args {
        let mut args = std::env::args().skip(1);
        let mode = args.next().unwrap_or_else(|| self.usage());
        let (system, endpoint, workload) = (String::new(), String::new(), String::new());
        let mut parsed = Args { mode, system, endpoint, workload, n: default_n };
        while let Some(flag) = args.next() {
            let mut value = || args.next().unwrap_or_else(|| self.usage());
            match flag.as_str() {
                "--system" => parsed.system = value(),
                "--listen" | "--connect" => parsed.endpoint = value(),
                "--workload" => parsed.workload = value(),
                "--n" => parsed.n = value().parse().unwrap_or_else(|_| self.usage()),
                _ => self.usage(),
            }
        }
        parsed
    }

    /// Runs `f` for at most `limit`, or fails the process (a hung peer must not hang the lab).
    pub async fn bounded<T>(&self, what: &str, limit: Duration, f: impl Future<Output = T>) -> T {
        match tokio::time::timeout(limit, f).await {
            Ok(v) => v,
            Err(_) => self.fail(format_args!("{what}: nothing within {limit:?}")),
        }
    }

    /// Tries `find` every 20 ms until it finds something (the server reached, its actor
    /// resolved); fails the process after `limit`.
    pub async fn poll_until<T, F, Fut>(&self, what: &str, limit: Duration, mut find: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        let found = async {
            loop {
                if let Some(found) = find().await {
                    return found;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        };
        self.bounded(what, limit, found).await
    }

    /// The count-and-time loop of a throughput workload: takes the receiver's total from
    /// `count` (retrying every 20 ms until it answers), starts the clock, runs `send` (which
    /// sends `n` messages), then asks `count` every 200 µs until the total is `n` more, and
    /// stops the clock. `count` answers a total (`u64`) or maybe one (`Option<u64>`: `None` when
    /// the receiver did not answer, which is not a standstill). Fails the process if the
    /// receiver counts more than `n`, or if its answers stop moving for 5 s.
    pub async fn timed_delivery<F, Fut, C>(&self, n: u64, send: impl Future<Output = ()>, mut count: F) -> Measured
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = C>,
        C: Into<Option<u64>>,
    {
        let first = || {
            let total = count();
            async { total.await.into() }
        };
        let before = self.poll_until("the receiver's count", LIMIT, first).await;
        let start = Instant::now();
        send.await;
        let (mut last, mut moved) = (None, Instant::now());
        loop {
            match count().await.into() {
                None => moved = Instant::now(),
                Some(total) => {
                    let got = total.saturating_sub(before);
                    if got == n {
                        return Measured { ops: n, took: start.elapsed(), latencies_us: Vec::new() };
                    }
                    if got > n {
                        self.fail(format_args!("the receiver counted {got} of {n} messages"));
                    }
                    if last != Some(got) {
                        (last, moved) = (Some(got), Instant::now());
                    } else if moved.elapsed() > STALL {
                        self.fail(format_args!("the receiver counted {got} of {n} messages and stopped there"));
                    }
                }
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    }
}

/// Runs `per_task` asks on each of `tasks` tasks, timing each: `ask(state, i)` gets a clone of
/// `state` and the ask's index `i`, distinct across all tasks (0 up to `tasks * per_task`).
/// Returns every latency, µs.
pub async fn concurrent<S, F, Fut>(tasks: u64, per_task: u64, state: S, ask: F) -> Measured
where
    S: Clone + Send + 'static,
    F: Fn(S, u64) -> Fut + Send + Clone + 'static,
    Fut: Future<Output = ()> + Send,
{
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let (state, ask) = (state.clone(), ask.clone());
            tokio::spawn(async move {
                let mut lat = Vec::with_capacity(per_task as usize);
                for i in t * per_task..(t + 1) * per_task {
                    let state = state.clone();
                    let began = Instant::now();
                    ask(state, i).await;
                    lat.push(began.elapsed().as_secs_f64() * 1e6);
                }
                lat
            })
        })
        .collect();
    let mut latencies_us = Vec::new();
    for h in handles {
        latencies_us.extend(h.await.expect("ask task panicked"));
    }
    Measured { ops: tasks * per_task, took: start.elapsed(), latencies_us }
}

/// A driver's whole run: awaits `run` and prints its JSON line, `system` (when given),
/// `workload`, `ops`, `secs`, `per_s`, `driver_cpu_s` (this process's CPU over `run`),
/// `p50_us` and `p99_us` (0 for a run without latencies). Prints nothing when `run` gives
/// `None`: a `watch` prints its own lines.
pub async fn report(system: Option<&str>, workload: &str, run: impl Future<Output = Option<Measured>>) {
    let cpu0 = cpu_seconds();
    let Some(mut m) = run.await else { return };
    let cpu = cpu_seconds() - cpu0;
    m.latencies_us.sort_by(f64::total_cmp);
    let (secs, p50, p99) = (m.took.as_secs_f64(), percentile(&m.latencies_us, 50.0), percentile(&m.latencies_us, 99.0));
    let system = system.map(|s| format!("\"system\":\"{s}\",")).unwrap_or_default();
    let per_s = m.ops as f64 / secs;
    println!(
        "{{{system}\"workload\":\"{workload}\",\"ops\":{},\"secs\":{secs},\"per_s\":{per_s},\"driver_cpu_s\":{cpu},\"p50_us\":{p50},\"p99_us\":{p99}}}",
        m.ops
    );
}

/// This process's CPU (user + system) so far, seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// The `p`th percentile of `sorted` (nearest rank), 0 when it is empty.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p / 100.0).round() as usize]
}
