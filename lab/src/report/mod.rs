//! `weft-lab report DIR`: render `report.md` and `report.html` again from `DIR/results.json`
//! (after a renderer change, or for a results file copied from another machine).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::framework::report;
use crate::framework::results::Results;

/// `report DIR`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A run's directory, holding `results.json`.
    pub dir: PathBuf,
}

/// `sections` render the study sections a results file may carry.
pub fn run(args: Args, sections: &[report::Section]) -> Result<ExitCode, String> {
    let dir = &args.dir;
    let path = dir.join("results.json");
    let results = Results::from_json(
        &std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
    )?;
    report::write_all(dir, &results, sections).map_err(|e| e.to_string())?;
    print!("{}", report::terminal(&results));
    println!("wrote {}/{{report.md,report.html}}", dir.display());
    Ok(ExitCode::SUCCESS)
}
