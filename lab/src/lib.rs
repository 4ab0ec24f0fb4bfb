//! weft-lab
pub mod adapter;
pub mod runtimes;
pub mod workloads;
