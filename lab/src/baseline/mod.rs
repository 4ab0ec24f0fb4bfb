//! `weft-lab baseline save NAME`: measure weft's micro rows (or take a run's
//! `results.json` with `--from DIR`) and keep them under `lab-baselines/` for
//! `micro --compare-baseline NAME`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::framework::regression;
use crate::framework::report;
use crate::framework::results::Results;
use crate::framework::runtimes::RuntimeId;
use crate::framework::suite::{failures, measure_suite, SuiteArgs};

#[derive(Subcommand, Debug)]
pub enum Args {
    /// Save a baseline: measure weft (default runtimes weft-mt,weft-ct), or copy --from DIR.
    Save {
        name: String,
        /// Save DIR/results.json instead of measuring.
        #[arg(long, value_name = "DIR")]
        from: Option<PathBuf>,
        #[command(flatten)]
        micro: SuiteArgs,
    },
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let Args::Save { name, from, micro: mut args } = args;
    let results = match from {
        Some(dir) => {
            let path = dir.join("results.json");
            Results::from_json(
                &std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            )?
        }
        None => {
            args.selection.runtimes.retain(|r| !r.is_empty());
            let results = measure_suite(&args, &[RuntimeId::WeftMt, RuntimeId::WeftCt])?;
            print!("{}", report::terminal(&results));
            results
        }
    };
    let failed = failures(&results);
    if !failed.is_empty() {
        return Err(format!("not saving a baseline with failed rows:\n  {}", failed.join("\n  ")));
    }
    let path = regression::save(&args.baseline_dir, &name, &results).map_err(|e| e.to_string())?;
    println!("saved baseline {name:?} to {}", path.display());
    Ok(ExitCode::SUCCESS)
}
