//! The command line: one variant per subcommand, each holding that study's `Args`, and one
//! line per variant calling that study's `run` (or a hidden child entry point's `run_child`).
//! `weft-lab` with no arguments runs the quick micro suite. Every subcommand lives in the
//! folder of its name (`-` → `_`); the module map in `lib.rs` lists them, and the test below
//! keeps the three in step.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::framework::checks::SmokeHook;
use crate::framework::report::Section;
use crate::framework::{idle_conns, measure};
use crate::{
    actors, actors_remote, agents, axum_ab, baseline, block_in_place, blocking_resilience, console, console_demo,
    data_ab, fs_bench, fuzz, http_hello, lateness, memory_burst, memory_per_task, micro, report, search, serve_ollama,
    smoke, soak, sweep, tcp_echo, tune, zenoh_ab,
};

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
    micro: micro::Args,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the micro suite (quick profile unless --full) and write a report.
    Micro(micro::Args),
    /// Every workload once at a tiny size on every runtime, outputs validated (for CI).
    Smoke(smoke::Args),
    /// Manage regression baselines.
    #[command(subcommand)]
    Baseline(baseline::Args),
    /// Run a grid of runtime knobs and report the best setting per workload.
    Sweep(sweep::Args),
    /// Re-render report.md and report.html from DIR/results.json.
    Report(report::Args),
    /// Timer lateness (p50/p99/max of elapsed − requested) per runtime.
    Lateness(lateness::Args),
    /// RSS growth per live idle task (each parked on a oneshot) per runtime.
    MemoryPerTask(memory_per_task::Args),
    /// RSS kept after a burst of 1M parked tasks ends, sampled while the runtime idles.
    MemoryBurst(memory_burst::Args),
    /// Every cargo-fuzz target (nightly) for a fixed time: executions and findings.
    Fuzz(fuzz::Args),
    /// One server per runtime under mixed load for N minutes; fails if RSS, fds, threads,
    /// tasks or p99 grow, or a request fails.
    Soak(soak::Args),
    /// Scheduling latency of other tasks while one task blocks a worker (weft with
    /// compensation on and off, tokio, smol).
    BlockingResilience(blocking_resilience::Args),
    /// Throughput of async work mixed with `block_in_place`, weft vs tokio (interleaved).
    BlockInPlace(block_in_place::Args),
    /// TCP echo over loopback: messages/s and round-trip p50/p99/p99.9 per runtime.
    TcpEcho(tcp_echo::Args),
    /// hyper HTTP/1.1 hello server per runtime (child process) under a fixed load generator.
    HttpHello(http_hello::Args),
    /// One axum service built on the real tokio and patched to weft, A/B under wrk (plain, and
    /// with a route that blocks its worker).
    AxumAb(axum_ab::Args),
    /// One axum service querying PostgreSQL (pooled) and Redis, built on the real tokio and
    /// patched to weft, A/B under wrk (the lab starts both servers on loopback).
    DataAb(data_ab::Args),
    /// Zenoh itself on the real tokio and patched to weft: put throughput and get round trips
    /// between two processes.
    ZenohAb(zenoh_ab::Args),
    /// weft::fs vs tokio::fs: BufReader lines, whole-file reads, directory walk.
    FsBench(fs_bench::Args),
    /// TR115's multi-agent LLM study on every runtime (embedded Ollama simulator by default).
    Agents(agents::Args),
    /// The Ollama-compatible simulator, standalone on 127.0.0.1.
    ServeOllama(serve_ollama::Args),
    /// Actor classics: weft-actor against kameo, ractor, actix and plain tokio tasks.
    Actors(actors::Args),
    /// Actors across two processes: weft-actor-remote against raw Zenoh (tell, ask, lookup,
    /// failure detection).
    ActorsRemote(actors_remote::Args),
    /// Search Claude Code transcripts (QUERY), generate a corpus (gen-corpus), or bench engines (bench).
    Search(search::Args),
    /// Live terminal view of a weft program's metrics endpoint (`weft::metrics::serve`).
    Console(console::Args),
    /// A weft program to watch with `console`: a task with 50 ms blocking polls, timers, I/O.
    ConsoleDemo(console_demo::Args),
    /// Run COMMAND under a grid of runtime environment variables; print the best setting,
    /// its ratio to the default with a CI, the lines to deploy it, and the runtime's diagnosis.
    Tune(tune::Args),
    // Child entry points, hidden: a study's is `__STUDY` and is that study's `ChildArgs` and
    // `run_child`; the framework's are `__sample` and `__idle-holder`.
    /// Internal: take one sample in this process and print `ok <ns>`.
    #[command(name = "__sample", hide = true)]
    Sample(measure::ChildArgs),
    /// Internal: hold idle connections for `http-hello`/`tcp-echo`.
    #[command(name = "__idle-holder", hide = true)]
    IdleHolder(idle_conns::ChildArgs),
    /// Internal: one `memory-per-task` round in this (fresh) process; prints `ok <bytes>`.
    #[command(name = "__memory-per-task", hide = true)]
    MemoryPerTaskChild(memory_per_task::ChildArgs),
    /// Internal: one bytes-per-idle-actor sample in this (fresh) process; prints `ok <bytes>`.
    #[command(name = "__actors", hide = true)]
    ActorsChild(actors::ChildArgs),
    /// Internal: one burst round in this (fresh) process.
    #[command(name = "__memory-burst", hide = true)]
    MemoryBurstChild(memory_burst::ChildArgs),
    /// Internal: one soak server until killed.
    #[command(name = "__soak", hide = true)]
    SoakChild(soak::ChildArgs),
    /// Internal: one `http-hello` server until killed.
    #[command(name = "__http-hello", hide = true)]
    HttpHelloChild(http_hello::ChildArgs),
    /// Internal: run one agents batch (plan on stdin, JSON reply on stdout); async-std's rows.
    #[command(name = "__agents", hide = true)]
    AgentsChild(agents::ChildArgs),
}

/// Each study's own smoke checks, run by `weft-lab smoke` after the micro workloads'.
const SMOKE_HOOKS: &[SmokeHook] = &[
    SmokeHook { name: "agents", run: agents::smoke },
    SmokeHook { name: "actors", run: actors::smoke },
    SmokeHook { name: "search", run: search::smoke },
];

/// The study sections a `results.json` may carry, for `weft-lab report`.
const SECTIONS: &[Section] = &[agents::SECTION];

/// Entry point of the binary: exit 2 with `error: …` on any error.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        None => micro::run(cli.micro),
        Some(Command::Micro(a)) => micro::run(a),
        Some(Command::Smoke(a)) => smoke::run(a, SMOKE_HOOKS),
        Some(Command::Baseline(a)) => baseline::run(a),
        Some(Command::Sweep(a)) => sweep::run(a),
        Some(Command::Report(a)) => report::run(a, SECTIONS),
        Some(Command::Lateness(a)) => lateness::run(a),
        Some(Command::MemoryPerTask(a)) => memory_per_task::run(a),
        Some(Command::MemoryBurst(a)) => memory_burst::run(a),
        Some(Command::Fuzz(a)) => fuzz::run(a),
        Some(Command::Soak(a)) => soak::run(a),
        Some(Command::BlockingResilience(a)) => blocking_resilience::run(a),
        Some(Command::BlockInPlace(a)) => block_in_place::run(a),
        Some(Command::TcpEcho(a)) => tcp_echo::run(a),
        Some(Command::HttpHello(a)) => http_hello::run(a),
        Some(Command::AxumAb(a)) => axum_ab::run(a),
        Some(Command::DataAb(a)) => data_ab::run(a),
        Some(Command::ZenohAb(a)) => zenoh_ab::run(a),
        Some(Command::FsBench(a)) => fs_bench::run(a),
        Some(Command::Agents(a)) => agents::run(a),
        Some(Command::ServeOllama(a)) => serve_ollama::run(a),
        Some(Command::Actors(a)) => actors::run(a),
        Some(Command::ActorsRemote(a)) => actors_remote::run(a),
        Some(Command::Search(a)) => search::run(a),
        Some(Command::Console(a)) => console::run(a),
        Some(Command::ConsoleDemo(a)) => console_demo::run(a),
        Some(Command::Tune(a)) => tune::run(a),
        Some(Command::Sample(a)) => measure::run_child(a),
        Some(Command::IdleHolder(a)) => idle_conns::run_child(a),
        Some(Command::MemoryPerTaskChild(a)) => memory_per_task::run_child(a),
        Some(Command::ActorsChild(a)) => actors::run_child(a),
        Some(Command::MemoryBurstChild(a)) => memory_burst::run_child(a),
        Some(Command::SoakChild(a)) => soak::run_child(a),
        Some(Command::HttpHelloChild(a)) => http_hello::run_child(a),
        Some(Command::AgentsChild(a)) => agents::run_child(a),
    };
    match outcome {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use clap::CommandFactory;

    /// Every public subcommand, as its folder's module name (`memory-per-task` → `memory_per_task`).
    fn subcommands() -> BTreeSet<String> {
        super::Cli::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set())
            .map(|c| c.get_name().replace('-', "_"))
            .collect()
    }

    /// The folders under `lab/src/` (each a module), other than the framework.
    fn study_folders() -> BTreeSet<String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        std::fs::read_dir(&src)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .filter(|name| name != "framework")
            .collect()
    }

    /// The modules `lib.rs`'s `//!` map links as studies: `- [`name`]` lines under "Studies".
    fn mapped_studies() -> BTreeSet<String> {
        let lib = include_str!("lib.rs");
        let map: String = lib.lines().take_while(|l| l.starts_with("//!")).map(|l| format!("{l}\n")).collect();
        let studies = map.split("Studies").nth(1).expect("lib.rs's map has a \"Studies\" part");
        studies
            .split("[`")
            .skip(1)
            .map(|rest| rest.split('`').next().unwrap().to_string())
            .filter(|name| !name.contains("::"))
            .collect()
    }

    #[test]
    fn every_hidden_child_is_named_for_its_study_or_the_framework() {
        let studies: BTreeSet<String> = subcommands().into_iter().map(|s| s.replace('_', "-")).collect();
        for c in super::Cli::command().get_subcommands().filter(|c| c.is_hide_set()) {
            let name = c.get_name();
            let study = name.strip_prefix("__").unwrap_or_else(|| panic!("hidden command {name} lacks the __ prefix"));
            assert!(
                studies.contains(study) || ["sample", "idle-holder"].contains(&study),
                "hidden command {name} is neither __STUDY nor one of the framework's children"
            );
        }
    }

    #[test]
    fn every_subcommand_has_its_folder_and_every_folder_is_a_subcommand() {
        let commands = subcommands();
        let folders = study_folders();
        for c in &commands {
            assert!(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(c).join("mod.rs").is_file(),
                "subcommand {c} has no folder lab/src/{c}/"
            );
        }
        assert_eq!(folders, commands, "lab/src folders (left) vs public subcommands (right)");
    }

    #[test]
    fn the_module_map_names_every_study_and_nothing_else() {
        assert_eq!(mapped_studies(), subcommands(), "lib.rs's study map (left) vs public subcommands (right)");
    }
}
