//! SVG charts for `report.html`, drawn with plotters' SVG backend (no fonts or system libraries:
//! text is emitted as SVG `<text>` and laid out by the browser).
//!
//! Per group: [`times`] — median time per runtime, one column per workload × scale, log y axis
//! (workloads differ by orders of magnitude); [`ratios`] — weft ÷ baseline per pair, the dot the
//! median paired ratio and the whisker its 95% CI, with the parity line at 1.

use plotters::prelude::*;

use super::{Table, Value};

const PALETTE: [RGBColor; 8] = [
    RGBColor(0xd6, 0x27, 0x28), // weft-mt
    RGBColor(0xff, 0x7f, 0x0e), // weft-ct
    RGBColor(0x1f, 0x77, 0xb4), // tokio-mt
    RGBColor(0x17, 0xbe, 0xcf), // tokio-ct
    RGBColor(0x2c, 0xa0, 0x2c), // smol
    RGBColor(0x94, 0x67, 0xbd), // async-std
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// Each runtime keeps its colour in every chart (registry order; unknown labels share grey).
fn color(name: &str) -> RGBColor {
    let i = crate::runtimes::RuntimeId::ALL.iter().position(|r| r.name() == name).unwrap_or(PALETTE.len() - 1);
    PALETTE[i]
}

fn size(columns: usize) -> (u32, u32) {
    ((140 + 70 * columns as u32).max(640), 480)
}

/// Offsets `n` series around a column's centre so their marks do not overlap.
fn offset(i: usize, n: usize) -> f64 {
    if n <= 1 {
        0.0
    } else {
        -0.3 + 0.6 * i as f64 / (n - 1) as f64
    }
}

/// Median time per runtime, log scale.
pub fn times(table: &Table) -> Result<String, String> {
    let mut svg = String::new();
    let columns = table.rows.len();
    let times: Vec<f64> = table.rows.iter().flat_map(|r| r.values.iter()).filter_map(|v| if let Value::Time(t) = v { Some(*t) } else { None }).collect();
    if times.is_empty() {
        return Ok(String::new());
    }
    let (lo, hi) = (times.iter().copied().fold(f64::INFINITY, f64::min), times.iter().copied().fold(0.0, f64::max));
    let labels: Vec<String> = table.rows.iter().map(|r| r.label()).collect();
    {
        let root = SVGBackend::with_string(&mut svg, size(columns)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: median time per runtime (log scale, lower is better)", table.group.name()), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(190)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..columns as f64 - 0.5, (lo / 1.6..hi * 1.6).log_scale())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(columns)
            .x_label_formatter(&|x| column_label(&labels, *x))
            .x_label_style(("sans-serif", 12).into_font().transform(FontTransform::Rotate90))
            .y_label_formatter(&|y| super::fmt_time(*y))
            .y_desc("median time")
            .draw()
            .map_err(|e| e.to_string())?;
        let n = table.runtimes.len();
        for (i, runtime) in table.runtimes.iter().enumerate() {
            let points: Vec<(f64, f64)> = table
                .rows
                .iter()
                .enumerate()
                .filter_map(|(c, row)| if let Value::Time(t) = row.values[i] { Some((c as f64 + offset(i, n), t)) } else { None })
                .collect();
            let style = color(runtime).filled();
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 5, style)))
                .map_err(|e| e.to_string())?
                .label(runtime.clone())
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, style));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).position(SeriesLabelPosition::UpperLeft).draw().map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// weft ÷ baseline per pair (coloured like the baseline): median paired ratio with 95% CI whiskers, log scale.
pub fn ratios(table: &Table) -> Result<String, String> {
    let mut svg = String::new();
    let columns = table.rows.len();
    let bounds: Vec<f64> = table.rows.iter().flat_map(|r| r.ratios.iter().flatten()).flat_map(|r| [r.ci95[0], r.ci95[1], r.median_ratio]).filter(|v| v.is_finite() && *v > 0.0).collect();
    if bounds.is_empty() {
        return Ok(String::new());
    }
    let lo = bounds.iter().copied().fold(1.0, f64::min);
    let hi = bounds.iter().copied().fold(1.0, f64::max);
    let labels: Vec<String> = table.rows.iter().map(|r| r.label()).collect();
    {
        let root = SVGBackend::with_string(&mut svg, size(columns)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: weft ÷ baseline with 95% CI (below 1 = weft faster)", table.group.name()), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(190)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..columns as f64 - 0.5, (lo / 1.25..hi * 1.25).log_scale())
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(columns)
            .x_label_formatter(&|x| column_label(&labels, *x))
            .x_label_style(("sans-serif", 12).into_font().transform(FontTransform::Rotate90))
            .y_label_formatter(&|y| format!("{y:.2}×"))
            .y_desc("time ratio")
            .draw()
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(-0.5, 1.0), (columns as f64 - 0.5, 1.0)], BLACK.stroke_width(1))))
            .map_err(|e| e.to_string())?;
        let n = table.pairs.len();
        for (i, (runtime, baseline)) in table.pairs.iter().enumerate() {
            let style = color(baseline).filled();
            let stroke = color(baseline).stroke_width(2);
            let marks: Vec<(f64, [f64; 3])> = table
                .rows
                .iter()
                .enumerate()
                .filter_map(|(c, row)| row.ratios[i].as_ref().map(|r| (c as f64 + offset(i, n) * 0.8, [r.ci95[0], r.median_ratio, r.ci95[1]])))
                .collect();
            chart
                .draw_series(marks.iter().map(|&(x, [low, _, high])| PathElement::new(vec![(x, low), (x, high)], stroke)))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(marks.iter().flat_map(|&(x, [low, _, high])| {
                    [PathElement::new(vec![(x - 0.06, low), (x + 0.06, low)], stroke), PathElement::new(vec![(x - 0.06, high), (x + 0.06, high)], stroke)]
                }))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(marks.iter().map(|&(x, [_, mid, _])| Circle::new((x, mid), 5, style)))
                .map_err(|e| e.to_string())?
                .label(format!("{runtime} ÷ {baseline}"))
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, style));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).position(SeriesLabelPosition::UpperLeft).draw().map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// The label of the column at `x`, or nothing between columns.
fn column_label(labels: &[String], x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 || x < -0.1 {
        return String::new();
    }
    labels.get(x.round() as usize).cloned().unwrap_or_default()
}
