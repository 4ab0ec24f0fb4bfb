//! `WEFT_METRICS_DUMP`: the summary line a runtime appends when it is dropped. One test in its
//! own binary: it is the only code in this process that touches the environment, and it sets
//! the variable while no runtime is alive.
//!
//! Decided by content, not timing: the blocking task waits until the monitor has counted its
//! poll, so the poll is in the summary however slow the machine is.

mod support;

use weft::runtime::Builder;

#[test]
fn dropped_runtimes_append_their_summary_with_the_long_poll_location() {
    let dir = std::env::temp_dir().join(format!("weft-metrics-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("summary.jsonl");
    let _ = std::fs::remove_file(&path);
    // The only test in this binary, and no runtime is alive.
    std::env::set_var("WEFT_METRICS_DUMP", &path);

    let rt = support::long_poll_builder().max_blocking_threads(3).global_queue_interval(17).build().unwrap();
    let line = line!() + 1;
    let id = support::run_one_long_poll(&rt);
    rt.block_on(rt.spawn_blocking(|| ())).unwrap();
    assert!(!path.exists(), "nothing is written before the runtime is dropped");
    drop(rt);

    // A second runtime (current-thread) appends a second line.
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async {});
    drop(rt);

    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let first = lines[0];
    let pid = std::process::id();
    assert!(first.starts_with(&format!("{{\"pid\":{pid},\"runtime_index\":0,")), "{first}");
    assert!(first.contains("\"flavor\":\"multi_thread\",\"workers\":2,"), "{first}");
    for expected in [
        "\"worker_threads\":2,\"max_blocking_threads\":3,",
        "\"global_queue_interval\":17,",
        "\"long_poll_threshold_ms\":10,\"compensate\":true}",
        "\"long_poll_count\":1,",
        "\"compensating_threads_started\":",
        "\"completed\":1,\"queue_latency_count\":1,",
    ] {
        assert!(first.contains(expected), "missing {expected}: {first}");
    }
    let location = format!("{{\"task_id\":{id},\"file\":\"{}\",\"line\":{line},\"column\":", file!());
    assert!(first.contains(&location), "missing {location}: {first}");
    assert!(first.ends_with('}'), "{first}");
    let second = lines[1];
    assert!(second.starts_with(&format!("{{\"pid\":{pid},\"runtime_index\":1,")), "{second}");
    assert!(second.contains("\"flavor\":\"current_thread\",\"workers\":1,"), "{second}");
    assert!(second.contains("\"long_poll_count\":0,\"recent_long_polls\":[],"), "{second}");
    assert!(second.contains("\"queue_latency_p50_ms\":null"), "{second}");

    // An unwritable path is a warning on stderr, never a panic in `drop`.
    std::env::set_var("WEFT_METRICS_DUMP", dir.join("no-such-dir").join("summary.jsonl"));
    let rt = Builder::new_current_thread().build().unwrap();
    drop(rt);
    std::env::remove_var("WEFT_METRICS_DUMP");
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
