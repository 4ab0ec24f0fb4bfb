//! One measuring round: every configuration `reps` times, interleaved (`grid::interleaved`),
//! then each configuration's median and its paired ratio to the default with a bootstrap CI
//! (`crate::framework::stats`), rendered as a table.
//!
//! Failures are first-class: a configuration whose run fails (non-zero exit, timeout, metric
//! not found) is marked failed with the reason, not run again, and shown in the table; its
//! samples are excluded from every comparison. The default failing ends `tune` with an error,
//! since nothing can be compared against it.

use std::fmt::Write as _;
use std::path::Path;

use super::diagnose::{read_dump, RunDump};
use super::grid::{interleaved, Config};
use super::runner::{run_once, Metric, RunError, Target};
use crate::framework::stats::{self, RatioEstimate};

/// One configuration's results in one round.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub config: Config,
    /// One value per successful run, in rep order.
    pub samples: Vec<f64>,
    /// The `WEFT_METRICS_DUMP` lines of each successful run.
    pub dumps: Vec<RunDump>,
    pub failure: Option<RunError>,
}

/// How to run and where to put the dump files.
pub struct Round<'a> {
    pub target: &'a Target<'a>,
    pub metric: &'a Metric,
    pub dump_dir: &'a Path,
    /// `r1`, `r2`: prefixes the dump file names.
    pub label: &'a str,
    /// Discarded runs of the default before the round (the first run of a round is often
    /// slow: cold page cache, CPU frequency, lazily loaded libraries).
    pub warmup: usize,
}

/// Runs `configs` (index 0 must be the default) `reps` times, interleaved. Err only when the
/// default fails.
pub fn run_round(round: &Round<'_>, configs: &[Config], reps: usize) -> Result<Vec<Outcome>, String> {
    let mut outcomes: Vec<Outcome> = configs
        .iter()
        .map(|c| Outcome { config: c.clone(), samples: Vec::new(), dumps: Vec::new(), failure: None })
        .collect();
    for w in 0..round.warmup {
        let dump = round.dump_dir.join(format!("{}-warmup-{w}.jsonl", round.label));
        let result = run_once(round.target, &configs[0].vars, round.metric, &dump);
        let _ = std::fs::remove_file(&dump);
        match result {
            Ok(value) => eprintln!(
                "[warm-up {}/{}] {} (discarded): {}",
                w + 1,
                round.warmup,
                configs[0],
                format_value(round.metric, value)
            ),
            Err(e) => return Err(default_failed(&e)),
        }
    }
    let order = interleaved(configs.len(), reps);
    for (k, &(rep, i)) in order.iter().enumerate() {
        if outcomes[i].failure.is_some() {
            continue;
        }
        let dump = round.dump_dir.join(format!("{}-c{i}-r{rep}.jsonl", round.label));
        let _ = std::fs::remove_file(&dump);
        let result = run_once(round.target, &configs[i].vars, round.metric, &dump);
        let dumped = read_dump(&dump);
        let progress = format!("[{}/{}] {} (rep {}):", k + 1, order.len(), configs[i], rep + 1);
        match result {
            Ok(value) => {
                eprintln!("{progress} {}", format_value(round.metric, value));
                outcomes[i].samples.push(value);
                outcomes[i].dumps.push(dumped);
            }
            Err(e) if configs[i].is_default() => return Err(default_failed(&e)),
            Err(e) => {
                eprintln!("{progress} FAILED: {e}");
                outcomes[i].failure = Some(e);
            }
        }
    }
    Ok(outcomes)
}

fn default_failed(e: &RunError) -> String {
    format!(
        "the default configuration (no knob variable set) failed: {e}. tune compares every \
         configuration with the default, so the command must succeed without any knob set"
    )
}

/// Whether a ratio (configuration ÷ default) is surely better (`Some(true)`), surely worse
/// (`Some(false)`) or a tie within noise (`None`: the 95% CI contains 1).
pub fn improves(ratio: &RatioEstimate, higher_is_better: bool) -> Option<bool> {
    ratio.verdict().map(|lower| lower != higher_is_better)
}

/// The paired ratio of `outcome` to the default (`None` for a failed configuration).
pub fn ratio_to_default(outcome: &Outcome, default: &Outcome) -> Option<RatioEstimate> {
    if outcome.failure.is_some() || outcome.samples.len() != default.samples.len() {
        return None;
    }
    Some(stats::paired_ratio(&outcome.samples, &default.samples, stats::BOOTSTRAP_SEED))
}

/// The round's table: configuration, median, ratio to the default with its 95% CI, verdict.
pub fn table(outcomes: &[Outcome], metric: &Metric, higher_is_better: bool) -> String {
    let default = &outcomes[0];
    let width = outcomes.iter().map(|o| o.config.to_string().len()).max().unwrap_or(7).max(13);
    let mut out = String::new();
    let _ = writeln!(out, "  {:<width$}  {:>12}  {:>7}  {:<18}  verdict", "configuration", "median", "ratio", "95% CI");
    for o in outcomes {
        let name = o.config.to_string();
        if let Some(e) = &o.failure {
            let _ = writeln!(out, "  {name:<width$}  FAILED: {e} (excluded)");
            continue;
        }
        let median = format_value(metric, stats::median(&o.samples));
        if o.config.is_default() {
            let _ = writeln!(out, "  {name:<width$}  {median:>12}  {:>7}", "1.000");
            continue;
        }
        let Some(r) = ratio_to_default(o, default) else { continue };
        let verdict = match improves(&r, higher_is_better) {
            Some(true) => "better (CI excludes 1)",
            Some(false) => "worse (CI excludes 1)",
            None => "tie",
        };
        let ci = format!("[{:.3}, {:.3}]", r.ci95.0, r.ci95.1);
        let _ = writeln!(out, "  {name:<width$}  {median:>12}  {:>7.3}  {ci:<18}  {verdict}", r.median);
    }
    out
}

/// A metric value for humans: times in s/ms, other numbers as they are.
pub fn format_value(metric: &Metric, v: f64) -> String {
    if !metric.is_time() {
        return format!("{v}");
    }
    if v >= 1.0 {
        format!("{v:.3} s")
    } else {
        format!("{:.2} ms", v * 1e3)
    }
}
