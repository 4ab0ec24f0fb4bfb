//! The Prometheus text exposition format 0.0.4 (what `promtool check metrics` lints and
//! what a scrape without an OpenMetrics `Accept` header gets). Written by hand: the format
//! is a few line shapes, and the `prometheus-client` crate only writes OpenMetrics.

use std::fmt::Write;

use super::{snapshot, Family, Kind, Value};
use crate::runtime::RuntimeMetrics;

/// The `Content-Type` of [`render`]'s output.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders every metric of the runtime in the text format 0.0.4.
pub fn render(metrics: &RuntimeMetrics) -> String {
    let mut out = String::with_capacity(16 * 1024);
    for family in snapshot(metrics) {
        write_family(&mut out, &family);
    }
    out
}

fn write_family(out: &mut String, f: &Family) {
    // 0.0.4 names the family after its sample: counters end in `_total`.
    let name = match f.kind {
        Kind::Counter => format!("{}_total", f.name),
        _ => f.name.to_string(),
    };
    let kind = match f.kind {
        Kind::Counter => "counter",
        Kind::Gauge => "gauge",
        Kind::Histogram => "histogram",
    };
    let _ = writeln!(out, "# HELP {name} {}", f.help);
    let _ = writeln!(out, "# TYPE {name} {kind}");
    for s in &f.samples {
        let worker = s.worker.map(|w| format!("worker=\"{w}\""));
        match &s.value {
            Value::Int(v) => {
                let _ = writeln!(out, "{name}{} {v}", labels(worker.as_deref(), None));
            }
            Value::Float(v) => {
                let _ = writeln!(out, "{name}{} {}", labels(worker.as_deref(), None), float(*v));
            }
            Value::Histogram { buckets, sum, count } => {
                for (edge, c) in buckets {
                    let le = format!("le=\"{}\"", float(*edge));
                    let _ = writeln!(out, "{name}_bucket{} {c}", labels(worker.as_deref(), Some(&le)));
                }
                let _ = writeln!(out, "{name}_sum{} {}", labels(worker.as_deref(), None), float(*sum));
                let _ = writeln!(out, "{name}_count{} {count}", labels(worker.as_deref(), None));
            }
        }
    }
}

fn labels(a: Option<&str>, b: Option<&str>) -> String {
    match (a, b) {
        (None, None) => String::new(),
        (Some(x), None) | (None, Some(x)) => format!("{{{x}}}"),
        (Some(x), Some(y)) => format!("{{{x},{y}}}"),
    }
}

/// Go's `strconv.ParseFloat` reads Rust's `Display` of finite floats; infinities are `+Inf`.
pub(crate) fn float(v: f64) -> String {
    if v == f64::INFINITY {
        "+Inf".into()
    } else {
        format!("{v}")
    }
}
