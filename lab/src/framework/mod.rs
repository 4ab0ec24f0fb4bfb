//! The measuring framework every study stands on. Nothing in here is a subcommand, and nothing
//! in here names a study: the study folders beside it stand on it, and the command line's root
//! (`cli.rs`) hands it what it needs from them (smoke hooks, report sections).
//!
//! - `adapter`, `runtimes`: the small trait every runtime implements, one adapter per runtime.
//! - `workloads`, `suite`: the micro workloads written once against it; the micro suite as a
//!   run (flags, cells, results).
//! - `measure`, `stats`, `results`, `report`: sampling (a fresh runtime per sample,
//!   interleaved rounds, child processes), statistics, `results.json`, the rendered reports.
//! - `regression`, `knobs`, `checks`: saved baselines and the regression check, knob grids,
//!   smoke checks.
//! - `selection`, `memory`, `http1`, `wrk`, `idle_conns`: the flags every study shares, RSS and
//!   parked tasks, a blocking HTTP/1.1 client, the load generator, idle connections held open
//!   by a child process.
//! - `services`, `service_ab`, `datastores`: the separately built programs under
//!   `lab/services/`, A/B runs of one service on two runtimes, the data stores they talk to.

pub mod adapter;
pub mod checks;
pub mod datastores;
pub mod http1;
pub mod idle_conns;
pub mod knobs;
pub mod measure;
pub mod memory;
pub mod ollama;
pub mod regression;
pub mod report;
pub mod results;
pub mod runtimes;
pub mod selection;
pub mod service_ab;
pub mod services;
pub mod stats;
pub mod suite;
pub mod workloads;
pub mod wrk;
