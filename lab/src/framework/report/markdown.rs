//! `report.md`: machine, methodology, then one table per workload group.

use std::fmt::Write;

use super::{fmt_ratio, fmt_value, methodology, render_section, tables, Section, Value};
use crate::framework::results::Results;

fn verdict_mark(verdict: &str) -> &'static str {
    match verdict {
        "win" => "✅ win",
        "lose" => "❌ lose",
        _ => "≈ tie",
    }
}

/// Renders the whole markdown report, then each study section `sections` can render.
pub fn render(results: &Results, sections: &[Section]) -> String {
    let mut md = String::new();
    let m = &results.machine;
    let _ = writeln!(md, "# weft-lab report ({} profile)\n", results.profile);
    let _ = writeln!(md, "- created: {}", results.created_utc);
    let _ = writeln!(md, "- machine: {} ({} cores), {}, kernel {}", m.cpu_model, m.cores, m.os, m.kernel);
    let _ = writeln!(
        md,
        "- toolchain: {}; weft-lab {}{}",
        m.rustc,
        m.lab_version,
        m.git_commit.as_deref().map(|c| format!(" at {c}")).unwrap_or_default()
    );
    let crates: Vec<String> = m.crates.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(md, "- crates: {}", crates.join(", "));
    let s = &results.settings;
    let _ = writeln!(
        md,
        "- settings: {} workers, {} warm-up + {} counted rounds, runtimes {}{}\n",
        s.workers,
        s.warmup,
        s.reps,
        s.runtimes.join(", "),
        s.filter.as_deref().map(|f| format!(", filter `{f}`")).unwrap_or_default()
    );
    let _ = writeln!(md, "Times are medians. Ratios are weft ÷ baseline (lower is better): median of paired samples with its 95% CI; ✅ win = CI below 1, ❌ lose = CI above 1, ≈ tie = CI crosses 1.\n");

    for table in tables(results) {
        let _ = writeln!(md, "## {}\n", table.group.name());
        let mut header = vec!["workload".to_string()];
        header.extend(table.runtimes.iter().cloned());
        header.extend(table.pairs.iter().map(|(a, b)| format!("{a} ÷ {b}")));
        let _ = writeln!(md, "| {} |", header.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(header.len()));
        for row in &table.rows {
            let mut cells = vec![format!("`{}`", row.label())];
            cells.extend(row.values.iter().map(|v| match v {
                Value::Failed(why) => format!("FAILED: {}", why.replace('|', "/")),
                other => fmt_value(other),
            }));
            cells.extend(row.ratios.iter().map(|r| {
                r.as_ref()
                    .map(|r| format!("{} {}", fmt_ratio(r), verdict_mark(&r.verdict)))
                    .unwrap_or_else(|| "–".into())
            }));
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        let about: Vec<String> = {
            let mut seen = Vec::new();
            for row in &table.rows {
                let spec = row.workload.spec();
                let line = format!("- `{}`: {}", spec.name, spec.about);
                if !seen.contains(&line) {
                    seen.push(line);
                }
            }
            seen
        };
        let _ = writeln!(md, "\n{}\n", about.join("\n"));
    }

    let long: Vec<String> = super::long_polls(results).into_iter().map(|l| format!("- {l}")).collect();
    if !long.is_empty() {
        let _ = writeln!(
            md,
            "## Long polls\n\nPolls weft's monitor found keeping a worker over its threshold (10 ms) during \
             the counted samples, per row; the lab turns weft's warning lines off and counts them here (a \
             workload whose one poll spawns a million tasks has them by design):\n\n{}\n",
            long.join("\n")
        );
    }
    let _ = writeln!(md, "## Methodology\n");
    for paragraph in methodology(results) {
        let _ = writeln!(md, "{paragraph}\n");
    }
    for (name, data) in &results.sections {
        md.push_str(&render_section(name, data, sections, |s| s.markdown));
    }
    md
}
