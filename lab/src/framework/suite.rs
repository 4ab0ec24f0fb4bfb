//! The micro suite as a run: its flags (profile, repetitions, output, baseline comparison,
//! runtime selection), its cells (selected workloads × the profile's scales × contenders), one
//! measured run assembled into [`Results`], and the timestamped directory it is written to.
//! `micro` runs it and reports; `baseline save` keeps a run; `sweep` measures its quick cells
//! under a knob grid.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::framework::measure::{self, Cell, Contender, Options};
use crate::framework::report;
use crate::framework::results::{self, Machine, Results, Settings};
use crate::framework::runtimes::RuntimeId;
use crate::framework::selection::{selected, this_exe, Selection};
use crate::framework::workloads::SPECS;

/// The micro suite's flags (`weft-lab micro`, and `weft-lab` with no subcommand).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SuiteArgs {
    /// Run every scale, with more samples.
    #[arg(long)]
    pub full: bool,
    /// Counted samples per runtime and cell (default: 5 quick, 10 full).
    #[arg(long)]
    pub reps: Option<usize>,
    /// Discarded warm-up rounds per cell (default: 1 quick, 2 full).
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Also write results.json to this path.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Results root: writes OUT/<UTC timestamp>/ and OUT/latest/.
    #[arg(long, default_value = "lab-results")]
    pub out: PathBuf,
    /// Compare weft's rows with baseline NAME; exit non-zero on a regression.
    #[arg(long, value_name = "NAME")]
    pub compare_baseline: Option<String>,
    /// Regression threshold for --compare-baseline.
    #[arg(long, default_value = "10%")]
    pub threshold: String,
    /// Where baselines live.
    #[arg(long, default_value = "lab-baselines")]
    pub baseline_dir: PathBuf,
    #[command(flatten)]
    pub selection: Selection,
}

/// The cells of a micro run: selected workloads × profile scales × contenders.
pub fn cells(full: bool, filter: &[String], contenders: &[Contender]) -> Vec<Cell> {
    SPECS
        .iter()
        .filter(|s| selected(s.name, filter))
        .flat_map(|s| (if full { s.full } else { s.quick }).iter().map(move |&scale| (s.workload, scale)))
        .map(|(workload, scale)| Cell { workload, scale, contenders: contenders.to_vec() })
        .collect()
}

pub fn measure_suite(args: &SuiteArgs, default_runtimes: &[RuntimeId]) -> Result<Results, String> {
    let (chosen, workers) = args.selection.resolve(default_runtimes)?;
    let contenders: Vec<Contender> = chosen.iter().map(|&r| Contender::default_for(r, workers)).collect();
    let cells = cells(args.full, &args.selection.filter, &contenders);
    if cells.is_empty() {
        return Err("the filter selects no workload".into());
    }
    let options = Options {
        reps: args.reps.unwrap_or(if args.full { 10 } else { 5 }).max(1),
        warmup: args.warmup.unwrap_or(if args.full { 2 } else { 1 }),
        quiet: args.selection.quiet,
        exe: this_exe()?,
        sample_timeout: Duration::from_secs(args.selection.sample_timeout),
    };
    let measured = measure::run(&cells, &options);
    let settings = Settings {
        workers,
        reps: options.reps,
        warmup: options.warmup,
        runtimes: chosen.iter().map(|r| r.name().to_string()).collect(),
        filter: (!args.selection.filter.is_empty()).then(|| args.selection.filter.join(",")),
    };
    Ok(results::assemble(&measured, Machine::detect(), if args.full { "full" } else { "quick" }, settings))
}

/// `lab-results/2026-11-22T13-24-31Z`-style directory name for now.
pub fn timestamp_dir() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string().replace(':', "-")
}

/// Writes the report into OUT/<timestamp>/ and OUT/latest/ (and keeps OUT out of git).
pub fn write_run(out: &Path, results: &Results) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let ignore = out.join(".gitignore");
    if !ignore.exists() {
        let _ = std::fs::write(&ignore, "# weft-lab results are not committed (baselines live in lab-baselines/)\n*\n");
    }
    let dir = out.join(timestamp_dir());
    let latest = out.join("latest");
    let _ = std::fs::remove_dir_all(&latest);
    for d in [&dir, &latest] {
        report::write_all(d, results, &[]).map_err(|e| format!("cannot write {}: {e}", d.display()))?;
    }
    Ok(dir)
}

pub fn failures(results: &Results) -> Vec<String> {
    results
        .results
        .iter()
        .filter(|r| r.status == "failed")
        .map(|r| format!("{} {} {}: {}", r.workload, r.scale, r.runtime, r.error.as_deref().unwrap_or("failed")))
        .collect()
}
