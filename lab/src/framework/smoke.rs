//! `weft-lab smoke`: every workload once, at a tiny size, on every runtime, outputs validated.
//! Fast enough for CI; any failure makes it exit non-zero. Each check runs in its own
//! `__sample` child with a timeout, so a runtime that crashes or hangs fails its check instead
//! of taking the smoke run down with it. "not yet" rows (a runtime lacking a
//! feature, e.g. weft's channels) are counted as skipped, not failed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::framework::measure::{self, Contender};
use crate::framework::report::fmt_time;
use crate::framework::runtimes::RuntimeId;
use crate::framework::workloads::{Outcome, SPECS};

/// What to smoke-test.
#[derive(Clone, Debug)]
pub struct SmokeOptions {
    pub runtimes: Vec<RuntimeId>,
    /// Substring filters on workload names (empty = all).
    pub filter: Vec<String>,
    pub workers: usize,
    /// The `weft-lab` binary, for child-process runtimes.
    pub exe: PathBuf,
    /// Print one line per run as it finishes.
    pub verbose: bool,
    /// Per-check limit; a check still running is killed and fails.
    pub timeout: Duration,
}

/// The tally of a smoke run.
#[derive(Clone, Debug, Default)]
pub struct SmokeReport {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// `workload scale runtime: why` for each failure.
    pub failures: Vec<String>,
    pub lines: Vec<String>,
}

impl SmokeReport {
    pub fn ok(&self) -> bool {
        self.failed == 0
    }

    /// `smoke: 90 passed, 0 failed, 3 skipped` (the closing line CI reads).
    pub fn summary(&self) -> String {
        format!("smoke: {} passed, {} failed, {} skipped", self.passed, self.failed, self.skipped)
    }
}

/// Whether `name` passes the filters: substrings, or exact names written `=NAME`.
pub fn selected(name: &str, filter: &[String]) -> bool {
    filter.is_empty()
        || filter.iter().any(|f| match f.strip_prefix('=') {
            Some(exact) => name == exact,
            None => name.contains(f.as_str()),
        })
}

/// Runs the smoke test.
pub fn run(options: &SmokeOptions) -> SmokeReport {
    let mut report = SmokeReport::default();
    for spec in SPECS.iter().filter(|s| selected(s.name, &options.filter)) {
        for &runtime in &options.runtimes {
            let contender = Contender::default_for(runtime, options.workers);
            let start = Instant::now();
            let outcome =
                measure::child_sample(&contender, spec.workload, spec.smoke, &options.exe, false, options.timeout);
            let wall = start.elapsed();
            let line = match &outcome {
                Outcome::Time(t) => {
                    report.passed += 1;
                    format!(
                        "ok       {:<22} {:>6} {:<10} {:>10} (child {})",
                        spec.name,
                        spec.smoke,
                        runtime.name(),
                        fmt_time(t.as_nanos() as f64),
                        fmt_time(wall.as_nanos() as f64)
                    )
                }
                Outcome::NotYet => {
                    report.skipped += 1;
                    format!("not yet  {:<22} {:>6} {:<10}", spec.name, spec.smoke, runtime.name())
                }
                Outcome::Failed(why) => {
                    report.failed += 1;
                    report.failures.push(format!("{} {} {}: {why}", spec.name, spec.smoke, runtime.name()));
                    format!("FAILED   {:<22} {:>6} {:<10} {why}", spec.name, spec.smoke, runtime.name())
                }
            };
            if options.verbose {
                println!("{line}");
            }
            report.lines.push(line);
        }
    }
    if selected("agents", &options.filter) {
        for (runtime, outcome) in crate::agents::command::smoke(options.workers, &options.exe) {
            let line = match outcome {
                Ok(()) => {
                    report.passed += 1;
                    format!("ok       {:<22} {:>6} {runtime:<10}", "agents", 2)
                }
                Err(why) => {
                    report.failed += 1;
                    report.failures.push(format!("agents 2 {runtime}: {why}"));
                    format!("FAILED   {:<22} {:>6} {runtime:<10} {why}", "agents", 2)
                }
            };
            if options.verbose {
                println!("{line}");
            }
            report.lines.push(line);
        }
    }
    report
}

#[cfg(test)]
mod tests {
    #[test]
    fn filters_match_substrings_or_exact_names() {
        let f = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        assert!(super::selected("chained_spawn", &f("spawn")));
        assert!(!super::selected("chained_spawn", &f("=spawn")));
        assert!(super::selected("spawn", &f("=spawn,ring")));
        assert!(super::selected("anything", &[]));
    }
}
