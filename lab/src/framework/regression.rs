//! Baselines: a saved `results.json` (`lab-baselines/NAME.json`, meant to be committed) and the
//! regression check `micro --compare-baseline NAME --threshold 10%`.
//!
//! A weft row regresses when it is slower than the baseline's row beyond the threshold *and*
//! beyond its confidence interval: the whole 95% bootstrap CI of current ÷ baseline (ratio of
//! medians) lies above `1 + threshold`. A slowdown whose interval still reaches below the
//! threshold is reported but not flagged: on a small shared machine a lone slow sample of a
//! microsecond workload must not fail CI. The two runs are different processes at different
//! times, so their samples are not paired: the CI resamples each side independently
//! ([`stats::unpaired_ratio`]). Rows missing on either side, or not "ok", are not compared.

use std::path::{Path, PathBuf};

use crate::framework::results::{as_f64, Results};
use crate::framework::runtimes::RuntimeId;
use crate::framework::stats::{self, RatioEstimate};

/// Where `NAME` is stored under `dir`.
pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

/// Saves `results` as baseline `name`.
pub fn save(dir: &Path, name: &str, results: &Results) -> std::io::Result<PathBuf> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(std::io::Error::other(format!("bad baseline name {name:?}")));
    }
    std::fs::create_dir_all(dir)?;
    let path = path(dir, name);
    std::fs::write(&path, results.to_json())?;
    Ok(path)
}

/// Loads baseline `name`.
pub fn load(dir: &Path, name: &str) -> Result<Results, String> {
    let path = path(dir, name);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
    Results::from_json(&text)
}

/// One weft row compared with its baseline.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub workload: String,
    pub scale: u64,
    pub runtime: String,
    pub baseline_median_ns: f64,
    pub current_median_ns: f64,
    /// current ÷ baseline.
    pub ratio: RatioEstimate,
    pub regressed: bool,
}

/// `10%`, `10` or `0.1` → 0.10.
pub fn parse_threshold(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let (number, percent) = match trimmed.strip_suffix('%') {
        Some(n) => (n, true),
        None => (trimmed, false),
    };
    let value: f64 = number.trim().parse().map_err(|_| format!("bad threshold {text:?} (use e.g. 10%)"))?;
    let fraction = if percent || value >= 1.0 { value / 100.0 } else { value };
    if !(0.0..10.0).contains(&fraction) {
        return Err(format!("threshold {text:?} out of range"));
    }
    Ok(fraction)
}

/// Compares every weft row of `current` with the same row of `baseline`.
pub fn compare(current: &Results, baseline: &Results, threshold: f64) -> Vec<Comparison> {
    let mut out = Vec::new();
    for row in &current.results {
        if !RuntimeId::by_name(&row.runtime).is_some_and(RuntimeId::is_weft) || !row.is_ok() {
            continue;
        }
        let Some(base) = baseline.row(&row.workload, row.scale, &row.runtime).filter(|b| b.is_ok()) else { continue };
        let ratio = stats::unpaired_ratio(&as_f64(&row.samples_ns), &as_f64(&base.samples_ns), stats::BOOTSTRAP_SEED);
        let regressed = ratio.ci95.0 > 1.0 + threshold;
        out.push(Comparison {
            workload: row.workload.clone(),
            scale: row.scale,
            runtime: row.runtime.clone(),
            baseline_median_ns: base.median().unwrap_or(f64::NAN),
            current_median_ns: row.median().unwrap_or(f64::NAN),
            ratio,
            regressed,
        });
    }
    out
}

/// The comparison as text, regressions marked.
pub fn render(comparisons: &[Comparison], name: &str, threshold: f64) -> String {
    let mut out =
        format!("compared with baseline {name:?} (regression: whole 95% CI above +{:.0}%)\n", threshold * 100.0);
    for c in comparisons {
        out.push_str(&format!(
            "{:<10} {:<22} {:>9} {:<9} baseline {:>10} now {:>10}  {:.3}× [{:.3}, {:.3}]\n",
            if c.regressed { "REGRESSED" } else { "ok" },
            c.workload,
            c.scale,
            c.runtime,
            crate::framework::report::fmt_time(c.baseline_median_ns),
            crate::framework::report::fmt_time(c.current_median_ns),
            c.ratio.median,
            c.ratio.ci95.0,
            c.ratio.ci95.1
        ));
    }
    if comparisons.is_empty() {
        out.push_str("no weft rows in common with the baseline\n");
    }
    out
}
