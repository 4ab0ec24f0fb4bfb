//! `weft-lab sweep --knob worker_threads=1,2 --knob global_queue_interval=31,61,127`: runs the
//! grid of knob settings (the cartesian product) for each runtime that has the knobs, plus the
//! runtime's default configuration, and reports the best setting per workload with its paired
//! ratio to the default.
//!
//! A runtime gets the grid projected onto the knobs it supports (tokio-mt has all three, smol
//! only `worker_threads`, a current-thread flavor no `worker_threads`); duplicate projections
//! are measured once. All settings of all runtimes in a cell are interleaved like `micro`.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::framework::measure::{Contender, Measured, Status};
use crate::framework::results::as_f64;
use crate::framework::runtimes::{Knob, RuntimeId};
use crate::framework::stats;

/// One `--knob name=v1,v2,…`.
#[derive(Clone, Debug, PartialEq)]
pub struct KnobSpec {
    pub knob: Knob,
    pub values: Vec<u32>,
}

/// Parses `name=v1,v2,…`.
pub fn parse_knob(text: &str) -> Result<KnobSpec, String> {
    let (name, values) = text.split_once('=').ok_or_else(|| format!("bad knob {text:?}: use name=v1,v2"))?;
    let knob = Knob::by_name(name.trim()).ok_or_else(|| {
        let known: Vec<&str> = Knob::ALL.iter().map(|k| k.name()).collect();
        format!("unknown knob {name:?} (known: {})", known.join(", "))
    })?;
    let values = values
        .split(',')
        .map(|v| v.trim().parse::<u32>().map_err(|_| format!("bad value {v:?} for {name}")))
        .collect::<Result<Vec<_>, _>>()?;
    if values.is_empty() || values.contains(&0) {
        return Err(format!("knob {name} needs positive values"));
    }
    Ok(KnobSpec { knob, values })
}

/// Every combination of the knobs' values.
pub fn grid(knobs: &[KnobSpec]) -> Vec<Vec<(Knob, u32)>> {
    let mut points = vec![Vec::new()];
    for spec in knobs {
        points = points
            .into_iter()
            .flat_map(|p| spec.values.iter().map(move |&v| [p.clone(), vec![(spec.knob, v)]].concat()))
            .collect();
    }
    points
}

/// The default contender of `runtime` followed by one per distinct supported grid point.
pub fn contenders(runtime: RuntimeId, grid: &[Vec<(Knob, u32)>], workers: usize) -> Vec<Contender> {
    let mut out = vec![Contender::default_for(runtime, workers)];
    for point in grid {
        let supported: Vec<(Knob, u32)> = point.iter().copied().filter(|&(k, _)| runtime.supports(k)).collect();
        if supported.is_empty() {
            continue;
        }
        let mut config = runtime.default_config(workers);
        for &(knob, value) in &supported {
            knob.apply(&mut config, value);
        }
        if out.iter().any(|c| c.config == config && c.label != runtime.name()) {
            continue;
        }
        let settings: Vec<String> = supported.iter().map(|(k, v)| format!("{}={v}", k.name())).collect();
        out.push(Contender { runtime, config, label: format!("{}[{}]", runtime.name(), settings.join(",")) });
    }
    out
}

/// The best setting of one runtime for one workload × scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Best {
    pub workload: String,
    pub scale: u64,
    pub runtime: String,
    pub default_median_ns: f64,
    /// The label of the fastest setting (may be the default itself).
    pub best: String,
    pub best_median_ns: f64,
    /// best ÷ default, median of paired samples.
    pub ratio_to_default: f64,
    pub ci95: [f64; 2],
}

/// Picks the fastest setting per (workload, scale, runtime) and its paired ratio to the default.
pub fn best_settings(measured: &[Measured]) -> Vec<Best> {
    let mut by_cell: BTreeMap<(String, u64, RuntimeId), Vec<&Measured>> = BTreeMap::new();
    for m in measured.iter().filter(|m| m.status == Status::Ok && !m.samples_ns.is_empty()) {
        by_cell.entry((m.workload.name().to_string(), m.scale, m.runtime)).or_default().push(m);
    }
    let mut out = Vec::new();
    for ((workload, scale, runtime), settings) in by_cell {
        let Some(default) = settings.iter().find(|m| m.label == runtime.name()) else { continue };
        let median = |m: &Measured| stats::median(&as_f64(&m.samples_ns));
        let best = settings.iter().min_by(|a, b| median(a).total_cmp(&median(b))).expect("non-empty");
        let pairs = best.samples_ns.len().min(default.samples_ns.len());
        let estimate = stats::paired_ratio(
            &as_f64(&best.samples_ns[..pairs]),
            &as_f64(&default.samples_ns[..pairs]),
            stats::BOOTSTRAP_SEED,
        );
        out.push(Best {
            workload,
            scale,
            runtime: runtime.name().to_string(),
            default_median_ns: median(default),
            best: best.label.clone(),
            best_median_ns: median(best),
            ratio_to_default: estimate.median,
            ci95: [estimate.ci95.0, estimate.ci95.1],
        });
    }
    out
}

/// The sweep summary as a markdown table (also printed to the terminal).
pub fn render(best: &[Best]) -> String {
    let mut out = String::from("| workload | scale | runtime | default | best setting | best | best ÷ default [95% CI] |\n|---|---|---|---|---|---|---|\n");
    for b in best {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.3}× [{:.3}, {:.3}] |",
            b.workload,
            b.scale,
            b.runtime,
            crate::framework::report::fmt_time(b.default_median_ns),
            b.best,
            crate::framework::report::fmt_time(b.best_median_ns),
            b.ratio_to_default,
            b.ci95[0],
            b.ci95[1]
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_is_the_cartesian_product_projected_per_runtime() {
        let knobs =
            vec![parse_knob("worker_threads=1,2").unwrap(), parse_knob("global_queue_interval=31,61,127").unwrap()];
        assert_eq!(grid(&knobs).len(), 6);
        assert_eq!(contenders(RuntimeId::TokioMt, &grid(&knobs), 2).len(), 7);
        // smol only has worker_threads: default + 2 distinct settings.
        let smol = contenders(RuntimeId::Smol, &grid(&knobs), 2);
        assert_eq!(
            smol.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(),
            ["smol", "smol[worker_threads=1]", "smol[worker_threads=2]"]
        );
        // tokio-ct has no worker_threads: default + 3 intervals.
        assert_eq!(contenders(RuntimeId::TokioCt, &grid(&knobs), 2).len(), 4);
        assert!(parse_knob("nonsense=1").is_err());
        assert!(parse_knob("worker_threads=0").is_err());
    }
}
