//! `weft-lab sweep --knob NAME=V1,V2 …`: the quick micro cells under every combination of
//! runtime knobs, and the best setting per workload with its ratio to the default.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::framework::knobs;
use crate::framework::measure::{self, Contender, Options};
use crate::framework::results::{self, Machine, Settings};
use crate::framework::runtimes::RuntimeId;
use crate::framework::selection::{this_exe, Selection};
use crate::framework::suite::{cells, failures, timestamp_dir};

/// `weft-lab sweep`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A knob and its values, e.g. worker_threads=1,2 (repeatable).
    #[arg(long = "knob", required = true, value_parser = knobs::parse_knob)]
    pub knobs: Vec<knobs::KnobSpec>,
    /// Counted samples per setting and cell.
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    #[arg(long, default_value = "lab-results")]
    pub out: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (chosen, workers) = args.selection.resolve(&[RuntimeId::WeftMt, RuntimeId::TokioMt])?;
    let grid = knobs::grid(&args.knobs);
    let contenders: Vec<Contender> = chosen.iter().flat_map(|&r| knobs::contenders(r, &grid, workers)).collect();
    let cells = cells(false, &args.selection.filter, &contenders);
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
    let best = knobs::best_settings(&measured);
    let table = knobs::render(&best);
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
