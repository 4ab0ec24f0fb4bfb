//! `weft-lab micro` (and `weft-lab` with no arguments): the micro suite — every selected
//! workload at the profile's scales on every selected runtime, interleaved, written as
//! `results.json`, `report.md` and `report.html` under a timestamped directory and `latest/`,
//! optionally compared with a saved baseline ([`crate::framework::suite`] is the run itself).

use std::process::ExitCode;

use crate::framework::regression;
use crate::framework::report;
use crate::framework::runtimes::RuntimeId;
use crate::framework::suite::{failures, measure_suite, write_run};

pub use crate::framework::suite::SuiteArgs as Args;

pub fn run(args: Args) -> Result<ExitCode, String> {
    let threshold = regression::parse_threshold(&args.threshold)?;
    let baseline =
        args.compare_baseline.as_deref().map(|name| regression::load(&args.baseline_dir, name)).transpose()?;
    let results = measure_suite(&args, &RuntimeId::ALL)?;
    print!("{}", report::terminal(&results));
    let dir = write_run(&args.out, &results)?;
    println!("wrote {}/{{results.json,report.md,report.html}} and {}/latest/", dir.display(), args.out.display());
    if let Some(path) = &args.json {
        std::fs::write(path, results.to_json()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let mut code = ExitCode::SUCCESS;
    let failed = failures(&results);
    if !failed.is_empty() {
        eprintln!("{} failed workload run(s):\n  {}", failed.len(), failed.join("\n  "));
        code = ExitCode::FAILURE;
    }
    if let (Some(base), Some(name)) = (baseline, &args.compare_baseline) {
        let comparisons = regression::compare(&results, &base, threshold);
        print!("{}", regression::render(&comparisons, name, threshold));
        let regressed: Vec<String> = comparisons
            .iter()
            .filter(|c| c.regressed)
            .map(|c| format!("{} {} {}", c.workload, c.scale, c.runtime))
            .collect();
        if !regressed.is_empty() {
            eprintln!("regressions against baseline {name:?}: {}", regressed.join("; "));
            code = ExitCode::FAILURE;
        }
    }
    Ok(code)
}
