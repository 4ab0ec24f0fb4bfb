//! The study's statistics and tables, after TR115 (*Technical Report 115 v2: Rust Async Runtime
//! Performance Deep Dive*, docs/notes/reference-reports.md): its per-runtime summary (peak, mean,
//! median, σ, min, CV, percentiles, CI95, Welch's t vs tokio-default), per-config and within-config
//! tables with the report's published values beside ours, and the fleet-scaling table. Also the
//! `agents` section of `results.json`.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::study::{FleetRecord, RunRecord};
use crate::framework::stats;

/// One `summary` row of `results.json`'s `agents` section.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SummaryRow {
    pub runtime: String,
    /// `"all"` or a config id.
    pub config: String,
    pub runs: usize,
    pub mean_efficiency_pct: f64,
    pub peak_efficiency_pct: f64,
    pub median_efficiency_pct: f64,
    pub sd_pp: f64,
    pub min_efficiency_pct: f64,
    pub cv_pct: f64,
    pub p5_pct: f64,
    pub p25_pct: f64,
    pub p75_pct: f64,
    pub p95_pct: f64,
    pub ci95_pct: [f64; 2],
    pub welch_p_vs_tokio_default: Option<f64>,
    /// Efficiency against the measured sequential baseline (not TR115's estimate).
    pub mean_measured_efficiency_pct: f64,
    pub failed_runs: usize,
    pub contention_runs: usize,
    /// Σ agent times ÷ (agents × the slowest agent's time), mean %: the efficiency a runtime with
    /// no overhead at all would report for these runs (the agents finish apart by themselves).
    #[serde(default)]
    pub mean_balance_pct: f64,
    /// Wall time − the slowest agent's time, mean ms: what the run added around its agents.
    #[serde(default)]
    pub mean_overhead_ms: f64,
}

/// `results.json`'s `agents` section.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AgentsSection {
    pub profile: String,
    pub server: String,
    pub spawn: String,
    pub coordinator: String,
    pub summary: Vec<SummaryRow>,
    pub runs: Vec<RunRecord>,
    pub fleet: Vec<FleetRecord>,
    #[serde(default)]
    pub notes: Vec<String>,
}

fn row(runtime: &str, config: &str, runs: &[&RunRecord], tokio: &[f64]) -> SummaryRow {
    let ok: Vec<&RunRecord> = runs.iter().copied().filter(|r| !r.failed).collect();
    let eff: Vec<f64> = ok.iter().map(|r| r.efficiency_pct).collect();
    let measured: Vec<f64> = ok.iter().map(|r| r.measured_efficiency_pct).collect();
    let s = stats::Summary::of(&eff);
    let nan = |v: f64| if eff.is_empty() { f64::NAN } else { v };
    SummaryRow {
        runtime: runtime.into(),
        config: config.into(),
        runs: runs.len(),
        mean_efficiency_pct: nan(s.mean),
        peak_efficiency_pct: nan(s.max),
        median_efficiency_pct: nan(s.median),
        sd_pp: nan(s.stddev),
        min_efficiency_pct: nan(s.min),
        cv_pct: nan(s.cv * 100.0),
        p5_pct: nan(s.p5),
        p25_pct: nan(s.p25),
        p75_pct: nan(s.p75),
        p95_pct: nan(s.p95),
        ci95_pct: {
            let (lo, hi) = stats::bootstrap_ci(&eff, stats::mean, 2000, 115, 0.95);
            [lo, hi]
        },
        welch_p_vs_tokio_default: if runtime == "tokio-default" {
            None
        } else {
            stats::welch_t_test(&eff, tokio).map(|w| w.p)
        },
        mean_measured_efficiency_pct: if measured.is_empty() { f64::NAN } else { stats::mean(&measured) },
        failed_runs: runs.len() - ok.len(),
        contention_runs: ok.iter().filter(|r| r.contention).count(),
        mean_balance_pct: mean_of(&ok, |r, slowest| {
            r.per_agent.iter().map(|a| a.total_s).sum::<f64>() / (r.per_agent.len() as f64 * slowest) * 100.0
        }),
        mean_overhead_ms: mean_of(&ok, |r, slowest| (r.wall_s - slowest) * 1e3),
    }
}

/// Mean of `f(run, slowest agent's seconds)` over runs with agents; NaN when there are none.
fn mean_of(runs: &[&RunRecord], f: impl Fn(&RunRecord, f64) -> f64) -> f64 {
    let v: Vec<f64> = runs
        .iter()
        .filter_map(|r| {
            let slowest = r.per_agent.iter().map(|a| a.total_s).fold(0.0, f64::max);
            (slowest > 0.0).then(|| f(r, slowest))
        })
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        stats::mean(&v)
    }
}

/// Summary rows: per runtime over all configs, then per runtime × config.
pub fn summarize(runs: &[RunRecord]) -> Vec<SummaryRow> {
    let mut runtimes: Vec<&str> = Vec::new();
    let mut configs: Vec<&str> = Vec::new();
    for r in runs {
        if !runtimes.contains(&r.runtime.as_str()) {
            runtimes.push(&r.runtime);
        }
        if !configs.contains(&r.config.as_str()) {
            configs.push(&r.config);
        }
    }
    let tokio_eff = |config: Option<&str>| -> Vec<f64> {
        runs.iter()
            .filter(|r| r.runtime == "tokio-default" && !r.failed && config.iter().all(|&c| c == r.config))
            .map(|r| r.efficiency_pct)
            .collect()
    };
    let mut out = Vec::new();
    for rt in &runtimes {
        let sel: Vec<&RunRecord> = runs.iter().filter(|r| r.runtime == *rt).collect();
        out.push(row(rt, "all", &sel, &tokio_eff(None)));
    }
    for c in &configs {
        for rt in &runtimes {
            let sel: Vec<&RunRecord> = runs.iter().filter(|r| r.runtime == *rt && r.config == *c).collect();
            out.push(row(rt, c, &sel, &tokio_eff(Some(c))));
        }
    }
    out
}

/// TR115's published overall row: peak, mean, median, σ, min, CV, P5, P25, P75, P95.
fn tr115_overall(runtime: &str) -> Option<[f64; 10]> {
    Some(match runtime {
        "tokio-default" => [99.89, 98.72, 99.11, 1.21, 94.80, 1.2, 95.35, 98.24, 99.53, 99.88],
        "tokio-localset" => [99.99, 97.95, 99.40, 4.03, 81.03, 4.1, 86.43, 97.96, 99.71, 99.98],
        "smol-1kb" => [99.94, 98.61, 98.86, 1.32, 94.98, 1.3, 95.43, 98.21, 99.74, 99.92],
        "smol" => [99.87, 97.72, 98.84, 4.87, 72.80, 5.0, 93.37, 97.91, 99.53, 99.79],
        "async-std" => [50.00, 50.00, 50.00, 0.00, 49.99, 0.0, 49.99, 50.00, 50.00, 50.00],
        _ => return None,
    })
}

/// TR115's appendix-A per-config means (the report's appendix does not agree with its own
/// overall table; both are quoted as published).
fn tr115_config_mean(runtime: &str, config: &str) -> Option<f64> {
    let i = super::study::CONFIGS.iter().position(|c| c.id == config)?;
    let v: [f64; 6] = match runtime {
        "tokio-default" => [96.9, 96.2, 95.4, 96.9, 98.8, 97.0],
        "tokio-localset" => [95.5, 95.1, 96.6, 95.9, 86.4, 98.1],
        "smol-1kb" => [94.0, 93.7, 94.9, 94.4, 86.3, 98.3],
        "smol" => [92.3, 91.8, 94.2, 93.4, 88.2, 93.9],
        "async-std" => [49.99; 6],
        _ => return None,
    };
    Some(v[i])
}

fn tr115_within_sd(runtime: &str) -> Option<(f64, f64)> {
    Some(match runtime {
        "tokio-default" => (2.8, 5.2),
        "tokio-localset" => (3.4, 7.1),
        "smol-1kb" => (3.1, 5.9),
        "smol" => (1.9, 3.4),
        "async-std" => (0.0, 0.0),
        _ => return None,
    })
}

fn f2(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "–".into()
    }
}

fn p(v: Option<f64>) -> String {
    match v {
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
        None => "–".into(),
    }
}

/// The Markdown section.
pub fn markdown(section: &AgentsSection) -> String {
    let (runs, fleet) = (&section.runs, &section.fleet);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## agents — TR115's multi-agent study ({} profile, server: {}, spawn {}, coordinator {})\n",
        section.profile, section.server, section.spawn, section.coordinator
    );
    let _ = writeln!(md, "Efficiency = speedup ÷ agents; TR115's speedup = Σ agent times ÷ wall (its \"sequential estimate\"); \"measured\" = the same agents run one after another right after, ÷ wall. TR115 columns are the report's published values (real Ollama on a GPU; ours run against the simulator).\n");
    let _ = writeln!(md, "### Overall (all configs)\n\n| runtime | runs | failed | peak % | mean % | median % | σ pp | min % | CV % | CI95 of mean | Welch p vs tokio-default | measured eff. % | TR115 peak / mean / σ / min |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|");
    for r in section.summary.iter().filter(|r| r.config == "all") {
        let tr = tr115_overall(&r.runtime)
            .map(|t| format!("{:.2} / {:.2} / {:.2} / {:.2}", t[0], t[1], t[3], t[4]))
            .unwrap_or_else(|| "(not in TR115)".into());
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | [{}, {}] | {} | {} | {} |",
            r.runtime,
            r.runs,
            r.failed_runs,
            f2(r.peak_efficiency_pct),
            f2(r.mean_efficiency_pct),
            f2(r.median_efficiency_pct),
            f2(r.sd_pp),
            f2(r.min_efficiency_pct),
            f2(r.cv_pct),
            f2(r.ci95_pct[0]),
            f2(r.ci95_pct[1]),
            p(r.welch_p_vs_tokio_default),
            f2(r.mean_measured_efficiency_pct),
            tr
        );
    }
    let _ = writeln!(md, "\n### Where the lost efficiency goes\n\nTR115's efficiency = balance × (slowest agent ÷ wall): *balance* = Σ agent times ÷ (agents × the slowest agent's time), what a runtime with no overhead at all would score on these runs (two agents finishing 3 ms apart in a 0.33 s run cost 0.5 pp; heterogeneous configs give the agents different speeds by design, and a runtime that finishes one agent sooner *lowers* the score); *overhead* = wall − slowest agent, what the runtime added around its agents.\n\n| runtime | mean eff. % | mean balance % | mean wall − slowest agent (ms) |\n|---|---:|---:|---:|");
    for r in section.summary.iter().filter(|r| r.config == "all") {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            r.runtime,
            f2(r.mean_efficiency_pct),
            f2(r.mean_balance_pct),
            f2(r.mean_overhead_ms)
        );
    }
    let _ = writeln!(md, "\n### Percentiles of efficiency (ours | TR115)\n\n| runtime | P5 | P25 | P50 | P75 | P95 |\n|---|---|---|---|---|---|");
    for r in section.summary.iter().filter(|r| r.config == "all") {
        let t = tr115_overall(&r.runtime);
        let cell = |ours: f64, i: usize| match t {
            Some(t) => format!("{} \\| {:.2}", f2(ours), t[i]),
            None => f2(ours),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            r.runtime,
            cell(r.p5_pct, 6),
            cell(r.p25_pct, 7),
            cell(r.median_efficiency_pct, 2),
            cell(r.p75_pct, 8),
            cell(r.p95_pct, 9)
        );
    }
    let _ = writeln!(md, "\n### Per config: mean % (peak %) | TR115 appendix-A mean\n");
    let configs: Vec<&str> = {
        let mut v: Vec<&str> = Vec::new();
        for r in section.summary.iter().filter(|r| r.config != "all") {
            if !v.contains(&r.config.as_str()) {
                v.push(&r.config);
            }
        }
        v
    };
    let _ = writeln!(md, "| runtime | {} |\n|---|{}", configs.join(" | "), "---|".repeat(configs.len()));
    for overall in section.summary.iter().filter(|r| r.config == "all") {
        let mut line = format!("| {} |", overall.runtime);
        for c in &configs {
            let r = section.summary.iter().find(|r| r.runtime == overall.runtime && r.config == *c);
            let ours =
                r.map(|r| format!("{} ({})", f2(r.mean_efficiency_pct), f2(r.peak_efficiency_pct))).unwrap_or_default();
            let tr = tr115_config_mean(&overall.runtime, c).map(|v| format!(" \\| {v:.1}")).unwrap_or_default();
            line += &format!(" {ours}{tr} |");
        }
        let _ = writeln!(md, "{line}");
    }
    let _ = writeln!(md, "\n### Within-config σ (pp): mean / max over configs (ours | TR115)\n\n| runtime | mean σ | max σ |\n|---|---|---|");
    for overall in section.summary.iter().filter(|r| r.config == "all") {
        let sds: Vec<f64> = section
            .summary
            .iter()
            .filter(|r| r.runtime == overall.runtime && r.config != "all" && r.sd_pp.is_finite())
            .map(|r| r.sd_pp)
            .collect();
        let (m, x) = if sds.is_empty() { (f64::NAN, f64::NAN) } else { (stats::mean(&sds), stats::max(&sds)) };
        let tr = tr115_within_sd(&overall.runtime);
        let _ = writeln!(
            md,
            "| {} | {}{} | {}{} |",
            overall.runtime,
            f2(m),
            tr.map(|t| format!(" \\| {:.1}", t.0)).unwrap_or_default(),
            f2(x),
            tr.map(|t| format!(" \\| {:.1}", t.1)).unwrap_or_default()
        );
    }
    let failed: Vec<&RunRecord> = runs.iter().filter(|r| r.failed).collect();
    if !failed.is_empty() {
        let _ = writeln!(md, "\n### Failed runs (excluded from the statistics)\n");
        for r in failed {
            let _ = writeln!(
                md,
                "- {} {} run {}: {}",
                r.runtime,
                r.config,
                r.run + 1,
                r.error.as_deref().unwrap_or("failed")
            );
        }
    }
    if !fleet.is_empty() {
        let _ = writeln!(md, "\n### Fleet scaling (a task per agent, no coordinator, fixed server capacity)\n\n| agents | runtime | efficiency % | measured eff. % | p50 TTFT ms | p99 TTFT ms | tokens | client CPU ms | simulator CPU ms | client CPU ns/token | ÷ tokio-default | failed agents |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for f in fleet {
            let tokio = fleet.iter().find(|t| t.agents == f.agents && t.runtime == "tokio-default");
            let ratio = tokio.map(|t| f2(f.cpu_ns_per_token / t.cpu_ns_per_token)).unwrap_or_else(|| "–".into());
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {:.1} | {:.1} | {} | {:.0} | {:.0} | {:.0} | {} | {} |",
                f.agents,
                f.runtime,
                f2(f.efficiency_pct),
                f2(f.measured_efficiency_pct),
                f.p50_ttft_ms,
                f.p99_ttft_ms,
                f.tokens,
                f.client_cpu_ms,
                f.sim_cpu_ms,
                f.cpu_ns_per_token,
                ratio,
                f.failed_agents
            );
        }
    }
    for n in &section.notes {
        let _ = writeln!(md, "\n- {n}");
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::study::AgentRecord;

    fn run(wall_s: f64, agents: &[f64]) -> RunRecord {
        let est: f64 = agents.iter().sum();
        RunRecord {
            runtime: "weft-mt".into(),
            config: "c".into(),
            agents: agents.len(),
            run: 0,
            wall_s,
            sequential_estimated_s: est,
            sequential_measured_s: est,
            efficiency_pct: est / wall_s / agents.len() as f64 * 100.0,
            measured_efficiency_pct: 0.0,
            contention: false,
            failed: false,
            error: None,
            per_agent: agents
                .iter()
                .map(|&t| AgentRecord {
                    name: "a".into(),
                    total_s: t,
                    ttft_ms: vec![],
                    client_tok_s: vec![],
                    server_tok_s: vec![],
                    eval_count: vec![],
                    error: None,
                })
                .collect(),
        }
    }

    #[test]
    fn lost_efficiency_splits_into_balance_and_overhead() {
        // Run 1: agents 0.30 s and 0.40 s, wall 0.41 s → balance 87.5 %, overhead 10 ms.
        // Run 2: agents 0.40 s and 0.40 s, wall 0.40 s → balance 100 %, overhead 0 ms.
        let runs = [run(0.41, &[0.30, 0.40]), run(0.40, &[0.40, 0.40])];
        let all = &summarize(&runs)[0];
        assert_eq!(all.config, "all");
        assert!((all.mean_balance_pct - 93.75).abs() < 1e-9, "{}", all.mean_balance_pct);
        assert!((all.mean_overhead_ms - 5.0).abs() < 1e-9, "{}", all.mean_overhead_ms);
        // Efficiency is their product, run by run.
        let eff = (0.70 / 0.82 * 100.0 + 100.0) / 2.0;
        assert!((all.mean_efficiency_pct - eff).abs() < 1e-9);
        let md = markdown(&AgentsSection { summary: summarize(&runs), runs: runs.to_vec(), ..Default::default() });
        assert!(md.contains("| weft-mt | 92.68 | 93.75 | 5.00 |"), "{md}");
    }
}
