//! Smoke checks: every micro workload once, at a tiny size, on every runtime, outputs
//! validated, and the hooks through which each study adds its own checks. Fast enough for CI
//! (`weft-lab smoke`); any failure makes it exit non-zero. Each check runs in its own
//! `__sample` child with a timeout, so a runtime that crashes or hangs fails its check instead
//! of taking the smoke run down with it. "not yet" rows (a runtime lacking a
//! feature, e.g. weft's channels) are counted as skipped, not failed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::framework::measure::{self, Contender};
use crate::framework::report::fmt_time;
use crate::framework::runtimes::RuntimeId;
use crate::framework::selection::selected;
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

/// The tally of a smoke run. Every check, whichever study it belongs to, ends as one line
/// through [`SmokeReport::check`].
#[derive(Clone, Debug, Default)]
pub struct SmokeReport {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// `what: why` for each failure.
    pub failures: Vec<String>,
    pub lines: Vec<String>,
    /// Print each line as it is recorded.
    pub verbose: bool,
}

impl SmokeReport {
    pub fn new(verbose: bool) -> Self {
        SmokeReport { verbose, ..Default::default() }
    }

    pub fn ok(&self) -> bool {
        self.failed == 0
    }

    /// `smoke: 90 passed, 0 failed, 3 skipped` (the closing line CI reads).
    pub fn summary(&self) -> String {
        format!("smoke: {} passed, {} failed, {} skipped", self.passed, self.failed, self.skipped)
    }

    /// Records one check: `what` names it (aligned columns: study/workload, size, runtime);
    /// `Ok(Some(detail))` passed, `Ok(None)` is "not yet" (the runtime or peer lacks what the
    /// check needs: skipped, not failed), `Err(why)` failed.
    pub fn check(&mut self, what: &str, outcome: Result<Option<String>, String>) {
        let line = match outcome {
            Ok(Some(detail)) => {
                self.passed += 1;
                format!("ok       {what} {detail}").trim_end().to_string()
            }
            Ok(None) => {
                self.skipped += 1;
                format!("not yet  {what}").trim_end().to_string()
            }
            Err(why) => {
                self.failed += 1;
                self.failures.push(format!("{}: {why}", what.split_whitespace().collect::<Vec<_>>().join(" ")));
                format!("FAILED   {what} {why}")
            }
        };
        if self.verbose {
            println!("{line}");
        }
        self.lines.push(line);
    }
}

/// A study's smoke checks: `weft-lab smoke` runs `run` when its filter selects `name`. The
/// command line's root lists the hooks, so no study names another.
#[derive(Clone, Copy)]
pub struct SmokeHook {
    pub name: &'static str,
    pub run: fn(&SmokeOptions, &mut SmokeReport),
}

/// The micro workloads' checks: each workload once at its smoke size on every selected runtime,
/// each in its own `__sample` child with a timeout.
pub fn workloads(options: &SmokeOptions, report: &mut SmokeReport) {
    for spec in SPECS.iter().filter(|s| selected(s.name, &options.filter)) {
        for &runtime in &options.runtimes {
            let contender = Contender::default_for(runtime, options.workers);
            let start = Instant::now();
            let outcome =
                measure::child_sample(&contender, spec.workload, spec.smoke, &options.exe, false, options.timeout);
            let wall = start.elapsed();
            let what = format!("{:<22} {:>6} {:<10}", spec.name, spec.smoke, runtime.name());
            report.check(
                &what,
                match outcome {
                    Outcome::Time(t) => Ok(Some(format!(
                        "{:>10} (child {})",
                        fmt_time(t.as_nanos() as f64),
                        fmt_time(wall.as_nanos() as f64)
                    ))),
                    Outcome::NotYet => Ok(None),
                    Outcome::Failed(why) => Err(why),
                },
            );
        }
    }
}

/// Runs the workloads' checks, then every hook the filter selects.
pub fn run(options: &SmokeOptions, hooks: &[SmokeHook]) -> SmokeReport {
    let mut report = SmokeReport::new(options.verbose);
    workloads(options, &mut report);
    for hook in hooks.iter().filter(|h| selected(h.name, &options.filter)) {
        (hook.run)(options, &mut report);
    }
    report
}
