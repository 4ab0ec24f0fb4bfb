//! The agents section of `report.html`: the Markdown tables (preformatted) and three plotters
//! SVG charts — efficiency per runtime (mean with its CI95), TTFT distribution per runtime
//! (median with P5–P95), and fleet-scaling curves (efficiency and client CPU per token vs
//! agents).

use plotters::prelude::*;

use super::summary::{markdown, AgentsSection};

const COLORS: [RGBColor; 9] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

fn color(runtime: &str) -> RGBColor {
    let all = super::hosts::AgentRuntime::ALL.iter().chain(&super::hosts::AgentRuntime::OPTIONAL);
    let i = all.into_iter().position(|r| r.name() == runtime).unwrap_or(0);
    COLORS[i]
}

/// Horizontal dot-and-whisker rows: (label, low, mid, high).
fn dots(title: &str, x_label: &str, rows: &[(String, f64, f64, f64)]) -> Result<String, String> {
    let rows: Vec<_> = rows.iter().filter(|r| r.1.is_finite() && r.2.is_finite() && r.3.is_finite()).collect();
    if rows.is_empty() {
        return Ok(String::new());
    }
    let lo = rows.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(|r| r.3).fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.1).max(0.5);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 80 + 34 * rows.len() as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(150)
            .build_cartesian_2d((lo - pad)..(hi + pad), -0.5..(rows.len() as f64 - 0.5))
            .map_err(|e| e.to_string())?;
        let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        let n = rows.len();
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_labels(n)
            .y_label_formatter(&|y| {
                let i = y.round();
                if (y - i).abs() < 0.01 && i >= 0.0 && (i as usize) < n {
                    labels[n - 1 - i as usize].clone()
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let c = color(r.0.split(' ').next().unwrap_or(""));
            chart.draw_series(LineSeries::new([(r.1, y), (r.3, y)], c.stroke_width(2))).map_err(|e| e.to_string())?;
            chart.draw_series([Circle::new((r.2, y), 5, c.filled())]).map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Efficiency (or CPU/token) vs fleet size, one line per runtime.
fn fleet_chart(
    section: &AgentsSection,
    title: &str,
    y_label: &str,
    value: impl Fn(&super::study::FleetRecord) -> f64,
) -> Result<String, String> {
    let pts: Vec<_> = section.fleet.iter().filter(|f| value(f).is_finite()).collect();
    if pts.is_empty() {
        return Ok(String::new());
    }
    let x_max = pts.iter().map(|f| f.agents).max().unwrap_or(2) as f64;
    let y_max = pts.iter().map(|f| value(f)).fold(0.0, f64::max) * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(60)
            .build_cartesian_2d((1.0..x_max * 1.2).log_scale(), 0.0..y_max.max(1.0))
            .map_err(|e| e.to_string())?;
        chart.configure_mesh().x_desc("agents").y_desc(y_label).draw().map_err(|e| e.to_string())?;
        for &rt in super::hosts::AgentRuntime::ALL.iter().chain(&super::hosts::AgentRuntime::OPTIONAL) {
            let line: Vec<(f64, f64)> =
                pts.iter().filter(|f| f.runtime == rt.name()).map(|f| (f.agents as f64, value(f))).collect();
            if line.is_empty() {
                continue;
            }
            let c = color(rt.name());
            chart
                .draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(rt.name())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], c.stroke_width(2)));
            chart.draw_series(line.into_iter().map(|p| Circle::new(p, 4, c.filled()))).map_err(|e| e.to_string())?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The HTML block.
pub fn html(section: &AgentsSection) -> String {
    let overall: Vec<_> = section.summary.iter().filter(|r| r.config == "all").collect();
    let eff: Vec<_> =
        overall.iter().map(|r| (r.runtime.clone(), r.ci95_pct[0], r.mean_efficiency_pct, r.ci95_pct[1])).collect();
    let mut ttft = Vec::new();
    for r in &overall {
        let xs: Vec<f64> = section
            .runs
            .iter()
            .filter(|x| x.runtime == r.runtime && !x.failed)
            .flat_map(|x| x.per_agent.iter().flat_map(|a| a.ttft_ms.iter().copied()))
            .collect();
        if !xs.is_empty() {
            use crate::framework::stats::percentile;
            ttft.push((r.runtime.clone(), percentile(&xs, 5.0), percentile(&xs, 50.0), percentile(&xs, 95.0)));
        }
    }
    let charts = [
        dots("Parallel efficiency per runtime (mean, CI95)", "efficiency %", &eff),
        dots("TTFT per call (median, P5–P95)", "ms", &ttft),
        fleet_chart(section, "Fleet scaling: efficiency", "efficiency %", |f| f.efficiency_pct),
        fleet_chart(section, "Fleet scaling: client CPU per streamed token", "ns / token", |f| f.cpu_ns_per_token),
    ];
    let mut h = String::from("<h2>agents</h2>\n");
    for c in charts {
        match c {
            Ok(svg) => h.push_str(&svg),
            Err(e) => h.push_str(&format!("<p>chart failed: {}</p>", escape(&e))),
        }
    }
    h.push_str(&tables_html(&markdown(section)));
    h
}

/// Renders the section's markdown (headings, pipe tables, bullets, paragraphs) as HTML, so the
/// tables read as tables in a browser instead of a `<pre>` of wrapped pipes.
fn tables_html(md: &str) -> String {
    let mut h = String::new();
    let mut in_table = false;
    let mut in_list = false;
    for line in md.lines().map(str::trim) {
        let is_row = line.starts_with('|');
        if in_table && !is_row {
            h.push_str("</table>\n");
            in_table = false;
        }
        if in_list && !line.starts_with("- ") {
            h.push_str("</ul>\n");
            in_list = false;
        }
        if is_row {
            // `\|` inside a cell is an escaped pipe (the columns quoting TR115, *Technical Report
            // 115 v2*, docs/notes/reference-reports.md), not a cell boundary.
            let line = line.replace("\\|", "\u{1}");
            let cells: Vec<String> =
                line.trim_matches('|').split('|').map(|c| c.trim().replace('\u{1}', "|")).collect();
            if cells.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':'))) {
                continue;
            }
            let tag = if in_table { "td" } else { "th" };
            if !in_table {
                h.push_str("<table>\n");
                in_table = true;
            }
            h.push_str("<tr>");
            for (i, c) in cells.iter().enumerate() {
                let class = if tag == "td" && i == 0 { " class=\"name\"" } else { "" };
                h.push_str(&format!("<{tag}{class}>{}</{tag}>", escape(c)));
            }
            h.push_str("</tr>\n");
        } else if let Some(t) = line.strip_prefix("### ") {
            h.push_str(&format!("<h4>{}</h4>\n", escape(t)));
        } else if let Some(t) = line.strip_prefix("## ") {
            h.push_str(&format!("<h3>{}</h3>\n", escape(t)));
        } else if let Some(t) = line.strip_prefix("- ") {
            if !in_list {
                h.push_str("<ul class=\"about\">\n");
                in_list = true;
            }
            h.push_str(&format!("<li>{}</li>\n", escape(t)));
        } else if !line.is_empty() {
            h.push_str(&format!("<p>{}</p>\n", escape(line)));
        }
    }
    if in_table {
        h.push_str("</table>\n");
    }
    if in_list {
        h.push_str("</ul>\n");
    }
    h
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
