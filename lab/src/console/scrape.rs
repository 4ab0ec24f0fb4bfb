//! One scrape of a weft program's metrics endpoint: `GET /metrics` (Prometheus text 0.0.4) and
//! `GET /tasks` (the task dump as JSON), fetched with reqwest, parsed into a [`Scrape`].
//! Rates come from two scrapes ([`Rates`]). Bad input (a refused connection, a non-200 answer,
//! text that does not parse) is an error string for the status line, never a panic.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// One task of `/tasks` (`weft::metrics::tasks`).
#[derive(Clone, Debug, Deserialize)]
pub struct TaskRow {
    pub id: u64,
    pub state: String,
    pub file: String,
    pub line: u32,
    pub age_seconds: f64,
    pub poll_count: u64,
    pub total_poll_time_seconds: Option<f64>,
    pub max_poll_time_seconds: Option<f64>,
}

impl TaskRow {
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

#[derive(Deserialize)]
struct TasksBody {
    tasks: Vec<TaskRow>,
}

/// Every sample of a scrape, keyed by its series as written (`name` or `name{labels}`).
#[derive(Clone, Debug, Default)]
pub struct Series(HashMap<String, f64>);

impl Series {
    /// Parses the text format 0.0.4: `series value` lines; `#` lines and blank lines skipped.
    pub fn parse(text: &str) -> Result<Series, String> {
        let mut map = HashMap::new();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (series, value) = line.rsplit_once(' ').ok_or_else(|| format!("bad metrics line {line:?}"))?;
            let value = match value {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v.parse().map_err(|_| format!("bad value in metrics line {line:?}"))?,
            };
            map.insert(series.to_string(), value);
        }
        Ok(Series(map))
    }

    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.get(name).copied()
    }

    pub fn worker(&self, name: &str, w: usize) -> Option<f64> {
        self.get(&format!("{name}{{worker=\"{w}\"}}"))
    }

    /// Cumulative `(le, count)` buckets of an unlabelled histogram, sorted by edge.
    pub fn buckets(&self, name: &str) -> Vec<(f64, f64)> {
        let prefix = format!("{name}_bucket{{le=\"");
        let mut out: Vec<(f64, f64)> = self
            .0
            .iter()
            .filter_map(|(k, v)| {
                let le = k.strip_prefix(&prefix)?.strip_suffix("\"}")?;
                let le = if le == "+Inf" { f64::INFINITY } else { le.parse().ok()? };
                Some((le, *v))
            })
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }
}

/// What one refresh read.
#[derive(Clone, Debug)]
pub struct Scrape {
    pub at: Instant,
    pub series: Series,
    pub tasks: Vec<TaskRow>,
}

/// Reads `/metrics` and `/tasks` under `base` (e.g. `http://127.0.0.1:9464`).
pub async fn scrape(client: &reqwest::Client, base: &str) -> Result<Scrape, String> {
    let text = get(client, &format!("{base}/metrics")).await?;
    let series = Series::parse(&text)?;
    let body = get(client, &format!("{base}/tasks")).await?;
    let tasks = serde_json::from_str::<TasksBody>(&body).map_err(|e| format!("bad /tasks JSON: {e}"))?.tasks;
    Ok(Scrape { at: Instant::now(), series, tasks })
}

async fn get(client: &reqwest::Client, url: &str) -> Result<String, String> {
    let resp = client.get(url).timeout(Duration::from_millis(900)).send().await.map_err(|e| format!("{url}: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    resp.text().await.map_err(|e| format!("{url}: {e}"))
}

/// Per-second rates between two scrapes of the same program.
pub struct Rates<'a> {
    pub now: &'a Scrape,
    pub before: Option<&'a Scrape>,
}

impl Rates<'_> {
    fn seconds(&self) -> Option<f64> {
        let dt = self.now.at.duration_since(self.before?.at).as_secs_f64();
        (dt > 0.0).then_some(dt)
    }

    /// The rate of a counter series (`None` on the first scrape or after a reset).
    pub fn rate(&self, key: impl Fn(&Series) -> Option<f64>) -> Option<f64> {
        let (now, then) = (key(&self.now.series)?, key(&self.before?.series)?);
        (now >= then).then(|| (now - then) / self.seconds().unwrap_or(f64::INFINITY))
    }

    /// The 99th percentile of a histogram over the window between the scrapes (or since the
    /// start, on the first scrape): the upper edge of the bucket holding it.
    pub fn p99(&self, name: &str) -> Option<f64> {
        let now = self.now.series.buckets(name);
        let then = self.before.map(|b| b.series.buckets(name)).unwrap_or_default();
        let window: Vec<(f64, f64)> =
            now.iter().map(|&(le, c)| (le, c - then.iter().find(|b| b.0 == le).map_or(0.0, |b| b.1))).collect();
        let total = window.last()?.1;
        if total <= 0.0 {
            return None;
        }
        window.iter().find(|(_, c)| *c >= 0.99 * total).map(|&(le, _)| le)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_series_workers_and_buckets() {
        let text = "# HELP x y\n# TYPE weft_workers gauge\nweft_workers 2\nweft_worker_poll_total{worker=\"1\"} 7\n\
                    h_bucket{le=\"0.5\"} 3\nh_bucket{le=\"+Inf\"} 4\nh_bucket{le=\"0.1\"} 1\n";
        let s = Series::parse(text).unwrap();
        assert_eq!(s.get("weft_workers"), Some(2.0));
        assert_eq!(s.worker("weft_worker_poll_total", 1), Some(7.0));
        assert_eq!(s.buckets("h"), vec![(0.1, 1.0), (0.5, 3.0), (f64::INFINITY, 4.0)]);
        assert!(Series::parse("garbage").is_err());
    }

    #[test]
    fn p99_is_the_edge_of_the_bucket_holding_it() {
        let s = Series::parse("h_bucket{le=\"0.1\"} 98\nh_bucket{le=\"0.5\"} 99\nh_bucket{le=\"+Inf\"} 100\n").unwrap();
        let scrape = Scrape { at: Instant::now(), series: s, tasks: vec![] };
        assert_eq!(Rates { now: &scrape, before: None }.p99("h"), Some(0.5));
    }
}
