//! The results file (`results.json`, schema 1) and how measurements become one.
//!
//! The field names of [`Results`], [`Row`] and [`RatioRow`] are a contract: tools and
//! baselines read them. Fields may be added (with `#[serde(default)]` so older files still
//! load); none may be renamed or removed without bumping [`SCHEMA`].
//!
//! Ratios are computed pair by pair: sample *i* of a weft runtime and sample *i* of its baseline
//! were taken in the same interleaved round, so the ratio of the two cancels slow drifts of the
//! machine. `median_ratio` is the median of those paired ratios and `ci95` its bootstrap
//! interval (see `stats`). weft-mt is compared with tokio-mt, smol and async-std; weft-ct with
//! tokio-ct.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::framework::measure::{Measured, Status};
use crate::framework::runtimes::RuntimeId;
use crate::framework::stats::{self, Summary};
use crate::framework::workloads::Workload;

/// The schema version this lab writes and reads.
pub const SCHEMA: u32 = 1;

/// One `results.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub schema: u32,
    pub machine: Machine,
    /// "quick" or "full".
    pub profile: String,
    #[serde(default)]
    pub created_utc: String,
    #[serde(default)]
    pub settings: Settings,
    pub results: Vec<Row>,
    pub ratios: Vec<RatioRow>,
    /// Parts a study adds beyond the rows (the agents study's tables), keyed by the study's
    /// name, each rendered by that study (`report::Section`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sections: BTreeMap<String, serde_json::Value>,
}

/// How the run was configured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub workers: usize,
    pub reps: usize,
    pub warmup: usize,
    pub runtimes: Vec<String>,
    #[serde(default)]
    pub filter: Option<String>,
}

/// Where the numbers come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    /// Logical CPUs the process may use.
    pub cores: usize,
    pub os: String,
    pub kernel: String,
    pub rustc: String,
    pub lab_version: String,
    #[serde(default)]
    pub git_commit: Option<String>,
    /// Crate → version(s) compiled in, from Cargo.lock.
    pub crates: BTreeMap<String, String>,
}

impl Machine {
    /// Describes this machine and build.
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name").and_then(|rest| rest.split_once(':')).map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let os = std::fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        let kernel =
            std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default();
        let git_commit = std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        let mut crates: BTreeMap<String, String> = BTreeMap::new();
        for entry in env!("WEFT_LAB_CRATES").split(';').filter(|e| !e.is_empty()) {
            if let Some((name, version)) = entry.split_once('=') {
                crates
                    .entry(name.to_string())
                    .and_modify(|v| *v = format!("{v}, {version}"))
                    .or_insert_with(|| version.to_string());
            }
        }
        Machine {
            cpu_model,
            cores: default_workers(),
            os,
            kernel,
            rustc: env!("WEFT_LAB_RUSTC").to_string(),
            lab_version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit,
            crates,
        }
    }
}

/// The machine's logical core count: every runtime's default worker count.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// One workload × scale × runtime.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub workload: String,
    pub scale: u64,
    pub runtime: String,
    /// "ok", "not yet" (the runtime lacks a feature) or "failed".
    #[serde(default = "ok")]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub group: String,
    /// Counted samples, in round order (sample i was taken in round i).
    pub samples_ns: Vec<u64>,
    /// Polls weft's long-poll monitor counted over the counted samples (over 10 ms on a worker:
    /// a workload whose one poll spawns a million tasks has them); 0 for other runtimes.
    #[serde(default)]
    pub long_polls: u64,
    /// Absent unless `status` is "ok".
    #[serde(flatten)]
    pub stats: Option<RowStats>,
}

fn ok() -> String {
    "ok".into()
}

/// Summary of a row's samples, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowStats {
    pub median_ns: f64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub p5_ns: f64,
    pub p95_ns: f64,
    pub p25_ns: f64,
    pub p75_ns: f64,
    pub cv: f64,
}

impl RowStats {
    pub fn of(samples_ns: &[u64]) -> Option<RowStats> {
        if samples_ns.is_empty() {
            return None;
        }
        let s = Summary::of(&as_f64(samples_ns));
        Some(RowStats {
            median_ns: s.median,
            mean_ns: s.mean,
            stddev_ns: s.stddev,
            min_ns: s.min,
            max_ns: s.max,
            p5_ns: s.p5,
            p95_ns: s.p95,
            p25_ns: s.p25,
            p75_ns: s.p75,
            cv: s.cv,
        })
    }
}

/// A weft runtime's time ÷ a baseline runtime's time (lower is better).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatioRow {
    pub workload: String,
    pub scale: u64,
    pub runtime: String,
    pub baseline: String,
    pub median_ratio: f64,
    pub ci95: [f64; 2],
    /// "win" (CI below 1), "lose" (CI above 1) or "tie".
    #[serde(default)]
    pub verdict: String,
    #[serde(default)]
    pub pairs: usize,
    /// Welch's t-test p-value of the two sample sets (two-sided).
    #[serde(default)]
    pub welch_p: Option<f64>,
}

pub fn as_f64(samples: &[u64]) -> Vec<f64> {
    samples.iter().map(|&s| s as f64).collect()
}

impl Row {
    pub fn from_measured(m: &Measured) -> Row {
        let (status, error) = match &m.status {
            Status::Ok => ("ok", None),
            Status::NotYet => ("not yet", None),
            Status::Failed(why) => ("failed", Some(why.clone())),
        };
        Row {
            workload: m.workload.name().to_string(),
            scale: m.scale,
            runtime: m.label.clone(),
            status: status.to_string(),
            error,
            group: m.workload.spec().group.name().to_string(),
            stats: if m.status == Status::Ok { RowStats::of(&m.samples_ns) } else { None },
            samples_ns: m.samples_ns.clone(),
            long_polls: m.long_polls,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.status == "ok" && self.stats.is_some()
    }

    pub fn median(&self) -> Option<f64> {
        self.stats.map(|s| s.median_ns)
    }
}

/// Paired ratio of `row` against `baseline` (both must be ok).
pub fn ratio(row: &Row, baseline: &Row) -> Option<RatioRow> {
    if !row.is_ok() || !baseline.is_ok() {
        return None;
    }
    let pairs = row.samples_ns.len().min(baseline.samples_ns.len());
    let (a, b) = (as_f64(&row.samples_ns[..pairs]), as_f64(&baseline.samples_ns[..pairs]));
    let estimate = stats::paired_ratio(&a, &b, stats::BOOTSTRAP_SEED);
    let verdict = match estimate.verdict() {
        Some(true) => "win",
        Some(false) => "lose",
        None => "tie",
    };
    Some(RatioRow {
        workload: row.workload.clone(),
        scale: row.scale,
        runtime: row.runtime.clone(),
        baseline: baseline.runtime.clone(),
        median_ratio: estimate.median,
        ci95: [estimate.ci95.0, estimate.ci95.1],
        verdict: verdict.to_string(),
        pairs,
        welch_p: stats::welch_t_test(&as_f64(&row.samples_ns), &as_f64(&baseline.samples_ns)).map(|w| w.p),
    })
}

/// Rows for every measurement, then every weft-vs-baseline ratio the rows allow.
pub fn assemble(measured: &[Measured], machine: Machine, profile: &str, settings: Settings) -> Results {
    let results: Vec<Row> = measured.iter().map(Row::from_measured).collect();
    let ratios = ratios_for(&results);
    Results {
        schema: SCHEMA,
        machine,
        profile: profile.to_string(),
        created_utc: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        settings,
        results,
        ratios,
        sections: BTreeMap::new(),
    }
}

/// All weft-vs-baseline ratios, in row order.
pub fn ratios_for(rows: &[Row]) -> Vec<RatioRow> {
    let mut out = Vec::new();
    for row in rows {
        let Some(id) = RuntimeId::by_name(&row.runtime) else { continue };
        for baseline in id.baselines() {
            let found = rows
                .iter()
                .find(|b| b.workload == row.workload && b.scale == row.scale && b.runtime == baseline.name());
            if let Some(r) = found.and_then(|b| ratio(row, b)) {
                out.push(r);
            }
        }
    }
    out
}

impl Results {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("results serialize")
    }

    pub fn from_json(text: &str) -> Result<Results, String> {
        let mut json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not a weft-lab results file: {e}"))?;
        // Files written before sections existed kept the agents study's part at the top level.
        if let Some(agents) = json.as_object_mut().and_then(|o| o.remove("agents")) {
            json["sections"]["agents"] = agents;
        }
        let results: Results = serde_json::from_value(json).map_err(|e| format!("not a weft-lab results file: {e}"))?;
        if results.schema != SCHEMA {
            return Err(format!("results schema {} is not the supported schema {SCHEMA}", results.schema));
        }
        Ok(results)
    }

    pub fn row(&self, workload: &str, scale: u64, runtime: &str) -> Option<&Row> {
        self.results.iter().find(|r| r.workload == workload && r.scale == scale && r.runtime == runtime)
    }

    /// The workloads present, in catalogue order, each with its scales in ascending order.
    pub fn cells(&self) -> Vec<(Workload, u64)> {
        let mut cells: Vec<(Workload, u64)> =
            self.results.iter().filter_map(|r| Workload::by_name(&r.workload).map(|w| (w, r.scale))).collect();
        cells.sort();
        cells.dedup();
        cells
    }

    /// Runtime labels present, in registry order (unknown labels last, as they appear).
    pub fn runtimes(&self) -> Vec<String> {
        let mut names: Vec<String> = RuntimeId::ALL
            .iter()
            .map(|r| r.name().to_string())
            .filter(|n| self.results.iter().any(|r| &r.runtime == n))
            .collect();
        for r in &self.results {
            if !names.contains(&r.runtime) {
                names.push(r.runtime.clone());
            }
        }
        names
    }
}
