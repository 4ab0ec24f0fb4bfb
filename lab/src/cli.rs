//! The command line (clap): `weft-lab` with no arguments runs the quick micro suite; the
//! subcommands are `micro`, `smoke`, `baseline save`, `sweep`, `report`, `lateness`, `memory-per-task`,
//! `tcp-echo`, `http-hello`, and the hidden `__sample`, `__memory_sample`, `__http_server` and
//! `__agents-batch` used by child processes. Each command is a thin function over the library.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::framework::adapter::RtConfig;
use crate::framework::measure::{self, Cell, Contender, Options};
use crate::framework::results::{self, default_workers, Machine, Results, Settings};
use crate::framework::runtimes::RuntimeId;
use crate::framework::smoke::{self, selected, SmokeOptions};
use crate::framework::workloads::{Workload, SPECS};
use crate::framework::{baseline, report, sweep};

#[derive(Parser, Debug)]
#[command(
    name = "weft-lab",
    version,
    about = "Benchmarks weft against tokio, smol and async-std, fairly, with statistics."
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    micro: MicroArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the micro suite (quick profile unless --full) and write a report.
    Micro(MicroArgs),
    /// Every workload once at a tiny size on every runtime, outputs validated (for CI).
    Smoke(SmokeArgs),
    /// Manage regression baselines.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Run a grid of runtime knobs and report the best setting per workload.
    Sweep(SweepArgs),
    /// Re-render report.md and report.html from DIR/results.json.
    Report { dir: PathBuf },
    /// Timer lateness (p50/p99/max of elapsed − requested) per runtime.
    Lateness(LatenessArgs),
    /// RSS growth per live idle task (each parked on a oneshot) per runtime.
    #[command(name = "memory-per-task")]
    MemoryPerTask(MemoryArgs),
    /// Scheduling latency of other tasks while one task blocks a worker (weft with
    /// compensation on and off, tokio, smol).
    BlockingResilience(BlockingArgs),
    /// Throughput of async work mixed with `block_in_place`, weft vs tokio (interleaved).
    BlockInPlace(BlockInPlaceArgs),
    /// TCP echo over loopback: messages/s and round-trip p50/p99/p99.9 per runtime.
    #[command(name = "tcp-echo")]
    TcpEcho(TcpEchoArgs),
    /// Internal: take one sample in this process and print `ok <ns>`.
    #[command(name = "__sample", hide = true)]
    Sample(SampleArgs),
    /// hyper HTTP/1.1 hello server per runtime (child process) under a fixed load generator.
    HttpHello(HttpHelloArgs),
    /// weft::fs vs tokio::fs: BufReader lines, whole-file reads, directory walk.
    #[command(name = "fs-bench")]
    FsBench(crate::fs_bench::FsBenchArgs),
    #[command(name = "__http_server", hide = true)]
    HttpServer(HttpServerArgs),
    /// Internal: hold idle connections for `http-hello`/`tcp-echo` (see `idle_conns`).
    #[command(name = "__idle_holder", hide = true)]
    IdleHolder(IdleHolderArgs),
    /// Internal: run one agents batch (plan on stdin, JSON reply on stdout); async-std's rows.
    #[command(name = "__agents-batch", hide = true)]
    AgentsBatch {
        #[arg(long)]
        runtime: String,
    },
    /// Internal: one `memory-per-task` round in this (fresh) process; prints `ok <bytes>`.
    #[command(name = "__memory_sample", hide = true)]
    MemorySample(MemorySampleArgs),
    /// TR115's multi-agent LLM study on every runtime (embedded Ollama simulator by default).
    Agents(crate::agents::command::AgentsArgs),
    /// The Ollama-compatible simulator, standalone on 127.0.0.1.
    ServeOllama(crate::agents::command::ServeArgs),
    /// Actor classics: weft-actor against kameo, ractor, actix and plain tokio tasks.
    Actors(ActorsArgs),
    /// Search Claude Code transcripts (QUERY), generate a corpus (gen-corpus), or bench engines (bench).
    Search(crate::search::SearchArgs),
    /// Live terminal view of a weft program's metrics endpoint (`weft::metrics::serve`).
    Console(crate::console::ConsoleArgs),
    /// A weft program to watch with `console`: a task with 50 ms blocking polls, timers, I/O.
    #[command(name = "console-demo")]
    ConsoleDemo(crate::console_demo::DemoArgs),
    /// Run COMMAND under a grid of runtime environment variables; print the best setting,
    /// its ratio to the default with a CI, the lines to deploy it, and the runtime's diagnosis.
    Tune(crate::tune::TuneArgs),
}

#[derive(Args, Debug)]
struct ActorsArgs {
    #[command(flatten)]
    selection: Selection,
    /// Counted rounds (each runs every peer once per workload).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Discarded warm-up rounds.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Size of every workload, in percent of the sizes (e.g. 10 for a quick look).
    #[arg(long, default_value_t = 100)]
    percent: u64,
    /// Writes OUT/results.json and OUT/report.md.
    #[arg(long, default_value = "lab-results/actors")]
    out: PathBuf,
}

#[derive(Args, Debug)]
struct LatenessArgs {
    #[command(flatten)]
    selection: Selection,
    /// Interleaved rounds (a fresh runtime per round).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Concurrent sleeps per round.
    #[arg(long, default_value_t = 2000)]
    timers: u64,
    /// Writes OUT/lateness.md and OUT/lateness.json.
    #[arg(long, default_value = "lab-results/lateness")]
    out: PathBuf,
}

#[derive(Args, Debug)]
struct MemoryArgs {
    #[command(flatten)]
    selection: Selection,
    /// Interleaved rounds (a fresh runtime per round).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Live idle tasks per round.
    #[arg(long, default_value_t = 1_000_000)]
    tasks: u64,
    /// Writes OUT/memory_per_task.md and OUT/memory_per_task.json.
    #[arg(long, default_value = "lab-results/memory-per-task")]
    out: PathBuf,
}

#[derive(Args, Debug)]
struct BlockingArgs {
    #[command(flatten)]
    selection: Selection,
    /// Interleaved rounds per runtime and mode (a fresh runtime per round).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Short tasks spawned before the block.
    #[arg(long, default_value_t = 1000)]
    tasks: usize,
    /// How long the blocking task blocks its worker, in ms.
    #[arg(long, default_value_t = 1000)]
    block_ms: u64,
    /// Writes OUT/blocking.md and OUT/blocking.json.
    #[arg(long, default_value = "lab-results/blocking")]
    out: PathBuf,
}

#[derive(Args, Debug)]
struct BlockInPlaceArgs {
    /// Interleaved weft/tokio pairs.
    #[arg(long, default_value_t = 10)]
    samples: usize,
    #[arg(long, default_value_t = 64)]
    tasks: u64,
    #[arg(long, default_value_t = 100)]
    iters: u64,
    /// Busy work inside each `block_in_place`, in µs.
    #[arg(long, default_value_t = 20)]
    work_us: u64,
}

#[derive(Args, Debug)]
struct TcpEchoArgs {
    #[command(flatten)]
    selection: Selection,
    /// Interleaved rounds (a fresh runtime per round).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Round trips per round (shared by the connections).
    #[arg(long, default_value_t = 100_000)]
    messages: u64,
    /// Loopback connections; a comma-separated list is a sweep (e.g. `1,64,1024`).
    #[arg(long, value_delimiter = ',', default_value = "64")]
    connections: Vec<u64>,
    /// Idle connections held open beside the active ones, all verified alive at the end of
    /// every round; a comma-separated list is a sweep (e.g. `0,10000`).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    idle_connections: Vec<usize>,
    /// Writes OUT/tcp_echo.md and OUT/tcp_echo.json.
    #[arg(long, default_value = "lab-results/tcp-echo")]
    out: PathBuf,
}

#[derive(Args, Debug, Clone, Default)]
struct Selection {
    /// Only workloads whose name contains one of these (comma-separated) substrings.
    #[arg(long, value_delimiter = ',')]
    filter: Vec<String>,
    /// Runtimes to measure (comma-separated; default: all six).
    #[arg(long, value_delimiter = ',')]
    runtimes: Vec<String>,
    /// Worker threads for every multi-thread runtime (default: the machine's cores).
    #[arg(long)]
    workers: Option<usize>,
    /// Hide the progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Seconds after which a sample counts as hung.
    #[arg(long, default_value_t = 120)]
    sample_timeout: u64,
}

#[derive(Args, Debug, Clone, Default)]
struct MicroArgs {
    /// Run every scale, with more samples.
    #[arg(long)]
    full: bool,
    /// Counted samples per runtime and cell (default: 5 quick, 10 full).
    #[arg(long)]
    reps: Option<usize>,
    /// Discarded warm-up rounds per cell (default: 1 quick, 2 full).
    #[arg(long)]
    warmup: Option<usize>,
    /// Also write results.json to this path.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Results root: writes OUT/<UTC timestamp>/ and OUT/latest/.
    #[arg(long, default_value = "lab-results")]
    out: PathBuf,
    /// Compare weft's rows with baseline NAME; exit non-zero on a regression.
    #[arg(long, value_name = "NAME")]
    compare_baseline: Option<String>,
    /// Regression threshold for --compare-baseline.
    #[arg(long, default_value = "10%")]
    threshold: String,
    /// Where baselines live.
    #[arg(long, default_value = "lab-baselines")]
    baseline_dir: PathBuf,
    #[command(flatten)]
    selection: Selection,
}

#[derive(Args, Debug)]
struct SmokeArgs {
    #[command(flatten)]
    selection: Selection,
}

#[derive(Subcommand, Debug)]
enum BaselineCommand {
    /// Save a baseline: measure weft (default runtimes weft-mt,weft-ct), or copy --from DIR.
    Save {
        name: String,
        /// Save DIR/results.json instead of measuring.
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        #[command(flatten)]
        micro: MicroArgs,
    },
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// A knob and its values, e.g. worker_threads=1,2 (repeatable).
    #[arg(long = "knob", required = true, value_parser = sweep::parse_knob)]
    knobs: Vec<sweep::KnobSpec>,
    /// Counted samples per setting and cell.
    #[arg(long, default_value_t = 5)]
    reps: usize,
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    #[arg(long, default_value = "lab-results")]
    out: PathBuf,
    #[command(flatten)]
    selection: Selection,
}

#[derive(Args, Debug)]
struct HttpHelloArgs {
    /// Keep-alive connections of the load generator; a comma-separated list is a sweep
    /// (e.g. `1,64,1024`), one table per count.
    #[arg(long, value_delimiter = ',', default_value = "64")]
    connections: Vec<usize>,
    /// Idle keep-alive connections (one request served on each first) held open beside the
    /// active ones, all verified alive at the end of every round; a comma-separated list is a
    /// sweep (e.g. `0,10000`).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    idle_connections: Vec<usize>,
    /// Seconds of load per runtime (split over the rounds).
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Interleaved rounds (a fresh server per runtime per round).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Also measure each runtime that has a hyper timer (weft, tokio) with it, as a second
    /// row (`weft-mt+timer`) in the same rounds: the README `hello_server`'s configuration.
    #[arg(long)]
    hyper_timer: bool,
    /// Writes OUT/http_hello.md and OUT/http_hello.json.
    #[arg(long, default_value = "lab-results/http_hello")]
    out: PathBuf,
    #[command(flatten)]
    selection: Selection,
}

#[derive(Args, Debug)]
struct IdleHolderArgs {
    #[arg(long)]
    addr: std::net::SocketAddr,
    #[arg(long)]
    count: usize,
    /// Complete one keep-alive `GET /` on each connection first.
    #[arg(long)]
    http: bool,
}

#[derive(Args, Debug)]
struct HttpServerArgs {
    #[arg(long)]
    runtime: String,
    #[arg(long)]
    workers: usize,
    /// Give each connection the runtime's hyper timer (hyper's default header-read timeout).
    #[arg(long)]
    timer: bool,
}

#[derive(Args, Debug)]
struct MemorySampleArgs {
    #[arg(long)]
    runtime: String,
    #[arg(long)]
    workers: usize,
    #[arg(long)]
    tasks: u64,
}

#[derive(Args, Debug)]
struct SampleArgs {
    #[arg(long)]
    runtime: String,
    #[arg(long)]
    workload: String,
    #[arg(long)]
    scale: u64,
    #[arg(long)]
    workers: usize,
    #[arg(long)]
    global_queue_interval: Option<u32>,
    #[arg(long)]
    event_interval: Option<u32>,
    /// Run one untimed sample first.
    #[arg(long)]
    warmup: bool,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        None => micro(cli.micro),
        Some(Command::Micro(args)) => micro(args),
        Some(Command::Smoke(args)) => smoke_command(args),
        Some(Command::Baseline(BaselineCommand::Save { name, from, micro })) => baseline_save(&name, from, micro),
        Some(Command::Sweep(args)) => sweep_command(args),
        Some(Command::Report { dir }) => report_command(&dir),
        Some(Command::Lateness(args)) => lateness_command(args),
        Some(Command::BlockingResilience(args)) => blocking_command(args),
        Some(Command::BlockInPlace(a)) => {
            let work = std::time::Duration::from_micros(a.work_us);
            crate::block_in_place::run(a.samples.max(1), a.tasks, a.iters, work).map(|md| {
                print!("{md}");
                ExitCode::SUCCESS
            })
        }
        Some(Command::TcpEcho(args)) => tcp_echo_command(args),
        Some(Command::MemoryPerTask(args)) => memory_command(args),
        Some(Command::Actors(args)) => actors_command(args),
        Some(Command::Sample(args)) => sample_command(args),
        Some(Command::HttpHello(args)) => http_hello_command(args),
        Some(Command::Search(args)) => crate::search::command(args),
        Some(Command::Console(args)) => crate::console::run(args).map(|()| ExitCode::SUCCESS),
        Some(Command::ConsoleDemo(args)) => crate::console_demo::run(args).map(|()| ExitCode::SUCCESS),
        Some(Command::FsBench(args)) => crate::fs_bench::run(args),
        Some(Command::Tune(args)) => crate::tune::command(args),
        Some(Command::IdleHolder(args)) => {
            crate::framework::idle_conns::holder_main(args.addr, args.count, args.http).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::HttpServer(args)) => {
            let runtime =
                RuntimeId::by_name(&args.runtime).ok_or_else(|| format!("unknown runtime {:?}", args.runtime));
            runtime
                .and_then(|rt| crate::http_hello::server_main(rt, args.workers, args.timer))
                .map(|()| ExitCode::SUCCESS)
        }
        Some(Command::MemorySample(args)) => {
            let runtime =
                RuntimeId::by_name(&args.runtime).ok_or_else(|| format!("unknown runtime {:?}", args.runtime));
            runtime.and_then(|rt| crate::memory_per_task::sample_main(rt, args.workers, args.tasks)).map(|bytes| {
                println!("ok {bytes}");
                ExitCode::SUCCESS
            })
        }
        Some(Command::Agents(args)) => {
            crate::agents::command::agents_main(args).map(|ok| if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Some(Command::AgentsBatch { runtime }) => {
            crate::agents::child::child_main(&runtime).map(|()| ExitCode::SUCCESS)
        }
        Some(Command::ServeOllama(args)) => crate::agents::command::serve_main(args).map(|()| ExitCode::SUCCESS),
    };
    match outcome {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn this_exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find the weft-lab binary: {e}"))
}

fn runtimes(selection: &Selection, default: &[RuntimeId]) -> Result<Vec<RuntimeId>, String> {
    if selection.runtimes.is_empty() {
        return Ok(default.to_vec());
    }
    selection
        .runtimes
        .iter()
        .map(|name| RuntimeId::by_name(name.trim()).ok_or_else(|| format!("unknown runtime {name:?}")))
        .collect()
}

/// The cells of a micro run: selected workloads × profile scales × contenders.
fn micro_cells(full: bool, filter: &[String], contenders: &[Contender]) -> Vec<Cell> {
    SPECS
        .iter()
        .filter(|s| selected(s.name, filter))
        .flat_map(|s| (if full { s.full } else { s.quick }).iter().map(move |&scale| (s.workload, scale)))
        .map(|(workload, scale)| Cell { workload, scale, contenders: contenders.to_vec() })
        .collect()
}

fn measure_micro(args: &MicroArgs, default_runtimes: &[RuntimeId]) -> Result<Results, String> {
    let chosen = runtimes(&args.selection, default_runtimes)?;
    let workers = args.selection.workers.unwrap_or_else(default_workers);
    let contenders: Vec<Contender> = chosen.iter().map(|&r| Contender::default_for(r, workers)).collect();
    let cells = micro_cells(args.full, &args.selection.filter, &contenders);
    if cells.is_empty() {
        return Err("the filter selects no workload".into());
    }
    let options = Options {
        reps: args.reps.unwrap_or(if args.full { 10 } else { 5 }).max(1),
        warmup: args.warmup.unwrap_or(if args.full { 2 } else { 1 }),
        quiet: args.selection.quiet,
        exe: this_exe()?,
        sample_timeout: Duration::from_secs(args.selection.sample_timeout),
    };
    let measured = measure::run(&cells, &options);
    let settings = Settings {
        workers,
        reps: options.reps,
        warmup: options.warmup,
        runtimes: chosen.iter().map(|r| r.name().to_string()).collect(),
        filter: (!args.selection.filter.is_empty()).then(|| args.selection.filter.join(",")),
    };
    Ok(results::assemble(&measured, Machine::detect(), if args.full { "full" } else { "quick" }, settings))
}

/// `lab-results/2026-11-22T13-24-31Z`-style directory name for now.
fn timestamp_dir() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string().replace(':', "-")
}

/// Writes the report into OUT/<timestamp>/ and OUT/latest/ (and keeps OUT out of git).
fn write_run(out: &Path, results: &Results) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let ignore = out.join(".gitignore");
    if !ignore.exists() {
        let _ = std::fs::write(&ignore, "# weft-lab results are not committed (baselines live in lab-baselines/)\n*\n");
    }
    let dir = out.join(timestamp_dir());
    let latest = out.join("latest");
    let _ = std::fs::remove_dir_all(&latest);
    for d in [&dir, &latest] {
        report::write_all(d, results).map_err(|e| format!("cannot write {}: {e}", d.display()))?;
    }
    Ok(dir)
}

fn failures(results: &Results) -> Vec<String> {
    results
        .results
        .iter()
        .filter(|r| r.status == "failed")
        .map(|r| format!("{} {} {}: {}", r.workload, r.scale, r.runtime, r.error.as_deref().unwrap_or("failed")))
        .collect()
}

fn micro(args: MicroArgs) -> Result<ExitCode, String> {
    let threshold = baseline::parse_threshold(&args.threshold)?;
    let baseline = args.compare_baseline.as_deref().map(|name| baseline::load(&args.baseline_dir, name)).transpose()?;
    let results = measure_micro(&args, &RuntimeId::ALL)?;
    print!("{}", report::terminal(&results));
    let dir = write_run(&args.out, &results)?;
    println!("wrote {}/{{results.json,report.md,report.html}} and {}/latest/", dir.display(), args.out.display());
    if let Some(path) = &args.json {
        std::fs::write(path, results.to_json()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let mut code = ExitCode::SUCCESS;
    let failed = failures(&results);
    if !failed.is_empty() {
        eprintln!("{} failed workload run(s):\n  {}", failed.len(), failed.join("\n  "));
        code = ExitCode::FAILURE;
    }
    if let (Some(base), Some(name)) = (baseline, &args.compare_baseline) {
        let comparisons = baseline::compare(&results, &base, threshold);
        print!("{}", baseline::render(&comparisons, name, threshold));
        let regressed: Vec<String> = comparisons
            .iter()
            .filter(|c| c.regressed)
            .map(|c| format!("{} {} {}", c.workload, c.scale, c.runtime))
            .collect();
        if !regressed.is_empty() {
            eprintln!("regressions against baseline {name:?}: {}", regressed.join("; "));
            code = ExitCode::FAILURE;
        }
    }
    Ok(code)
}

fn smoke_command(args: SmokeArgs) -> Result<ExitCode, String> {
    let options = SmokeOptions {
        runtimes: runtimes(&args.selection, &RuntimeId::ALL)?,
        filter: args.selection.filter.clone(),
        workers: args.selection.workers.unwrap_or_else(default_workers),
        exe: this_exe()?,
        verbose: !args.selection.quiet,
        timeout: Duration::from_secs(args.selection.sample_timeout.min(30)),
    };
    let start = std::time::Instant::now();
    let mut report = smoke::run(&options);
    if selected("actors", &options.filter) {
        crate::actors::smoke(&mut report, options.workers, options.verbose);
    }
    if selected("search", &options.filter) {
        for line in crate::search::smoke(&options.exe) {
            match line {
                Ok(l) => {
                    report.passed += 1;
                    if options.verbose {
                        println!("ok       {l}");
                    }
                }
                Err(e) => {
                    report.failed += 1;
                    println!("FAILED   {e}");
                    report.failures.push(e);
                }
            }
        }
    }
    for failure in &report.failures {
        eprintln!("FAILED {failure}");
    }
    println!("smoke took {:.1} s", start.elapsed().as_secs_f64());
    println!("{}", report.summary());
    Ok(if report.ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn baseline_save(name: &str, from: Option<PathBuf>, mut args: MicroArgs) -> Result<ExitCode, String> {
    let results = match from {
        Some(dir) => {
            let path = dir.join("results.json");
            Results::from_json(
                &std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            )?
        }
        None => {
            args.selection.runtimes.retain(|r| !r.is_empty());
            let results = measure_micro(&args, &[RuntimeId::WeftMt, RuntimeId::WeftCt])?;
            print!("{}", report::terminal(&results));
            results
        }
    };
    let failed = failures(&results);
    if !failed.is_empty() {
        return Err(format!("not saving a baseline with failed rows:\n  {}", failed.join("\n  ")));
    }
    let path = baseline::save(&args.baseline_dir, name, &results).map_err(|e| e.to_string())?;
    println!("saved baseline {name:?} to {}", path.display());
    Ok(ExitCode::SUCCESS)
}

fn sweep_command(args: SweepArgs) -> Result<ExitCode, String> {
    let chosen = runtimes(&args.selection, &[RuntimeId::WeftMt, RuntimeId::TokioMt])?;
    let workers = args.selection.workers.unwrap_or_else(default_workers);
    let grid = sweep::grid(&args.knobs);
    let contenders: Vec<Contender> = chosen.iter().flat_map(|&r| sweep::contenders(r, &grid, workers)).collect();
    let cells = micro_cells(false, &args.selection.filter, &contenders);
    if cells.is_empty() {
        return Err("the filter selects no workload".into());
    }
    let options = Options {
        reps: args.reps.max(1),
        warmup: args.warmup,
        quiet: args.selection.quiet,
        exe: this_exe()?,
        sample_timeout: Duration::from_secs(args.selection.sample_timeout),
    };
    eprintln!(
        "sweep: {} cells × {} settings × {} rounds",
        cells.len(),
        contenders.len(),
        options.reps + options.warmup
    );
    let measured = measure::run(&cells, &options);
    let best = sweep::best_settings(&measured);
    let table = sweep::render(&best);
    print!("{table}");
    let settings = Settings {
        workers,
        reps: options.reps,
        warmup: options.warmup,
        runtimes: contenders.iter().map(|c| c.label.clone()).collect(),
        filter: (!args.selection.filter.is_empty()).then(|| args.selection.filter.join(",")),
    };
    let results = results::assemble(&measured, Machine::detect(), "sweep", settings);
    let dir = args.out.join(format!("sweep-{}", timestamp_dir()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("results.json"), results.to_json()).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("sweep.json"), serde_json::to_string_pretty(&best).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    std::fs::write(dir.join("sweep.md"), format!("# weft-lab sweep\n\n{table}")).map_err(|e| e.to_string())?;
    println!("wrote {}/{{results.json,sweep.json,sweep.md}}", dir.display());
    Ok(if failures(&results).is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn report_command(dir: &Path) -> Result<ExitCode, String> {
    let path = dir.join("results.json");
    let results = Results::from_json(
        &std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
    )?;
    report::write_all(dir, &results).map_err(|e| e.to_string())?;
    print!("{}", report::terminal(&results));
    println!("wrote {}/{{report.md,report.html}}", dir.display());
    Ok(ExitCode::SUCCESS)
}

fn blocking_command(args: BlockingArgs) -> Result<ExitCode, String> {
    let chosen = runtimes(&args.selection, &[RuntimeId::WeftMt, RuntimeId::TokioMt, RuntimeId::Smol])?;
    let block = std::time::Duration::from_millis(args.block_ms);
    let rows = crate::blocking_resilience::measure(&chosen, args.rounds.max(1), args.tasks.max(1), block)?;
    let md = crate::blocking_resilience::markdown(&rows, args.rounds, args.tasks, block);
    print!("{md}");
    std::fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;
    std::fs::write(args.out.join("blocking.md"), &md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("blocking.json"), json).map_err(|e| e.to_string())?;
    println!("\nwrote {}/blocking.{{md,json}}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

fn lateness_command(args: LatenessArgs) -> Result<ExitCode, String> {
    let default = [RuntimeId::WeftMt, RuntimeId::WeftCt, RuntimeId::TokioMt, RuntimeId::TokioCt, RuntimeId::Smol];
    let chosen = runtimes(&args.selection, &default)?;
    let workers = args.selection.workers.unwrap_or_else(default_workers);
    let rows = crate::lateness::measure(&chosen, workers, args.rounds.max(1), args.timers.max(1))?;
    let md = crate::lateness::markdown(&rows, args.rounds, args.timers, workers);
    print!("{md}");
    std::fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;
    std::fs::write(args.out.join("lateness.md"), &md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("lateness.json"), json).map_err(|e| e.to_string())?;
    println!("\nwrote {}/lateness.{{md,json}}", args.out.display());
    let early: usize = rows.iter().map(|r| r.early).sum();
    Ok(if early == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn memory_command(args: MemoryArgs) -> Result<ExitCode, String> {
    let default = [RuntimeId::WeftMt, RuntimeId::TokioMt, RuntimeId::WeftCt, RuntimeId::TokioCt];
    let chosen = runtimes(&args.selection, &default)?;
    let workers = args.selection.workers.unwrap_or_else(default_workers);
    let rows = crate::memory_per_task::measure(&this_exe()?, &chosen, workers, args.rounds.max(1), args.tasks.max(1))?;
    let md = crate::memory_per_task::markdown(&rows, args.rounds.max(1), workers);
    print!("{md}");
    std::fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;
    std::fs::write(args.out.join("memory_per_task.md"), &md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("memory_per_task.json"), json).map_err(|e| e.to_string())?;
    println!("\nwrote {}/memory_per_task.{{md,json}}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

fn http_hello_command(args: HttpHelloArgs) -> Result<ExitCode, String> {
    let chosen = crate::http_hello::servers(&runtimes(&args.selection, &RuntimeId::ALL)?, args.hyper_timer);
    let workers = args.selection.workers.unwrap_or_else(default_workers);
    let duration = std::time::Duration::from_secs_f64(args.seconds.max(0.1));
    let most = args.connections.iter().max().copied().unwrap_or(1) + args.idle_connections.iter().max().unwrap_or(&0);
    crate::framework::idle_conns::raise_nofile(most as u64 + crate::framework::idle_conns::FD_SLACK)?;
    let mut rows = Vec::new();
    let mut md = String::new();
    for &connections in &args.connections {
        for &idle in &args.idle_connections {
            let sweep_rows = crate::http_hello::measure(
                &this_exe()?,
                &chosen,
                workers,
                connections.max(1),
                idle,
                duration,
                args.rounds,
            )?;
            md += &crate::http_hello::markdown(&sweep_rows, workers, connections, idle, duration, args.rounds.max(1));
            md += "\n";
            rows.extend(sweep_rows);
        }
    }
    print!("{md}");
    std::fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;
    std::fs::write(args.out.join("http_hello.md"), &md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("http_hello.json"), json).map_err(|e| e.to_string())?;
    println!("\nwrote {}/http_hello.{{md,json}}", args.out.display());
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    Ok(if errors == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn tcp_echo_command(args: TcpEchoArgs) -> Result<ExitCode, String> {
    let default = [RuntimeId::WeftMt, RuntimeId::WeftCt, RuntimeId::TokioMt, RuntimeId::TokioCt, RuntimeId::Smol];
    let chosen = runtimes(&args.selection, &default)?;
    let workers = args.selection.workers.unwrap_or_else(default_workers);
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
            let sweep_rows =
                crate::tcp_echo::measure(&exe, &chosen, workers, rounds, args.messages.max(1), connections, idle)?;
            md += &crate::tcp_echo::markdown(&sweep_rows, rounds, args.messages, workers, connections, idle);
            md += "\n";
            rows.extend(sweep_rows);
        }
    }
    print!("{md}");
    std::fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;
    std::fs::write(args.out.join("tcp_echo.md"), &md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("tcp_echo.json"), json).map_err(|e| e.to_string())?;
    println!("\nwrote {}/tcp_echo.{{md,json}}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

fn sample_command(args: SampleArgs) -> Result<ExitCode, String> {
    let runtime = RuntimeId::by_name(&args.runtime).ok_or_else(|| format!("unknown runtime {:?}", args.runtime))?;
    let workload = Workload::by_name(&args.workload).ok_or_else(|| format!("unknown workload {:?}", args.workload))?;
    let config = RtConfig {
        global_queue_interval: args.global_queue_interval,
        event_interval: args.event_interval,
        ..RtConfig::new(runtime.flavor(), args.workers)
    };
    measure::child_main(runtime, &config, workload, args.scale, args.warmup);
    Ok(ExitCode::SUCCESS)
}

fn actors_command(args: ActorsArgs) -> Result<ExitCode, String> {
    let peers: Vec<String> = if args.selection.runtimes.is_empty() {
        crate::actors::PEERS.iter().map(|p| p.to_string()).collect()
    } else {
        args.selection.runtimes.clone()
    };
    let options = crate::actors::ActorOptions {
        peers,
        filter: args.selection.filter.clone(),
        workers: args.selection.workers.unwrap_or_else(default_workers),
        reps: args.reps.max(1),
        warmup: args.warmup,
        percent: args.percent.max(1),
    };
    crate::actors::run(&options, &args.out, !args.selection.quiet)?;
    Ok(ExitCode::SUCCESS)
}
