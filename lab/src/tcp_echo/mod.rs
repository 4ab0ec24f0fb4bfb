//! `weft-lab tcp-echo`: throughput *and* per-message latency of the `tcp_echo` session.
//!
//! The micro suite times `tcp_echo` as one future (throughput only). This command runs the
//! same session (`workloads::net::echo_session`, 64 loopback connections by default,
//! `--connections` for a sweep, 256-byte messages, every echo validated) with each round trip
//! timed, on every runtime in interleaved rounds with a fresh runtime per round, and reports
//! messages per second, the round-trip latency distribution (p50, p99, p99.9) and the CPU
//! time per round trip (user + system of this process over the round: both ends of every
//! connection run on the runtime under test, nothing else runs meanwhile), plus ratios
//! against tokio of the same flavor.
//!
//! With `--idle-connections N` the runtime under test also accepts N more connections before
//! the round, each parked in a task reading one byte, while their client ends sit in a helper
//! process ([`crate::framework::idle_conns`]), so neither their CPU nor their descriptors count here. The
//! row fails unless, at the end of the round, all N server tasks are still parked *and* the
//! helper counts all N client sockets alive; it also reports this process's RSS (both ends of
//! the active connections, the server ends of the idle ones) and its growth per idle connection.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::framework::adapter::{Adapter, Net, RtConfig};
use crate::framework::idle_conns;
use crate::framework::runtimes::{self, RuntimeId};
use crate::framework::selection::{this_exe, write_md_json, Selection};
use crate::framework::stats;
use crate::framework::workloads::net::echo_session;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Clone, Serialize)]
pub struct EchoRow {
    pub runtime: String,
    pub messages: u64,
    /// Median over rounds of messages per second.
    pub msgs_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub connections: u64,
    /// Median over rounds of process CPU time (user + system) per round trip, in µs.
    pub cpu_us_per_msg: f64,
    /// Idle connections held open beside the active ones (each verified alive at the end of
    /// every round).
    pub idle_connections: usize,
    /// Median over rounds of this process's RSS at the end of the round, in KiB.
    pub rss_kib: f64,
    /// Median over rounds of the RSS growth while the idle set opened, per idle connection,
    /// in bytes (`None` without idle connections).
    pub rss_per_idle_conn_bytes: Option<f64>,
}

/// How long the runtime under test may take to accept the whole idle set.
const IDLE_ACCEPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `rounds` interleaved rounds of `messages` round trips on each runtime.
/// `exe` is the weft-lab binary (it runs the idle-connection helper when `idle > 0`).
pub fn measure(
    exe: &Path,
    chosen: &[RuntimeId],
    workers: usize,
    rounds: usize,
    messages: u64,
    connections: u64,
    idle: usize,
) -> Result<Vec<EchoRow>, String> {
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut cpu_us: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut lat_us: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut rss_kib: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    let mut per_idle: Vec<Vec<f64>> = vec![Vec::new(); chosen.len()];
    for _ in 0..rounds {
        for (i, &rt) in chosen.iter().enumerate() {
            let config = RtConfig::new(rt.flavor(), workers);
            if rt.in_child() {
                return Err("async-std cannot be dropped in process; leave it out of `tcp-echo`".into());
            }
            let out = runtimes::dispatch(rt, Round { config: &config, messages, connections, exe, idle })
                .map_err(|e| format!("{}: {e}", rt.name()))?;
            rates[i].push(messages as f64 / out.secs);
            cpu_us[i].push(out.cpu_secs * 1e6 / messages as f64);
            lat_us[i].extend(out.latencies_ns.into_iter().map(|ns| ns as f64 / 1_000.0));
            rss_kib[i].push(out.rss_kib as f64);
            per_idle[i].extend(out.rss_per_idle_conn_bytes);
        }
    }
    Ok(chosen
        .iter()
        .enumerate()
        .map(|(i, rt)| EchoRow {
            runtime: rt.name().to_string(),
            messages: messages * rounds as u64,
            msgs_per_sec: stats::median(&rates[i]),
            p50_us: stats::percentile(&lat_us[i], 50.0),
            p99_us: stats::percentile(&lat_us[i], 99.0),
            p999_us: stats::percentile(&lat_us[i], 99.9),
            connections,
            cpu_us_per_msg: stats::median(&cpu_us[i]),
            idle_connections: idle,
            rss_kib: stats::median(&rss_kib[i]),
            rss_per_idle_conn_bytes: (!per_idle[i].is_empty()).then(|| stats::median(&per_idle[i])),
        })
        .collect())
}

/// One round of `messages` round trips on a freshly built runtime.
struct Round<'a> {
    config: &'a RtConfig,
    messages: u64,
    connections: u64,
    exe: &'a Path,
    idle: usize,
}

/// What one round measured.
struct RoundOut {
    secs: f64,
    cpu_secs: f64,
    latencies_ns: Vec<u64>,
    rss_kib: u64,
    rss_per_idle_conn_bytes: Option<f64>,
}

impl runtimes::WithAdapter for Round<'_> {
    type Output = Result<RoundOut, String>;
    fn run<R: Adapter>(self) -> Self::Output {
        round::<R>(&self)
    }
}

/// User + system CPU seconds of this process so far.
fn process_cpu_secs() -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given; RUSAGE_SELF is always valid.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// The idle set's server side: accepts `count` connections on the runtime under test and
/// parks a task on each that reads one byte; `parked` counts the tasks still waiting.
async fn accept_idle<R: Adapter>(
    listener: <R::Net as Net>::Listener,
    count: usize,
    parked: Arc<AtomicUsize>,
) -> Result<(), String> {
    for i in 0..count {
        let mut stream = <R::Net as Net>::accept(&listener).await.map_err(|e| format!("idle accept {i}: {e}"))?;
        parked.fetch_add(1, Ordering::Relaxed);
        let parked = parked.clone();
        R::detach(R::spawn(async move {
            // An idle client never sends: this completes only when it hangs up or errs.
            let _ = <R::Net as Net>::read_exact(&mut stream, &mut [0u8; 1]).await;
            parked.fetch_sub(1, Ordering::Relaxed);
        }));
    }
    Ok(())
}

/// Opens the idle set: the helper connects while the runtime accepts, within a timeout.
fn open_idle<R: Adapter>(
    runtime: &R,
    exe: &Path,
    idle: usize,
) -> Result<(idle_conns::Holder, Arc<AtomicUsize>), String> {
    let (listener, addr) =
        runtime.block_on(<R::Net as Net>::bind_loopback()).map_err(|e| format!("idle listener: bind: {e}"))?;
    let mut holder = idle_conns::Holder::spawn(exe, addr, idle, false)?;
    let parked = Arc::new(AtomicUsize::new(0));
    let accept = accept_idle::<R>(listener, idle, parked.clone());
    let accepted = runtime.block_on(futures_lite::future::or(
        async move { R::join(R::spawn(accept)).await.map_err(|_| "the idle accept task panicked".to_string())? },
        async {
            R::sleep(IDLE_ACCEPT_TIMEOUT).await;
            Err(format!("accepting {idle} idle connections took over {IDLE_ACCEPT_TIMEOUT:?}"))
        },
    ));
    if let Err(e) = accepted {
        // The helper's own error, when it has one, says more.
        return Err(holder.wait_open().err().unwrap_or(e));
    }
    holder.wait_open()?;
    Ok((holder, parked))
}

/// One round on a freshly built runtime.
fn round<R: Adapter>(r: &Round<'_>) -> Result<RoundOut, String> {
    let (messages, connections, idle) = (r.messages, r.connections, r.idle);
    // Earlier rounds' runtimes were freed into this process's heap; hand those pages back so
    // that the RSS growth while the idle set opens is this runtime's, not a reuse of them.
    crate::framework::memory::release_free_heap();
    let runtime = R::build(r.config).map_err(|e| format!("building the runtime failed: {e}"))?;
    let mut idle_set = None;
    let mut rss_per_idle_conn_bytes = None;
    if idle > 0 {
        let rss_before = idle_conns::rss_kib(std::process::id())?;
        idle_set = Some(open_idle::<R>(&runtime, r.exe, idle)?);
        let grown = idle_conns::rss_kib(std::process::id())?.saturating_sub(rss_before);
        rss_per_idle_conn_bytes = Some(grown as f64 * 1024.0 / idle as f64);
    }
    let cpu0 = process_cpu_secs();
    let start = Instant::now();
    let out = runtime.block_on(async move {
        R::join(R::spawn(echo_session::<R>(messages, connections, true)))
            .await
            .map_err(|_| "the echo session panicked".to_string())?
    });
    let secs = start.elapsed().as_secs_f64();
    let cpu_secs = process_cpu_secs() - cpu0;
    let rss_kib = idle_conns::rss_kib(std::process::id())?;
    if let Some((mut holder, parked)) = idle_set {
        // Server side first (tasks still parked), then the client side (sockets still open).
        idle_conns::expect_all_alive("parked server tasks", parked.load(Ordering::Relaxed), idle)?;
        idle_conns::expect_all_alive("connected client sockets", holder.count_alive()?, idle)?;
    }
    drop(runtime);
    let latencies_ns = out?;
    Ok(RoundOut { secs, cpu_secs, latencies_ns, rss_kib, rss_per_idle_conn_bytes })
}

/// The table as Markdown, with ratios against tokio of the same flavor where present.
pub fn markdown(
    rows: &[EchoRow],
    rounds: usize,
    messages: u64,
    workers: usize,
    connections: u64,
    idle: usize,
) -> String {
    let baseline = |name: &str| {
        let base = if name.ends_with("-ct") { "tokio-ct" } else { "tokio-mt" };
        rows.iter().find(|r| r.runtime == base)
    };
    let idle_text = if idle > 0 { format!(" + {idle} idle") } else { String::new() };
    let mut s = format!("# TCP echo: throughput and round-trip latency, {connections} connections{idle_text}\n\n");
    s.push_str(&format!(
        "{rounds} interleaved rounds × {messages} round trips of 256 bytes over {connections} loopback connections \
         per runtime, {workers} workers, fresh runtime per round; every echo validated. msgs/s and CPU/msg \
         (user + system of the process, both ends on the runtime) are medians over rounds; latencies pool \
         every round trip. RSS is this process's at the end of the round (median over rounds).\n\n"
    ));
    if idle > 0 {
        s.push_str(&format!(
            "{idle} idle connections are accepted by the runtime under test before each round (a task parked \
             reading each; client ends in a helper process) and all are verified alive at its end; RSS/idle \
             conn is the RSS growth while they opened, per connection.\n\n"
        ));
    }
    s.push_str(
        "| runtime | idle | msgs/s | p50 | p99 | p99.9 | CPU/msg | RSS | RSS/idle conn | msgs/s ÷ tokio | p99 ÷ tokio | CPU/msg ÷ tokio |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (rate_ratio, p99_ratio, cpu_ratio) = match baseline(&r.runtime) {
            Some(b) => (
                format!("{:.2}×", r.msgs_per_sec / b.msgs_per_sec),
                format!("{:.2}×", r.p99_us / b.p99_us),
                format!("{:.2}×", r.cpu_us_per_msg / b.cpu_us_per_msg),
            ),
            None => ("–".into(), "–".into(), "–".into()),
        };
        s.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} µs | {:.0} µs | {:.0} µs | {:.1} µs | {:.1} MiB | {} | {} | {} | {} |\n",
            r.runtime,
            r.idle_connections,
            r.msgs_per_sec,
            r.p50_us,
            r.p99_us,
            r.p999_us,
            r.cpu_us_per_msg,
            r.rss_kib / 1024.0,
            r.rss_per_idle_conn_bytes.map_or("–".into(), |b| format!("{b:.0} B")),
            rate_ratio,
            p99_ratio,
            cpu_ratio
        ));
    }
    s
}

/// `weft-lab tcp-echo`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved rounds (a fresh runtime per round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Round trips per round (shared by the connections).
    #[arg(long, default_value_t = 100_000)]
    pub messages: u64,
    /// Loopback connections; a comma-separated list is a sweep (e.g. `1,64,1024`).
    #[arg(long, value_delimiter = ',', default_value = "64")]
    pub connections: Vec<u64>,
    /// Idle connections held open beside the active ones, all verified alive at the end of
    /// every round; a comma-separated list is a sweep (e.g. `0,10000`).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub idle_connections: Vec<usize>,
    /// Writes OUT/tcp_echo.md and OUT/tcp_echo.json.
    #[arg(long, default_value = "lab-results/tcp-echo")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// `weft-lab tcp-echo`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let (chosen, workers) = args.selection.resolve(&RuntimeId::IN_PROCESS)?;
    let rounds = args.rounds.max(1);
    // Both ends of every active connection and the server end of every idle one are here.
    let most = 2 * args.connections.iter().max().copied().unwrap_or(1)
        + *args.idle_connections.iter().max().unwrap_or(&0) as u64;
    crate::framework::idle_conns::raise_nofile(most + crate::framework::idle_conns::FD_SLACK)?;
    let exe = this_exe()?;
    let mut rows = Vec::new();
    let mut md = String::new();
    for &connections in &args.connections {
        for &idle in &args.idle_connections {
            let sweep_rows = measure(&exe, &chosen, workers, rounds, args.messages.max(1), connections, idle)?;
            md += &markdown(&sweep_rows, rounds, args.messages, workers, connections, idle);
            md += "\n";
            rows.extend(sweep_rows);
        }
    }
    write_md_json(&args.out, "tcp_echo", &md, &rows)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_echo_rows_are_complete_and_consistent() {
        // No idle set, so the helper binary is never started.
        let rows = measure(Path::new("weft-lab"), &[RuntimeId::WeftCt, RuntimeId::TokioCt], 1, 1, 256, 16, 0).unwrap();
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r.messages, 256);
            assert_eq!(r.connections, 16);
            assert!(r.cpu_us_per_msg >= 0.0);
            assert!(r.msgs_per_sec > 0.0);
            assert!(r.p50_us > 0.0 && r.p99_us >= r.p50_us && r.p999_us >= r.p99_us, "{r:?}");
            assert!(r.rss_kib > 0.0 && r.idle_connections == 0 && r.rss_per_idle_conn_bytes.is_none(), "{r:?}");
        }
        let md = markdown(&rows, 1, 256, 1, 16, 0);
        assert!(md.contains("| weft-ct |") && md.contains("1.00×"));
    }
}
