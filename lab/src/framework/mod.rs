//! The measuring framework every study stands on: the runtime adapter and one adapter per
//! runtime, the micro workloads written once against it, sampling (fresh runtime per sample,
//! interleaved rounds, child processes), statistics, `results.json`, the rendered reports,
//! baselines, knob sweeps, the smoke check, the idle-connection holders the network
//! studies share, and the separately built programs under `lab/services/`. Nothing in here is a subcommand; the study folders beside it are.

pub mod adapter;
pub mod baseline;
pub mod datastores;
pub mod http1;
pub mod idle_conns;
pub mod measure;
pub mod report;
pub mod results;
pub mod runtimes;
pub mod selection;
pub mod service_ab;
pub mod services;
pub mod smoke;
pub mod stats;
pub mod sweep;
pub mod workloads;
pub mod wrk;
