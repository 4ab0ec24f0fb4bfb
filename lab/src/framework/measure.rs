//! The sampler: runs a plan of cells (workload × scale × contenders), interleaving contenders
//! sample by sample, and shows progress.
//!
//! How a sample is taken (the methodology the report repeats):
//! - Build the contender's runtime, time the workload future inside `block_on`, drop the
//!   runtime (shut down, threads joined). Only one runtime exists at any moment, so no idle or
//!   spinning threads of another runtime share the CPUs with the one being measured.
//! - Runtimes whose executor is a process global (async-std) run each sample in a child process
//!   (`weft-lab __sample …`, this same binary): the child runs one untimed warm-up of the same
//!   workload, then the timed one, prints `ok <ns>`, and exits. Its exit is the runtime's drop.
//! - Per cell: `warmup` rounds are run and thrown away, then `reps` counted rounds. In round
//!   *r* every contender takes one sample, starting with contender *r mod k* (A B C, B C A, …),
//!   so no runtime always goes first or always follows the same neighbour.
//!
//! A failed sample (panic or failed validation) stops that contender for the cell and records
//! the error; "not yet" (a missing runtime feature) is recorded once without sampling. A sample
//! that hangs past `--sample-timeout` fails (child) or aborts the lab (in process).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::framework::adapter::RtConfig;
use crate::framework::runtimes::{self, async_std::CHILD_ENV, RuntimeId};
use crate::framework::workloads::{Outcome, Workload};
use std::process::ExitCode;

/// One runtime in one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Contender {
    pub runtime: RuntimeId,
    pub config: RtConfig,
    /// Its row name: the runtime's name, or `name[knob=v,…]` in a sweep.
    pub label: String,
}

impl Contender {
    pub fn default_for(runtime: RuntimeId, workers: usize) -> Contender {
        Contender { runtime, config: runtime.default_config(workers), label: runtime.name().to_string() }
    }
}

/// One workload at one scale, measured on every contender.
#[derive(Clone, Debug)]
pub struct Cell {
    pub workload: Workload,
    pub scale: u64,
    pub contenders: Vec<Contender>,
}

/// How to sample.
#[derive(Clone, Debug)]
pub struct Options {
    /// Counted samples per contender and cell.
    pub reps: usize,
    /// Discarded rounds before counting.
    pub warmup: usize,
    pub quiet: bool,
    /// The `weft-lab` binary, for child-process samples.
    pub exe: PathBuf,
    /// A sample running longer than this is a hang: a child is killed and the sample fails; an
    /// in-process sample aborts the lab (its runtime's threads cannot be reclaimed).
    pub sample_timeout: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Ok,
    NotYet,
    Failed(String),
}

/// Long polls counted by the runtimes sampled in this process since the last `take_long_polls`.
static LONG_POLLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Adds a sampled runtime's long-poll count (`Adapter::long_polls`), before it is dropped.
pub fn add_long_polls(n: u64) {
    LONG_POLLS.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
}

/// Takes the count `add_long_polls` gathered, leaving 0.
pub fn take_long_polls() -> u64 {
    LONG_POLLS.swap(0, std::sync::atomic::Ordering::Relaxed)
}

/// What was measured for one contender in one cell.
#[derive(Clone, Debug)]
pub struct Measured {
    pub workload: Workload,
    pub scale: u64,
    pub runtime: RuntimeId,
    pub label: String,
    pub status: Status,
    /// Counted samples in round order.
    pub samples_ns: Vec<u64>,
    /// Long polls weft's monitor counted during the counted samples (0 for other runtimes).
    pub long_polls: u64,
}

/// Takes one sample in a `weft-lab __sample` child; with `warmup` the child first runs the
/// workload once untimed. A child still running after `timeout` is killed and the sample fails
/// (a hung runtime cannot hang the lab).
pub fn child_sample(
    contender: &Contender,
    workload: Workload,
    scale: u64,
    exe: &Path,
    warmup: bool,
    timeout: Duration,
) -> Outcome {
    let config = &contender.config;
    let mut command = Command::new(exe);
    command
        .args(["__sample", "--runtime", contender.runtime.name(), "--workload", workload.name()])
        .args(["--scale", &scale.to_string(), "--workers", &config.workers.to_string()])
        .env(CHILD_ENV, "1")
        .env("ASYNC_STD_THREAD_COUNT", config.workers.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if warmup {
        command.arg("--warmup");
    }
    if let Some(n) = config.global_queue_interval {
        command.args(["--global-queue-interval", &n.to_string()]);
    }
    if let Some(n) = config.event_interval {
        command.args(["--event-interval", &n.to_string()]);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Outcome::Failed(format!("could not start the sample child {}: {e}", exe.display())),
    };
    let started = Instant::now();
    let mut pause = Duration::from_micros(100);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::Failed(format!("timed out after {} s (hung?)", timeout.as_secs()));
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
            Err(e) => return Outcome::Failed(format!("waiting for the sample child: {e}")),
        }
    };
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        let _ = pipe.read_to_string(&mut stdout);
    }
    let reply = stdout.lines().last().unwrap_or("").trim();
    match reply.split_once(' ').unwrap_or((reply, "")) {
        ("ok", ns) => ns
            .parse()
            .map(|ns| Outcome::Time(Duration::from_nanos(ns)))
            .unwrap_or_else(|_| Outcome::Failed(format!("bad child reply {reply:?}"))),
        ("notyet", _) => Outcome::NotYet,
        ("failed", why) => Outcome::Failed(why.to_string()),
        _ => Outcome::Failed(format!("sample child exited with {status} and replied {reply:?}")),
    }
}

/// The child side of [`child_sample`]: prints one reply line; the exit code is always 0 when a
/// reply was printed.
pub fn child_main(runtime: RuntimeId, config: &RtConfig, workload: Workload, scale: u64, warmup: bool) {
    let run = || runtimes::sample_in_process(runtime, config, workload, scale);
    let mut outcome = run();
    if warmup && matches!(outcome, Outcome::Time(_)) {
        outcome = run();
    }
    match outcome {
        Outcome::Time(t) => println!("ok {}", t.as_nanos()),
        Outcome::NotYet => println!("notyet"),
        Outcome::Failed(why) => println!("failed {}", why.replace('\n', " ")),
    }
}

/// Rough cost of one sample in microseconds (progress bar only).
fn estimate_us(contender: &Contender, workload: Workload, scale: u64) -> u64 {
    let spec = workload.spec();
    let base = spec.est_ns_per_unit * scale as f64 / 1_000.0;
    let child = if contender.runtime.in_child() { 2.0 * base + 5_000.0 } else { base };
    child.max(1.0) as u64 + 200
}

/// Runs every cell, interleaved as described in the module docs.
pub fn run(cells: &[Cell], options: &Options) -> Vec<Measured> {
    let rounds = options.warmup + options.reps;
    let total: u64 = cells
        .iter()
        .flat_map(|c| c.contenders.iter().map(move |k| estimate_us(k, c.workload, c.scale) * rounds as u64))
        .sum();
    let bar = if options.quiet { ProgressBar::hidden() } else { ProgressBar::new(total) };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30.cyan/blue}] {percent:>3}%  ETA {eta:>4}  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let watchdog = Watchdog::start();
    let mut out = Vec::new();
    for cell in cells {
        let mut measured: Vec<Measured> = cell
            .contenders
            .iter()
            .map(|k| Measured {
                workload: cell.workload,
                scale: cell.scale,
                runtime: k.runtime,
                label: k.label.clone(),
                status: Status::Ok,
                samples_ns: Vec::new(),
                long_polls: 0,
            })
            .collect();
        for round in 0..rounds {
            let k = cell.contenders.len();
            for i in (0..k).map(|i| (i + round) % k) {
                let contender = &cell.contenders[i];
                let cost = estimate_us(contender, cell.workload, cell.scale);
                if measured[i].status != Status::Ok {
                    bar.inc(cost);
                    continue;
                }
                bar.set_message(format!("{} {} {}", cell.workload.name(), scale_label(cell.scale), contender.label));
                watchdog.arm(
                    options.sample_timeout,
                    format!("{} {} on {}", cell.workload.name(), cell.scale, contender.label),
                );
                take_long_polls();
                // In this process unless the runtime needs a child (async-std's global executor).
                let (workload, scale) = (cell.workload, cell.scale);
                let outcome = if contender.runtime.in_child() {
                    child_sample(contender, workload, scale, &options.exe, true, options.sample_timeout)
                } else {
                    runtimes::sample_in_process(contender.runtime, &contender.config, workload, scale)
                };
                watchdog.disarm();
                if round >= options.warmup {
                    measured[i].long_polls += take_long_polls();
                }
                match outcome {
                    Outcome::Time(t) if round >= options.warmup => measured[i].samples_ns.push(t.as_nanos() as u64),
                    Outcome::Time(_) => {}
                    Outcome::NotYet => measured[i].status = Status::NotYet,
                    Outcome::Failed(why) => {
                        bar.suspend(|| {
                            eprintln!("FAILED {} {} on {}: {why}", cell.workload.name(), cell.scale, contender.label)
                        });
                        measured[i].status = Status::Failed(why);
                    }
                }
                bar.inc(cost);
            }
        }
        out.extend(measured);
    }
    bar.finish_and_clear();
    out
}

/// Aborts the lab when an in-process sample hangs: a runtime stuck in `block_on` cannot be
/// interrupted, and its threads would otherwise share the CPUs with every later measurement.
/// The watchdog thread sleeps on a condvar; it costs nothing while samples run.
struct Watchdog {
    state: Arc<WatchState>,
}

/// The armed deadline and what is running, if any, and the condvar that wakes the watchdog.
type WatchState = (Mutex<Option<(Instant, String)>>, Condvar);

impl Watchdog {
    fn start() -> Watchdog {
        let state: Arc<WatchState> = Arc::new((Mutex::new(None), Condvar::new()));
        let shared = Arc::downgrade(&state);
        std::thread::Builder::new()
            .name("weft-lab-watchdog".into())
            .spawn(move || loop {
                let Some(state) = shared.upgrade() else { return };
                let (lock, wake) = &*state;
                let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
                let wait = match &*guard {
                    Some((deadline, what)) if Instant::now() >= *deadline => {
                        eprintln!("\nweft-lab: sample {what} is still running after its timeout; the runtime looks hung. Aborting (rerun without that runtime, or raise --sample-timeout).");
                        std::process::exit(3);
                    }
                    Some((deadline, _)) => *deadline - Instant::now(),
                    None => Duration::from_millis(500),
                };
                drop(wake.wait_timeout(guard, wait).unwrap_or_else(|e| e.into_inner()));
            })
            .expect("spawn the watchdog");
        Watchdog { state }
    }

    fn arm(&self, timeout: Duration, what: String) {
        *self.state.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now() + timeout, what));
        self.state.1.notify_one();
    }

    fn disarm(&self) {
        *self.state.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// `1k`, `10k`, `1M`: short scale names for tables and charts.
pub fn scale_label(scale: u64) -> String {
    match scale {
        s if s >= 1_000_000 && s % 1_000_000 == 0 => format!("{}M", s / 1_000_000),
        s if s >= 1_000 && s % 1_000 == 0 => format!("{}k", s / 1_000),
        s => s.to_string(),
    }
}

/// `__sample`: one sample of one workload in this fresh process.
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[command(flatten)]
    pub rt: super::selection::ChildRuntime,
    #[arg(long)]
    pub workload: String,
    #[arg(long)]
    pub scale: u64,
    #[arg(long)]
    pub global_queue_interval: Option<u32>,
    #[arg(long)]
    pub event_interval: Option<u32>,
    /// Run one untimed sample first.
    #[arg(long)]
    pub warmup: bool,
}

/// `weft-lab __sample`: take the sample and print `ok <ns>`.
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    let runtime = args.rt.id()?;
    let workload = Workload::by_name(&args.workload).ok_or_else(|| format!("unknown workload {:?}", args.workload))?;
    let config = RtConfig {
        global_queue_interval: args.global_queue_interval,
        event_interval: args.event_interval,
        ..RtConfig::new(runtime.flavor(), args.rt.workers)
    };
    child_main(runtime, &config, workload, args.scale, args.warmup);
    Ok(ExitCode::SUCCESS)
}
