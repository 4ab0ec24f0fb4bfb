//! SVG charts for `report.html`, drawn with plotters' SVG backend (no fonts or system libraries:
//! text is emitted as SVG `<text>` and laid out by the browser).
//!
//! Per group, as horizontal dot plots (one row per workload × scale, in table order, so the long
//! labels stay horizontal): [`times`] — median time per runtime on a log axis (workloads differ
//! by orders of magnitude); [`ratios`] — weft ÷ baseline per pair, the dot the median paired
//! ratio and the whisker its 95% CI, with the parity line at 1.

use plotters::coord::types::RangedCoordf64;
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
/// The most legend entries a chart can have (runtimes, or pairs).
const SERIES: usize = 6;

fn color(name: &str) -> RGBColor {
    let i =
        crate::framework::runtimes::RuntimeId::ALL.iter().position(|r| r.name() == name).unwrap_or(PALETTE.len() - 1);
    PALETTE[i]
}

/// Rows run down the chart (labels stay horizontal and readable); width is fixed.
/// Tall enough for the rows and for the legend's `series` entries.
fn size(rows: usize, series: usize) -> (u32, u32) {
    (960, 110 + 30 * rows.max(series) as u32)
}

/// Row `i` (0 = first table row) sits at y = rows − 1 − i, so the chart reads top-down.
fn y_of(i: usize, rows: usize) -> f64 {
    (rows - 1 - i) as f64
}

/// Offsets `n` series around a row's centre so their marks do not overlap.
fn offset(i: usize, n: usize) -> f64 {
    if n <= 1 {
        0.0
    } else {
        0.3 - 0.6 * i as f64 / (n - 1) as f64
    }
}

/// A chart with one row per label down a log-scaled x axis over `x`, captioned, its mesh and
/// axes drawn; `tick` labels the 1-2-5 ticks (see [`labelled_tick`]).
type RowChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<LogCoord<f64>, RangedCoordf64>>;

fn row_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    caption: String,
    x: std::ops::Range<f64>,
    labels: &[String],
    tick: &dyn Fn(f64) -> String,
    x_desc: &str,
) -> Result<RowChart<'a, 'b>, String> {
    let rows = labels.len();
    let mut chart = ChartBuilder::on(root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .margin_right(36)
        .x_label_area_size(40)
        .y_label_area_size(260)
        .build_cartesian_2d(x.log_scale(), -0.5..rows as f64 - 0.5)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(TRANSPARENT)
        .y_labels(rows)
        .y_label_formatter(&|y| row_label(labels, *y))
        .y_label_style(("sans-serif", 13))
        .x_labels(40)
        .x_label_formatter(&|x| if labelled_tick(*x) { tick(*x) } else { String::new() })
        .x_desc(x_desc)
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}

/// Draws the legend of a finished row chart and writes the drawing out.
fn legend_and_present<'a, 'b>(
    chart: &mut RowChart<'a, 'b>,
    root: &DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
) -> Result<(), String>
where
    'b: 'a,
{
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// Median time per runtime, log scale.
pub fn times(table: &Table) -> Result<String, String> {
    let mut svg = String::new();
    let rows = table.rows.len();
    let times: Vec<f64> = table
        .rows
        .iter()
        .flat_map(|r| r.values.iter())
        .filter_map(|v| if let Value::Time(t) = v { Some(*t) } else { None })
        .collect();
    if times.is_empty() {
        return Ok(String::new());
    }
    let (lo, hi) = (times.iter().copied().fold(f64::INFINITY, f64::min), times.iter().copied().fold(0.0, f64::max));
    let labels: Vec<String> = table.rows.iter().map(|r| r.label()).collect();
    {
        let root = SVGBackend::with_string(&mut svg, size(rows, SERIES)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = row_chart(
            &root,
            format!("{}: median time per runtime (log scale, lower is better)", table.group.name()),
            decades(lo, hi * 3.0),
            &labels,
            &|x| super::fmt_time(x),
            "median time",
        )?;
        let n = table.runtimes.len();
        for (i, runtime) in table.runtimes.iter().enumerate() {
            let points: Vec<(f64, f64)> = table
                .rows
                .iter()
                .enumerate()
                .filter_map(|(r, row)| {
                    if let Value::Time(t) = row.values[i] {
                        Some((t, y_of(r, rows) + offset(i, n)))
                    } else {
                        None
                    }
                })
                .collect();
            let style = color(runtime).filled();
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 5, style)))
                .map_err(|e| e.to_string())?
                .label(runtime.clone())
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, style));
        }
        legend_and_present(&mut chart, &root)?;
    }
    Ok(svg)
}

/// weft ÷ baseline per pair (coloured like the baseline): median paired ratio with 95% CI
/// whiskers, log scale.
pub fn ratios(table: &Table) -> Result<String, String> {
    let mut svg = String::new();
    let rows = table.rows.len();
    let bounds: Vec<f64> = table
        .rows
        .iter()
        .flat_map(|r| r.ratios.iter().flatten())
        .flat_map(|r| [r.ci95[0], r.ci95[1], r.median_ratio])
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if bounds.is_empty() {
        return Ok(String::new());
    }
    let lo = bounds.iter().copied().fold(1.0, f64::min);
    let hi = bounds.iter().copied().fold(1.0, f64::max);
    let labels: Vec<String> = table.rows.iter().map(|r| r.label()).collect();
    {
        let root = SVGBackend::with_string(&mut svg, size(rows, SERIES)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = row_chart(
            &root,
            format!("{}: weft ÷ baseline with 95% CI (left of 1 = weft faster)", table.group.name()),
            decades(lo, hi * 2.0),
            &labels,
            &|x| format!("{x}×"),
            "time ratio (weft ÷ baseline)",
        )?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(1.0, -0.5), (1.0, rows as f64 - 0.5)],
                BLACK.stroke_width(1),
            )))
            .map_err(|e| e.to_string())?;
        let n = table.pairs.len();
        for (i, (runtime, baseline)) in table.pairs.iter().enumerate() {
            let style = color(baseline).filled();
            let stroke = color(baseline).stroke_width(2);
            let marks: Vec<(f64, [f64; 3])> = table
                .rows
                .iter()
                .enumerate()
                .filter_map(|(r, row)| {
                    row.ratios[i]
                        .as_ref()
                        .map(|q| (y_of(r, rows) + offset(i, n) * 0.8, [q.ci95[0], q.median_ratio, q.ci95[1]]))
                })
                .collect();
            chart
                .draw_series(marks.iter().flat_map(|&(y, [low, _, high])| {
                    [
                        PathElement::new(vec![(low, y), (high, y)], stroke),
                        PathElement::new(vec![(low, y - 0.08), (low, y + 0.08)], stroke),
                        PathElement::new(vec![(high, y - 0.08), (high, y + 0.08)], stroke),
                    ]
                }))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(marks.iter().map(|&(y, [_, mid, _])| Circle::new((mid, y), 5, style)))
                .map_err(|e| e.to_string())?
                .label(format!("{runtime} ÷ {baseline}"))
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, style));
        }
        legend_and_present(&mut chart, &root)?;
    }
    Ok(svg)
}

/// The label of the row at `y`, or nothing between rows.
fn row_label(labels: &[String], y: f64) -> String {
    if (y - y.round()).abs() > 1e-6 || y < -0.1 || y.round() as usize >= labels.len() {
        return String::new();
    }
    labels[labels.len() - 1 - y.round() as usize].clone()
}

/// The smallest range of whole decades holding `lo..hi`, widened by a hair so that rounding
/// in plotters' tick placement cannot skip the first decade.
fn decades(lo: f64, hi: f64) -> std::ops::Range<f64> {
    10f64.powf(lo.log10().floor()) * 0.999..10f64.powf(hi.log10().ceil()) * 1.001
}

/// Log-axis ticks come at 1–9 × 10ⁿ; only 1, 2 and 5 get a label.
fn labelled_tick(x: f64) -> bool {
    let mantissa = x / 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6 * m)
}
