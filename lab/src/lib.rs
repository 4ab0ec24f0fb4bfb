//! weft-lab: the instrument that measures weft against tokio, smol, async-std and the actor
//! frameworks, side by side, with honest statistics.
//!
//! Two kinds of module: the measuring framework, and one folder per subcommand (its name with
//! `-` → `_`), each exporting its `Args`, its `run`, and its hidden child entry point
//! (`ChildArgs`, `run_child`, the command `__STUDY`) if it has one. [`cli`] is the command enum,
//! one line per subcommand, and the registry of what studies lend the framework (smoke hooks,
//! report sections); a test there fails when a subcommand, its folder and this map disagree.
//! The framework names no study and no study names another (`tests/module_graph.rs`).
//!
//! Framework ([`framework`]), in the order data flows:
//! - `adapter`: the small trait every runtime implements (spawn, join, yield, block_on, sleep,
//!   channels, net); `runtimes` has one adapter per runtime and the registry of names.
//! - `workloads`: the micro suite, each workload written once against the adapter and checking
//!   its own output.
//! - `suite`, `measure`: the micro suite as a run; a fresh runtime per sample, runtimes
//!   interleaved round by round, child processes where a runtime cannot be torn down
//!   (`__sample`).
//! - `stats`, `results`, `report`: summaries and bootstrap CIs, `results.json` with paired
//!   ratios and study sections, the terminal table, `report.md` and `report.html`.
//! - `regression`, `knobs`, `checks`: regression baselines, knob grids, smoke checks.
//! - `selection`, `memory`, `idle_conns`, `ollama`: the flags every study shares; RSS and
//!   parked tasks; idle connections held open by a child process; the Ollama simulator and
//!   the streamed call over any runtime.
//!
//! Studies (one per subcommand):
//! - [`micro`]: the micro suite and its report (the default command).
//! - [`smoke`]: every workload once at a tiny size, outputs validated (CI).
//! - [`baseline`]: save a run as a regression baseline.
//! - [`sweep`]: the micro cells under a grid of runtime knobs.
//! - [`report`]: re-render a run's reports from its `results.json`.
//! - [`lateness`]: timer lateness p50/p99/max per runtime.
//! - [`memory_per_task`]: RSS per live idle task.
//! - [`memory_burst`]: RSS kept after a burst of parked tasks ends, while the runtime idles.
//! - [`fuzz`]: every cargo-fuzz target for a fixed time (executions, findings).
//! - [`soak`]: a server per runtime under mixed load for minutes, watched for growth.
//! - [`blocking_resilience`]: other tasks' latency while one task blocks a worker.
//! - [`block_in_place`]: `block_in_place` throughput, weft vs tokio.
//! - [`tcp_echo`]: TCP echo messages/s and round-trip latency, idle connections optional.
//! - [`http_hello`]: a hyper hello server per runtime under the lab's client or wrk, per-round ratios.
//! - [`axum_ab`]: one axum service on the real tokio and patched to weft, under wrk.
//! - [`data_ab`]: an axum service over PostgreSQL and Redis, real tokio vs patched to weft, under wrk.
//! - [`zenoh_ab`]: Zenoh itself, real tokio vs patched to weft: put throughput, get round trips.
//! - [`fs_bench`]: `weft::fs` vs `tokio::fs`.
//! - [`agents`]: the multi-agent LLM study against the embedded Ollama simulator.
//! - [`serve_ollama`]: that simulator standalone, or its capacity measured.
//! - [`actors`]: weft-actor against kameo, ractor, actix and plain tasks.
//! - [`actors_remote`]: actors across two processes, weft-actor-remote against raw Zenoh.
//! - [`search`]: the Claude Code session search, its corpus generator and engine bench.
//! - [`console`]: a live terminal view of a program's metrics endpoint.
//! - [`console_demo`]: a weft program to watch with `console`.
//! - [`tune`]: environment-knob grids over any command, with the runtime's diagnosis.
//!
//! Architecture Invariant: workloads see runtimes only through
//! [`framework::adapter::Adapter`]; nothing in `framework/workloads/` names a runtime crate.
//!
//! Architecture Invariant: at most one runtime is alive while a sample is timed.

// Adapters spell out the trait's `-> impl Future + Send` signatures instead of `async fn`, so
// the Send bound each one promises is visible where it is implemented.
#![allow(clippy::manual_async_fn)]

pub mod actors;
pub mod actors_remote;
pub mod agents;
pub mod axum_ab;
pub mod baseline;
pub mod block_in_place;
pub mod blocking_resilience;
pub mod cli;
pub mod console;
pub mod console_demo;
pub mod data_ab;
pub mod framework;
pub mod fs_bench;
pub mod fuzz;
pub mod http_hello;
pub mod lateness;
pub mod memory_burst;
pub mod memory_per_task;
pub mod micro;
pub mod report;
pub mod search;
pub mod serve_ollama;
pub mod smoke;
pub mod soak;
pub mod sweep;
pub mod tcp_echo;
pub mod tune;
pub mod zenoh_ab;
