//! weft-lab: the instrument that measures weft against tokio, smol and async-std.
//!
//! Bird's-eye view, in the order data flows:
//! - [`adapter`]: the small trait every runtime implements (spawn, join, yield, block_on,
//!   sleep, channels). [`runtimes`] has one file per runtime and the registry of names.
//! - [`workloads`]: every benchmark, written once, generic over the adapter, validating its own
//!   output.
//! - [`measure`]: builds a runtime per sample, interleaves runtimes round by round, shows
//!   progress; async-std samples run in a child process (`__sample`).
//! - [`stats`]: summaries, percentiles, seeded bootstrap CIs, Welch's t-test.
//! - [`results`]: `results.json` (schema 1) and the paired ratios; [`report`] renders the
//!   terminal table, `report.md` and `report.html` (plotters SVG charts).
//! - [`smoke`], [`baseline`], [`sweep`]: the CI check, regression baselines, knob grids.
//! - [`lateness`], [`memory_per_task`], [`http_hello`]: timer accuracy, RSS per idle task, and HTTP requests/s + latency with the
//!   server in a child process and the load generator in the parent.
//! - [`blocking_resilience`]: other tasks' scheduling latency while one task blocks a worker;
//!   [`block_in_place_bench`]: `block_in_place` throughput, weft vs tokio.
//! - [`console`]: `weft-lab console`, a live terminal view of a program's metrics endpoint.
//! - [`tune`]: `weft-lab tune -- COMMAND`, environment-knob grids over any command, with the
//!   runtime's own diagnosis from `WEFT_METRICS_DUMP`.
//! - [`cli`]: the command line.
//!
//! Architecture Invariant: workloads see runtimes only through [`adapter::Adapter`]; nothing in
//! `workloads/` names a runtime crate.
//!
//! Architecture Invariant: at most one runtime is alive while a sample is timed.

// Adapters spell out the trait's `-> impl Future + Send` signatures instead of `async fn`, so
// the Send bound each one promises is visible where it is implemented.
#![allow(clippy::manual_async_fn)]

pub mod actors;
pub mod agents;
pub mod block_in_place;
pub mod blocking_resilience;
pub mod cli;
pub mod console;
pub mod console_demo;
pub mod framework;
pub mod fs_bench;
pub mod http_hello;
pub mod lateness;
pub mod memory_per_task;
pub mod search;
pub mod tcp_echo;
pub mod tune;
