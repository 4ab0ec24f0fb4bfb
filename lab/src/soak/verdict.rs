//! Whether a soak's series grow (a least-squares line after warm-up), and the chart.

use plotters::prelude::*;
use serde::Serialize;

use super::{Sample, SoakRun};

/// One series' trend.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Growth {
    pub series: &'static str,
    pub first: f64,
    pub last: f64,
    /// Slope × the post-warm-up span: what the line says the run added.
    pub rise: f64,
    /// The slope's t statistic (slope ÷ its standard error).
    pub t: f64,
    pub grows: bool,
}

/// The series a soak watches: name, reading, and tolerance (absolute, relative to the mean).
type Series = (&'static str, fn(&Sample) -> f64, f64, f64);

const SERIES: [Series; 5] = [
    ("rss_mb", |s| s.rss_mb, 4.0, 0.05),
    ("fds", |s| s.fds, 8.0, 0.0),
    ("threads", |s| s.threads, 4.0, 0.0),
    ("alive_tasks", |s| s.alive_tasks, 20.0, 0.05),
    ("p99_ms", |s| s.p99_ms, 2.0, 0.5),
];

/// Whether `ys` (at times `xs`) grows: a positive least-squares slope with t > 3 whose fitted
/// rise over the span is above `tolerance`. Returns (rise, t, grows).
pub fn grows(xs: &[f64], ys: &[f64], tolerance: f64) -> (f64, f64, bool) {
    let n = xs.len() as f64;
    if xs.len() < 3 {
        return (0.0, 0.0, false);
    }
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    if sxx == 0.0 {
        return (0.0, 0.0, false);
    }
    let slope = sxy / sxx;
    let resid: f64 = xs.iter().zip(ys).map(|(x, y)| (y - (my + slope * (x - mx))).powi(2)).sum();
    let se = (resid / (n - 2.0) / sxx).sqrt();
    let t = if se > 0.0 {
        slope / se
    } else if slope > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    let rise = slope * (xs[xs.len() - 1] - xs[0]);
    (rise, t, slope > 0.0 && t > 3.0 && rise > tolerance)
}

/// Each series' verdict after warm-up (the first fifth, at least two samples).
pub fn judge(samples: &[Sample]) -> Vec<Growth> {
    let warm = (samples.len() / 5).max(2).min(samples.len());
    let after = &samples[warm..];
    SERIES
        .iter()
        .map(|&(series, get, abs, rel)| {
            let xs: Vec<f64> = after.iter().map(|s| s.t_s).collect();
            let ys: Vec<f64> = after.iter().map(get).collect();
            let mean = if ys.is_empty() { 0.0 } else { ys.iter().sum::<f64>() / ys.len() as f64 };
            let (rise, t, grows) = grows(&xs, &ys, abs.max(rel * mean));
            Growth {
                series,
                first: samples.first().map(get).unwrap_or(0.0),
                last: samples.last().map(get).unwrap_or(0.0),
                rise,
                t,
                grows,
            }
        })
        .collect()
}

/// One SVG: a panel per series, a line per runtime.
pub fn chart(runs: &[SoakRun]) -> Result<String, String> {
    const COLORS: [RGBColor; 2] = [RGBColor(0xd6, 0x27, 0x28), RGBColor(0x1f, 0x77, 0xb4)];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 1100)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let panels = root.split_evenly((SERIES.len(), 1));
        for (panel, &(series, get, _, _)) in panels.iter().zip(&SERIES) {
            let all = runs.iter().flat_map(|r| r.samples.iter());
            let t_max = all.clone().map(|s| s.t_s).fold(1.0, f64::max) / 60.0;
            let y_max = all.map(get).fold(0.0, f64::max).max(1e-9) * 1.15;
            let mut c = ChartBuilder::on(panel)
                .caption(series, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(28)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..t_max, 0.0..y_max)
                .map_err(|e| e.to_string())?;
            c.configure_mesh().x_desc("minutes").draw().map_err(|e| e.to_string())?;
            for (i, r) in runs.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                c.draw_series(LineSeries::new(r.samples.iter().map(|s| (s.t_s / 60.0, get(s))), color.stroke_width(2)))
                    .map_err(|e| e.to_string())?
                    .label(r.runtime.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
            }
            c.configure_series_labels().background_style(WHITE.mix(0.8)).draw().map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plateau_with_noise_does_not_grow_and_a_leak_does() {
        let xs: Vec<f64> = (0..12).map(|i| i as f64 * 10.0).collect();
        let flat: Vec<f64> = (0..12).map(|i| 100.0 + if i % 2 == 0 { 1.5 } else { -1.5 }).collect();
        assert!(!grows(&xs, &flat, 4.0).2);
        let leak: Vec<f64> = (0..12).map(|i| 100.0 + 2.0 * i as f64 + if i % 2 == 0 { 0.5 } else { -0.5 }).collect();
        let (rise, t, g) = grows(&xs, &leak, 4.0);
        assert!(g && t > 3.0 && (rise - 22.0).abs() < 1.0, "rise {rise} t {t}");
        // A real but tiny rise stays within tolerance.
        let tiny: Vec<f64> = (0..12).map(|i| 100.0 + 0.1 * i as f64).collect();
        assert!(!grows(&xs, &tiny, 4.0).2);
        assert!(!grows(&xs[..2], &leak[..2], 0.0).2, "two points prove nothing");
    }

    #[test]
    fn warm_up_is_left_out() {
        // RSS climbs during warm-up, then is flat: no growth.
        let samples: Vec<Sample> = (0..10)
            .map(|i| Sample {
                t_s: i as f64 * 10.0,
                rss_mb: if i < 2 { 10.0 * i as f64 } else { 30.0 },
                fds: 20.0,
                threads: 5.0,
                alive_tasks: 80.0,
                p99_ms: 1.0,
                requests: 100,
            })
            .collect();
        assert!(judge(&samples).iter().all(|g| !g.grows), "{:?}", judge(&samples));
    }
}
