//! `weft-lab serve-ollama`: the agents study's Ollama-compatible simulator
//! (`framework::ollama`) standalone on 127.0.0.1 until killed, for a client of one's own; or, with
//! `--capacity N`, a measurement of how many concurrent streams one simulator thread serves
//! at its nominal token rate (CI runs `--capacity 300`).

mod capacity;

use std::process::ExitCode;

use crate::framework::ollama::{Profile, Sim, SimConfig};
use crate::framework::results::default_workers;

/// `weft-lab serve-ollama`'s flags.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// First port; instances take consecutive ports.
    #[arg(long, default_value_t = 11434)]
    pub port: u16,
    #[arg(long, default_value_t = 1)]
    pub instances: usize,
    /// Slots per instance (OLLAMA_NUM_PARALLEL).
    #[arg(long, default_value_t = 1)]
    pub num_parallel: usize,
    /// Use the full (realistic) profile instead of the quick one.
    #[arg(long)]
    pub full: bool,
    /// Measure instead of serving: this many concurrent streams (quick profile) against a
    /// one-thread simulator; prints achieved vs nominal token rate and CPU per token, then exits.
    #[arg(long)]
    pub capacity: Option<usize>,
    /// Tokens per stream for `--capacity` (≤ 100, the quick profile's answer length).
    #[arg(long, default_value_t = 100)]
    pub capacity_predict: u32,
}

/// `weft-lab serve-ollama`: the simulator standalone until killed.
pub fn run(args: Args) -> Result<ExitCode, String> {
    if let Some(streams) = args.capacity {
        let workers = default_workers();
        let c = capacity::measure(streams, args.capacity_predict, workers)?;
        println!("{}", capacity::describe(&c, workers));
        return if c.ok_streams == c.streams { Ok(ExitCode::SUCCESS) } else { Err("some streams failed".into()) };
    }
    let mut config = SimConfig::new(if args.full { Profile::full() } else { Profile::quick() });
    config.port = args.port;
    config.instances = args.instances;
    config.num_parallel = args.num_parallel;
    let sim = Sim::start(config).map_err(|e| format!("starting the simulator on port {}: {e}", args.port))?;
    for u in sim.urls() {
        println!("Ollama-compatible simulator listening on {u} (model gemma3:latest)");
    }
    loop {
        std::thread::park();
    }
}
