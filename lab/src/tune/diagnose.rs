//! The runtime's own view of a configuration: the `WEFT_METRICS_DUMP` lines its runs wrote
//! (weft's `runtime/metrics/exit_summary.rs`, one JSON object per dropped runtime), folded
//! into a few sentences a user can act on.
//!
//! Each finding states what was measured and only then suggests a change: long polls name the
//! spawn sites (the code to fix), the blocking pool's queue latency says whether the pool cap
//! is the bottleneck, and a knob the runtime did not take (an explicit `Builder` call wins
//! over the environment) is called out so a tie is not mistaken for "the knob does not
//! matter". A program that is not weft-based writes no lines; that is said, not guessed at.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::grid::Config;

/// One runtime's exit summary (the fields `tune` reads; unknown ones are ignored).
#[derive(Clone, Debug, Deserialize)]
pub struct RuntimeSummary {
    pub flavor: String,
    pub workers: u64,
    pub config: SummaryConfig,
    pub polls: u64,
    pub steals: u64,
    pub parks: u64,
    pub noops: u64,
    pub long_poll_count: u64,
    pub recent_long_polls: Vec<LongPoll>,
    pub compensating_threads_started: u64,
    pub blocking: BlockingSummary,
}

#[derive(Clone, Debug, Deserialize)]
pub struct SummaryConfig {
    pub worker_threads: u64,
    pub max_blocking_threads: u64,
    pub global_queue_interval: u64,
    pub event_interval: u64,
    pub long_poll_threshold_ms: u64,
    pub compensate: Option<bool>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct LongPoll {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub duration_ms: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct BlockingSummary {
    pub peak_threads: u64,
    pub completed: u64,
    pub queue_latency_p99_ms: Option<f64>,
}

/// The summaries of one run (empty when the program wrote none); unparseable lines counted.
#[derive(Clone, Debug, Default)]
pub struct RunDump {
    pub runtimes: Vec<RuntimeSummary>,
    pub bad_lines: usize,
}

/// Reads and deletes one run's dump file (a missing file is an empty dump).
pub fn read_dump(path: &Path) -> RunDump {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let _ = std::fs::remove_file(path);
    parse_dump(&text)
}

pub fn parse_dump(text: &str) -> RunDump {
    let mut dump = RunDump::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<RuntimeSummary>(line) {
            Ok(s) => dump.runtimes.push(s),
            Err(_) => dump.bad_lines += 1,
        }
    }
    dump
}

/// The diagnosis of one configuration from its runs' dumps, as lines (no trailing newline);
/// `cores` is the machine's (the blocking pool's floor).
pub fn diagnose(runs: &[RunDump], cores: usize) -> Vec<String> {
    let mut out = Vec::new();
    let all: Vec<&RuntimeSummary> = runs.iter().flat_map(|r| &r.runtimes).collect();
    let bad: usize = runs.iter().map(|r| r.bad_lines).sum();
    if bad > 0 {
        out.push(format!("{bad} unreadable WEFT_METRICS_DUMP line(s) ignored"));
    }
    if all.is_empty() {
        out.push(
            "no weft runtime reported (not a weft program, or it exits without dropping its runtime, e.g. process::exit)"
                .into(),
        );
        return out;
    }
    let multi: Vec<&RuntimeSummary> = all.iter().copied().filter(|s| s.flavor == "multi_thread").collect();
    let first = multi.first().copied().unwrap_or(all[0]);
    out.push(format!(
        "{} runtime(s) over {} run(s) ({} multi-thread); e.g. {} worker(s), max_blocking_threads {}, global_queue_interval {}, event_interval {}, compensate {}",
        all.len(),
        runs.len(),
        multi.len(),
        first.workers,
        first.config.max_blocking_threads,
        first.config.global_queue_interval,
        first.config.event_interval,
        first.config.compensate.map_or("n/a".to_string(), |c| c.to_string()),
    ));
    out.extend(long_polls(&all, runs.len()));
    let temps: u64 = all.iter().map(|s| s.compensating_threads_started).sum();
    if temps > 0 {
        out.push(format!(
            "compensation started {temps} temporary worker(s) for blocked workers over {} run(s)",
            runs.len()
        ));
    }
    out.extend(blocking_pool(&all, cores));
    out.extend(scheduling(&multi));
    out
}

/// Knobs set for `config` that its runs' (multi-thread) runtimes did not run with.
pub fn ignored_knobs(config: &Config, runs: &[RunDump]) -> Vec<String> {
    let multi: Vec<&RuntimeSummary> =
        runs.iter().flat_map(|r| &r.runtimes).filter(|s| s.flavor == "multi_thread").collect();
    let mut out = Vec::new();
    for (name, value) in &config.vars {
        let effective = |s: &RuntimeSummary| -> Option<String> {
            Some(match name.as_str() {
                "WEFT_WORKER_THREADS" => s.config.worker_threads.to_string(),
                "WEFT_MAX_BLOCKING_THREADS" => s.config.max_blocking_threads.to_string(),
                "WEFT_GLOBAL_QUEUE_INTERVAL" => s.config.global_queue_interval.to_string(),
                "WEFT_EVENT_INTERVAL" => s.config.event_interval.to_string(),
                "WEFT_COMPENSATE" => match s.config.compensate? {
                    true => "1".into(),
                    false => "0".into(),
                },
                _ => return None,
            })
        };
        let wanted = match name.as_str() {
            "WEFT_COMPENSATE" => match value.to_ascii_lowercase().as_str() {
                "1" | "true" | "on" | "yes" => "1".to_string(),
                _ => "0".to_string(),
            },
            _ => value.clone(),
        };
        let mut others: Vec<String> = multi.iter().filter_map(|s| effective(s)).filter(|v| *v != wanted).collect();
        others.sort();
        others.dedup();
        if !others.is_empty() {
            out.push(format!(
                "{name}={value} did not reach every runtime: some ran with {} (an explicit Builder call wins over the environment)",
                others.join(", ")
            ));
        }
    }
    out
}

/// Long polls grouped by spawn site, most frequent first (at most three sites).
fn long_polls(all: &[&RuntimeSummary], runs: usize) -> Vec<String> {
    let count: u64 = all.iter().map(|s| s.long_poll_count).sum();
    if count == 0 {
        return Vec::new();
    }
    let threshold = all.iter().map(|s| s.config.long_poll_threshold_ms).max().unwrap_or(0);
    let mut sites: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for p in all.iter().flat_map(|s| &s.recent_long_polls) {
        let e = sites.entry(format!("{}:{}:{}", p.file, p.line, p.column)).or_insert((0, 0.0));
        e.0 += 1;
        e.1 = e.1.max(p.duration_ms);
    }
    let mut sites: Vec<(String, (u64, f64))> = sites.into_iter().collect();
    sites.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
    let mut out = vec![format!(
        "{count} long poll(s) ≥ {threshold} ms over {runs} run(s) — blocking code on a worker (or a worker the OS descheduled on an overloaded machine); wrap blocking calls in spawn_blocking or block_in_place"
    )];
    for (site, (n, max)) in sites.iter().take(3) {
        out.push(format!("  {n} at {site} (longest {max:.0} ms)"));
    }
    if sites.len() > 3 {
        out.push(format!("  … and {} more spawn site(s)", sites.len() - 3));
    }
    out
}

fn blocking_pool(all: &[&RuntimeSummary], cores: usize) -> Vec<String> {
    let completed: u64 = all.iter().map(|s| s.blocking.completed).sum();
    if completed == 0 {
        return Vec::new();
    }
    let worst =
        all.iter().filter_map(|s| s.blocking.queue_latency_p99_ms.map(|p| (p, *s))).max_by(|a, b| a.0.total_cmp(&b.0));
    let Some((p99, s)) = worst else {
        return vec![format!("blocking pool ran {completed} closure(s); queue latency not recorded")];
    };
    let (peak, cap) = (s.blocking.peak_threads, s.config.max_blocking_threads);
    let detail = format!(
        "blocking queue p99 ≤ {p99:.1} ms (worst runtime; {completed} closure(s), peak {peak} of {cap} threads)"
    );
    let advice = if p99 < 10.0 {
        ""
    } else if peak >= cap {
        " — the pool is at its cap: if its closures wait (I/O, locks) rather than compute, raise WEFT_MAX_BLOCKING_THREADS"
    } else if peak as usize <= cores {
        " — the pool stayed at the core count (weft grows it only while its threads block): the closures compute, so they queue for CPUs and a larger cap would not help"
    } else {
        " — the pool grew past the core count while its threads blocked, below its cap: the cap is not the limit"
    };
    vec![format!("{detail}{advice}")]
}

fn scheduling(multi: &[&RuntimeSummary]) -> Vec<String> {
    let polls: u64 = multi.iter().map(|s| s.polls).sum();
    if polls == 0 {
        return Vec::new();
    }
    let (steals, parks, noops) = multi.iter().fold((0, 0, 0), |a, s| (a.0 + s.steals, a.1 + s.parks, a.2 + s.noops));
    let pct = |n: u64| 100.0 * n as f64 / polls as f64;
    let mut line = format!(
        "scheduling: {polls} polls, {steals} stolen ({:.1}%), {parks} parks ({:.1} per 100 polls), {noops} wake-ups with nothing to do",
        pct(steals),
        pct(parks)
    );
    if parks > 0 && noops * 2 > parks && pct(parks) > 10.0 {
        line.push_str(" — workers often wake for nothing: fewer WEFT_WORKER_THREADS may help");
    }
    vec![line]
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"pid":1,"runtime_index":0,"runtime_id":5,"flavor":"multi_thread","workers":2,"config":{"worker_threads":2,"max_blocking_threads":4,"blocking_keep_alive_ms":10000,"global_queue_interval":31,"event_interval":61,"long_poll_threshold_ms":10,"compensate":true},"polls":100,"steals":5,"steal_operations":2,"parks":10,"noops":1,"busy_seconds":0.5,"spawned_tasks":9,"remote_schedules":1,"overflows":0,"forced_yields":0,"long_poll_count":2,"recent_long_polls":[{"task_id":3,"file":"src/a.rs","line":7,"column":5,"worker":0,"duration_ms":52.0},{"task_id":4,"file":"src/a.rs","line":7,"column":5,"worker":1,"duration_ms":61.0}],"compensating_threads_started":1,"blocking":{"peak_threads":4,"completed":8,"queue_latency_count":8,"queue_latency_p50_ms":1.0,"queue_latency_p99_ms":40.0}}"#;

    #[test]
    fn a_summary_line_becomes_findings() {
        let dump = parse_dump(&format!("{LINE}\nnot json\n"));
        assert_eq!((dump.runtimes.len(), dump.bad_lines), (1, 1));
        let config = Config { vars: vec![("WEFT_WORKER_THREADS".into(), "1".into())] };
        let mut text = diagnose(std::slice::from_ref(&dump), 2).join("\n");
        text += &ignored_knobs(&config, &[dump]).join("\n");
        assert!(text.contains("1 unreadable"), "{text}");
        assert!(text.contains("WEFT_WORKER_THREADS=1 did not reach every runtime: some ran with 2"), "{text}");
        assert!(text.contains("2 long poll(s) ≥ 10 ms over 1 run(s)"), "{text}");
        assert!(text.contains("  2 at src/a.rs:7:5 (longest 61 ms)"), "{text}");
        assert!(text.contains("compensation started 1 temporary worker(s)"), "{text}");
        assert!(
            text.contains("blocking queue p99 ≤ 40.0 ms") && text.contains("raise WEFT_MAX_BLOCKING_THREADS"),
            "{text}"
        );
        assert!(text.contains("100 polls, 5 stolen (5.0%)"), "{text}");
    }

    #[test]
    fn blocking_advice_depends_on_where_the_pool_stopped() {
        let at = |peak: &str| diagnose(&[parse_dump(&LINE.replace("\"peak_threads\":4", peak))], 2).join("\n");
        assert!(at("\"peak_threads\":2").contains("stayed at the core count"), "{}", at("\"peak_threads\":2"));
        assert!(at("\"peak_threads\":3").contains("grew past the core count"), "{}", at("\"peak_threads\":3"));
        let calm = LINE.replace("\"queue_latency_p99_ms\":40.0", "\"queue_latency_p99_ms\":0.5");
        let text = diagnose(&[parse_dump(&calm)], 2).join("\n");
        assert!(
            text.contains("blocking queue p99 ≤ 0.5 ms (worst runtime; 8 closure(s), peak 4 of 4 threads)\n"),
            "{text}"
        );
    }

    #[test]
    fn no_dump_says_so() {
        let text = diagnose(&[RunDump::default()], 2).join("\n");
        assert!(text.contains("no weft runtime reported"), "{text}");
    }
}
