//! OpenMetrics text (what a scrape asking for `application/openmetrics-text` gets), written by
//! the `prometheus-client` crate: [`RuntimeCollector`] is its `Collector`, reading the runtime
//! at every encode (scrape) through the same snapshot as the 0.0.4 renderer.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use super::{snapshot, Kind, Value};
use crate::runtime::RuntimeMetrics;

/// The `Content-Type` of [`render`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A `prometheus_client` collector over a runtime's metrics; register it in your own
/// `Registry` to export weft's metrics beside yours.
#[derive(Debug)]
pub struct RuntimeCollector {
    metrics: RuntimeMetrics,
}

impl RuntimeCollector {
    pub fn new(metrics: RuntimeMetrics) -> RuntimeCollector {
        RuntimeCollector { metrics }
    }
}

fn encode_value(v: &Value, mut enc: MetricEncoder<'_>, kind: Kind) -> Result<(), std::fmt::Error> {
    match (kind, v) {
        (Kind::Counter, Value::Int(x)) => ConstCounter::new(*x).encode(enc),
        (Kind::Counter, Value::Float(x)) => ConstCounter::new(*x).encode(enc),
        (Kind::Gauge, Value::Int(x)) => ConstGauge::new(*x as i64).encode(enc),
        (Kind::Gauge, Value::Float(x)) => ConstGauge::new(*x).encode(enc),
        (Kind::Histogram, Value::Histogram { buckets, sum, count }) => {
            // prometheus-client takes per-bucket counts (it accumulates them itself) and writes
            // `le="+Inf"` only for an edge of `f64::MAX` (an infinite edge would be "inf").
            let mut previous = 0;
            let buckets: Vec<(f64, u64)> = buckets
                .iter()
                .map(|&(edge, cumulative)| {
                    let own = cumulative - previous;
                    previous = cumulative;
                    (if edge.is_infinite() { f64::MAX } else { edge }, own)
                })
                .collect();
            enc.encode_histogram::<()>(*sum, *count, &buckets, None)
        }
        _ => unreachable!("metric kind and value disagree"),
    }
}

impl Collector for RuntimeCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        for f in snapshot(&self.metrics) {
            let ty = match f.kind {
                Kind::Counter => MetricType::Counter,
                Kind::Gauge => MetricType::Gauge,
                Kind::Histogram => MetricType::Histogram,
            };
            let mut family = encoder.encode_descriptor(f.name, f.help, None, ty)?;
            if let [only] = f.samples.as_slice() {
                if only.worker.is_none() {
                    encode_value(&only.value, family, f.kind)?;
                    continue;
                }
            }
            for s in &f.samples {
                let labels = vec![("worker", s.worker.unwrap_or(0).to_string())];
                encode_value(&s.value, family.encode_family(&labels)?, f.kind)?;
            }
        }
        Ok(())
    }
}

/// Renders every metric of the runtime as OpenMetrics text (ending in `# EOF`).
pub fn render(metrics: &RuntimeMetrics) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(RuntimeCollector::new(metrics.clone())));
    let mut out = String::with_capacity(16 * 1024);
    prometheus_client::encoding::text::encode(&mut out, &registry).expect("writing to a String cannot fail");
    out
}
