//! weft-lab
pub mod adapter;
pub mod stats;
pub mod runtimes;
pub mod workloads;
