//! Reports: the terminal table, `report.md` and `report.html`, all rendered from one
//! [`Table`] model built out of a [`Results`], so the three always agree.
//!
//! One table per workload group. Columns: the median time per runtime, then weft's paired ratio
//! to each baseline with its 95% CI and a verdict: win (CI below 1), lose (CI above 1) or tie
//! (CI crosses 1). In the spawn group, `spawn_outside` and `spawn_inside` rows alternate scale by
//! scale and are labelled with where the spawns come from, so the two methods sit side by side.

mod charts;
mod html;
mod markdown;

use std::path::Path;

pub use html::escape as escape_html;

use crate::framework::measure::scale_label;
use crate::framework::results::{RatioRow, Results};
use crate::framework::runtimes::RuntimeId;
use crate::framework::workloads::{Group, Workload};

/// What a runtime's cell in a table shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Time(f64),
    NotYet,
    Failed(String),
    Missing,
}

/// One workload × scale line of a table.
#[derive(Clone, Debug)]
pub struct TableRow {
    pub workload: Workload,
    pub scale: u64,
    /// One per [`Table::runtimes`].
    pub values: Vec<Value>,
    /// One per [`Table::pairs`].
    pub ratios: Vec<Option<RatioRow>>,
}

impl TableRow {
    /// `spawn_outside 1M (from block_on)`.
    pub fn label(&self) -> String {
        let how = match self.workload {
            Workload::SpawnOutside => " (from block_on)",
            Workload::SpawnInside => " (from a worker)",
            _ => "",
        };
        format!("{} {}{how}", self.workload.name(), scale_label(self.scale))
    }
}

/// One group's table.
#[derive(Clone, Debug)]
pub struct Table {
    pub group: Group,
    pub runtimes: Vec<String>,
    /// (runtime, baseline) column pairs.
    pub pairs: Vec<(String, String)>,
    pub rows: Vec<TableRow>,
}

/// Every (weft runtime, baseline) pair whose runtimes are both present.
pub fn pairs_of(runtimes: &[String]) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for name in runtimes {
        if let Some(id) = RuntimeId::by_name(name) {
            for b in id.baselines() {
                if runtimes.iter().any(|r| r == b.name()) {
                    pairs.push((name.clone(), b.name().to_string()));
                }
            }
        }
    }
    pairs
}

/// Builds the per-group tables of `results` (groups without rows are left out).
pub fn tables(results: &Results) -> Vec<Table> {
    let runtimes = results.runtimes();
    let pairs = pairs_of(&runtimes);
    let mut cells = results.cells();
    // Group order; inside the spawn group, spawn_outside / spawn_inside alternate scale by scale.
    cells.sort_by_key(|&(w, s)| match w {
        Workload::SpawnOutside | Workload::SpawnInside => (w.spec().group, 0, s, w, 0),
        _ => (w.spec().group, 1, 0, w, s),
    });
    Group::ALL
        .into_iter()
        .filter_map(|group| {
            let rows: Vec<TableRow> = cells
                .iter()
                .filter(|(w, _)| w.spec().group == group)
                .map(|&(workload, scale)| TableRow {
                    workload,
                    scale,
                    values: runtimes.iter().map(|rt| value(results, workload, scale, rt)).collect(),
                    ratios: pairs
                        .iter()
                        .map(|(rt, base)| {
                            results
                                .ratios
                                .iter()
                                .find(|r| {
                                    r.workload == workload.name()
                                        && r.scale == scale
                                        && &r.runtime == rt
                                        && &r.baseline == base
                                })
                                .cloned()
                        })
                        .collect(),
                })
                .collect();
            (!rows.is_empty()).then(|| Table { group, runtimes: runtimes.clone(), pairs: pairs.clone(), rows })
        })
        .collect()
}

fn value(results: &Results, workload: Workload, scale: u64, runtime: &str) -> Value {
    match results.row(workload.name(), scale, runtime) {
        None => Value::Missing,
        Some(row) if row.status == "not yet" => Value::NotYet,
        Some(row) => match row.median() {
            Some(m) if row.is_ok() => Value::Time(m),
            _ => Value::Failed(row.error.clone().unwrap_or_else(|| row.status.clone())),
        },
    }
}

/// `812 ns`, `3.41 µs`, `12.3 ms`, `1.20 s`.
pub fn fmt_time(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}")
}

pub fn fmt_value(v: &Value) -> String {
    match v {
        Value::Time(ns) => fmt_time(*ns),
        Value::NotYet => "not yet".into(),
        Value::Failed(_) => "FAILED".into(),
        Value::Missing => "-".into(),
    }
}

/// `0.85× [0.80, 0.90]`.
pub fn fmt_ratio(r: &RatioRow) -> String {
    format!("{:.2}× [{:.2}, {:.2}]", r.median_ratio, r.ci95[0], r.ci95[1])
}

/// The plain-text table printed after a run. To stay readable in a terminal it shows only the
/// ratios to tokio of the same flavor; the reports have every pair.
pub fn terminal(results: &Results) -> String {
    let mut out = String::new();
    for mut table in tables(results) {
        let keep: Vec<bool> = table.pairs.iter().map(|(_, base)| base.starts_with("tokio")).collect();
        table.pairs.retain(|(_, base)| base.starts_with("tokio"));
        for row in &mut table.rows {
            let mut flags = keep.iter();
            row.ratios.retain(|_| *flags.next().unwrap_or(&false));
        }
        let mut header = vec![format!("{} workload", table.group.name())];
        header.extend(table.runtimes.iter().cloned());
        header.extend(table.pairs.iter().map(|(a, b)| format!("{a} ÷ {b}")));
        let mut lines = vec![header];
        for row in &table.rows {
            let mut line = vec![row.label()];
            line.extend(row.values.iter().map(fmt_value));
            line.extend(
                row.ratios.iter().map(|r| {
                    r.as_ref().map(|r| format!("{} {}", fmt_ratio(r), r.verdict)).unwrap_or_else(|| "-".into())
                }),
            );
            lines.push(line);
        }
        let widths: Vec<usize> =
            (0..lines[0].len()).map(|c| lines.iter().map(|l| l[c].chars().count()).max().unwrap_or(0)).collect();
        for (i, line) in lines.iter().enumerate() {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (s, w))| if c == 0 { format!("{s:<w$}") } else { format!("{s:>w$}") })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
            if i == 0 {
                out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
                out.push('\n');
            }
        }
        out.push('\n');
    }
    out.push_str(
        "ratio = weft time ÷ baseline time, median of paired samples, [95% bootstrap CI]; < 1 means weft is faster.\n",
    );
    let long = long_polls(results);
    if !long.is_empty() {
        out.push_str(&format!(
            "long polls (weft's monitor, polls over 10 ms, counted instead of warned about): {}\n",
            long.join(", ")
        ));
    }
    out
}

/// `workload scale on runtime: count` for every row whose runtime's long-poll monitor counted
/// polls during the counted samples.
pub fn long_polls(results: &Results) -> Vec<String> {
    results
        .results
        .iter()
        .filter(|r| r.long_polls > 0)
        .map(|r| format!("{} {} on {}: {}", r.workload, r.scale, r.runtime, r.long_polls))
        .collect()
}

/// How a study renders its own part of `results.json` (`Results::sections[study]`): the
/// framework stores the part as JSON and renders it through this, so it never names a study.
#[derive(Clone, Copy)]
pub struct Section {
    pub study: &'static str,
    pub markdown: RenderSection,
    pub html: RenderSection,
}

/// Renders a study's stored section, or says why it cannot.
pub type RenderSection = fn(&serde_json::Value) -> Result<String, String>;

/// One stored section through its study's renderer, or a line saying why it cannot be shown.
fn render_section(
    name: &str,
    data: &serde_json::Value,
    sections: &[Section],
    pick: fn(&Section) -> RenderSection,
) -> String {
    match sections.iter().find(|s| s.study == name) {
        Some(s) => pick(s)(data).unwrap_or_else(|e| format!("\n(section `{name}` cannot be rendered: {e})\n")),
        None => format!("\n(section `{name}`: no renderer passed to this report)\n"),
    }
}

/// The markdown report with no study section rendered.
pub fn render_markdown(results: &Results) -> String {
    markdown::render(results, &[])
}

/// The HTML report with no study section rendered.
pub fn render_html(results: &Results) -> String {
    html::render(results, &[])
}

/// Writes `results.json`, `report.md` and `report.html` into `dir`; `sections` render the
/// study sections `results` carries.
pub fn write_all(dir: &Path, results: &Results, sections: &[Section]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("results.json"), results.to_json())?;
    std::fs::write(dir.join("report.md"), markdown::render(results, sections))?;
    std::fs::write(dir.join("report.html"), html::render(results, sections))?;
    Ok(())
}

/// The methodology paragraph shared by both reports (markdown syntax, also fine as HTML text).
pub fn methodology(results: &Results) -> Vec<String> {
    let s = &results.settings;
    vec![
        format!(
            "Every sample builds a fresh runtime, times the workload future inside `block_on`, then drops the runtime: only one runtime exists at a time, so no other runtime's threads idle or spin during a measurement. All multi-thread runtimes get the same {} worker threads (the machine's cores by default).",
            s.workers
        ),
        format!(
            "Runtimes are interleaved sample by sample: each workload × scale runs {} discarded warm-up round(s), then {} counted rounds; in round r every runtime takes one sample, the starting runtime rotating each round. Ratios pair the samples of the same round (weft ÷ baseline), report the median of those paired ratios and a 95% percentile-bootstrap interval (2,000 resamples, fixed seed). A ratio is a win when its whole interval is below 1, a loss when above 1, a tie otherwise.",
            s.warmup, s.reps
        ),
        "Two spawn methods, shown side by side: `spawn_outside` spawns from the `block_on` future, which in a multi-thread runtime is not a worker, so every spawn goes through the shared injection queue (the method of the Dtact report); `spawn_inside` spawns the same tasks from inside a spawned task, on a worker, which is how servers spawn and the fair comparison.".to_string(),
        "Channel workloads (`mpsc_*`, `oneshot_ping`, `broadcast_fanout`, `cross_runtime_*`, the locks) use each runtime's own channels: weft::sync, tokio::sync, async-channel for smol (its `bounded(1)` as the oneshot), async_std::channel for async-std. `cross_runtime_*` hand every message from a task on the sample's runtime to a task on a second runtime of the same kind, built and started before the clock (async-std's executor is one per process: \"not yet\"). The spawn workloads that need a channel (`spawn_many`, `chained_spawn` and `ping_pong`) use runtime-neutral ones instead, the same for every runtime: an atomic countdown with a futures-channel oneshot for completion, and futures-channel oneshots for `ping_pong`'s pings, so they measure spawning and waking rather than a channel. `deep_recursion` boxes each level's future (a recursive async fn must), again the same for every runtime.".to_string(),
        "Every workload validates its output (sums, counts, depths); a failed validation fails the run. `catch_unwind_panics` runs with the panic hook silenced, for every runtime alike. async-std (discontinued upstream, but it still builds) has a process-wide executor that cannot be shut down, so each async-std sample runs in a child process (this binary re-executed) that does one untimed warm-up run of the same workload first; only the workload is timed, not the process start.".to_string(),
    ]
}
