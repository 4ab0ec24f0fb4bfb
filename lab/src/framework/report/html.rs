//! `report.html`: the markdown report's content as one self-contained page — inline CSS, the
//! tables with coloured verdicts, and two inline SVG charts per group. No scripts, no network.

use std::fmt::Write;

use super::{charts, fmt_ratio, fmt_value, methodology, render_section, tables, Section, Value};
use crate::framework::results::Results;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1400px;color:#222;padding:0 1em}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th{background:#f3f3f3}td.name{text-align:left;font-family:monospace}td.win{background:#d8f5d0}td.lose{background:#f9d6d5}\
td.tie{background:#eeeeee}td.notyet{color:#888;font-style:italic}td.failed{background:#f9b4b4;font-weight:bold}\
.charts svg{max-width:100%;height:auto;display:block;margin:1em 0}code{background:#f3f3f3;padding:0 3px}ul.about{font-size:14px}";

/// Escapes text for HTML element content and attributes.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `code` spans in a markdown-ish sentence become `<code>`.
fn inline_code(text: &str) -> String {
    escape(text)
        .split('`')
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { format!("<code>{part}</code>") } else { part.to_string() })
        .collect()
}

/// Renders the whole HTML report, then each study section `sections` can render.
pub fn render(results: &Results, sections: &[Section]) -> String {
    let mut h = String::new();
    let m = &results.machine;
    let s = &results.settings;
    let _ = write!(h, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>weft-lab report</title><style>{STYLE}</style></head><body>");
    let _ = write!(h, "<h1>weft-lab report ({} profile)</h1><ul>", escape(&results.profile));
    let _ = write!(h, "<li>created: {}</li>", escape(&results.created_utc));
    let _ = write!(
        h,
        "<li>machine: {} ({} cores), {}, kernel {}</li>",
        escape(&m.cpu_model),
        m.cores,
        escape(&m.os),
        escape(&m.kernel)
    );
    let _ = write!(
        h,
        "<li>toolchain: {}; weft-lab {} {}</li>",
        escape(&m.rustc),
        escape(&m.lab_version),
        escape(m.git_commit.as_deref().unwrap_or(""))
    );
    let crates: Vec<String> = m.crates.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = write!(h, "<li>crates: {}</li>", escape(&crates.join(", ")));
    let _ = write!(
        h,
        "<li>settings: {} workers, {} warm-up + {} counted rounds, runtimes {}</li></ul>",
        s.workers,
        s.warmup,
        s.reps,
        escape(&s.runtimes.join(", "))
    );
    let _ = write!(h, "<p>Times are medians. Ratios are weft ÷ baseline (lower is better): the median of paired samples with its 95% CI. Green: win (CI below 1); red: lose (CI above 1); grey: tie (CI crosses 1).</p>");

    for table in tables(results) {
        let _ = write!(h, "<h2>{}</h2><table><tr><th>workload</th>", table.group.name());
        for rt in &table.runtimes {
            let _ = write!(h, "<th>{}</th>", escape(rt));
        }
        for (a, b) in &table.pairs {
            let _ = write!(h, "<th>{} ÷ {}</th>", escape(a), escape(b));
        }
        h.push_str("</tr>");
        for row in &table.rows {
            let _ = write!(h, "<tr><td class=\"name\">{}</td>", escape(&row.label()));
            for v in &row.values {
                match v {
                    Value::NotYet => h.push_str("<td class=\"notyet\">not yet</td>"),
                    Value::Failed(why) => {
                        let _ = write!(h, "<td class=\"failed\" title=\"{}\">FAILED</td>", escape(why));
                    }
                    other => {
                        let _ = write!(h, "<td>{}</td>", escape(&fmt_value(other)));
                    }
                }
            }
            for r in &row.ratios {
                match r {
                    Some(r) => {
                        let _ = write!(
                            h,
                            "<td class=\"{}\">{} {}</td>",
                            escape(&r.verdict),
                            escape(&fmt_ratio(r)),
                            escape(&r.verdict)
                        );
                    }
                    None => h.push_str("<td>–</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</table><ul class=\"about\">");
        let mut seen = Vec::new();
        for row in &table.rows {
            let spec = row.workload.spec();
            if !seen.contains(&spec.name) {
                seen.push(spec.name);
                let _ = write!(h, "<li><code>{}</code>: {}</li>", spec.name, escape(spec.about));
            }
        }
        h.push_str("</ul><div class=\"charts\">");
        for chart in [charts::times(&table), charts::ratios(&table)] {
            match chart {
                Ok(svg) => h.push_str(&svg),
                Err(e) => {
                    let _ = write!(h, "<p>chart failed: {}</p>", escape(&e));
                }
            }
        }
        h.push_str("</div>");
    }

    h.push_str("<h2>Methodology</h2>");
    for paragraph in methodology(results) {
        let _ = write!(h, "<p>{}</p>", inline_code(&paragraph));
    }
    for (name, data) in &results.sections {
        h.push_str(&render_section(name, data, sections, |s| s.html));
    }
    h.push_str("</body></html>\n");
    h
}
