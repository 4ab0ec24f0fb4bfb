//! `weft-lab http-hello` end to end, briefly: servers start in child processes, every response
//! validates, the table is written.

mod common;

/// Runs `weft-lab http-hello` briefly (two workers, two rounds of 0.4 s) for `runtimes`, with
/// `args` added; returns the Markdown tables and the JSON rows it wrote.
fn http_hello(runtimes: &str, args: &[&str]) -> (String, Vec<serde_json::Value>) {
    let mut all = vec!["http-hello", "--runtimes", runtimes, "--workers", "2", "--seconds", "0.4", "--rounds", "2"];
    all.extend_from_slice(args);
    common::run_study(&all, "http_hello")
}

#[test]
fn http_hello_runs_and_validates_for_weft_and_tokio() {
    let (md, rows) = http_hello("weft-mt,weft-ct,tokio-mt", &["--connections", "1,8"]);
    assert!(md.contains("| weft-mt |") && md.contains("| tokio-mt |"), "{md}");
    // One table per connection count, each with the server's CPU per request.
    assert!(md.contains(", 1 keep-alive connections") && md.contains(", 8 keep-alive connections"), "{md}");
    assert_eq!(rows.len(), 6, "3 runtimes × 2 connection counts");
    for r in &rows {
        assert!(r["requests"].as_u64().unwrap() > 0, "{r}");
        assert!(r["server_cpu_us_per_req"].as_f64().unwrap() > 0.0, "a server that served requests used CPU: {r}");
        assert_eq!(r["load"], "builtin", "{r}");
        assert_eq!(r["rounds"]["p99_us"].as_array().unwrap().len(), 2, "one value per round: {r}");
    }
    // Two rounds are too few for an interval: the ratio cells are the rows' own ratios.
    assert!(md.contains("Ratios ÷ tokio-mt: ratio of the rows.") && !md.contains("× ["), "{md}");
}

/// With three rounds or more every ratio to tokio-mt is the median of the per-round ratios
/// with its 95% interval, and the per-round values behind it are in the JSON.
#[test]
fn http_hello_ratios_are_paired_per_round_with_an_interval() {
    let mut args = vec!["http-hello", "--runtimes", "weft-mt,tokio-mt", "--workers", "2", "--seconds", "0.6"];
    args.extend_from_slice(&["--rounds", "3", "--connections", "4"]);
    let (md, rows) = common::run_study(&args, "http_hello");
    assert!(md.contains("median of per-round ratios [95% CI]"), "{md}");
    let weft = md.lines().find(|l| l.starts_with("| weft-mt |")).unwrap();
    // req/s, p99, p99.9 and CPU/req ratios, each with its interval.
    assert_eq!(weft.matches("× [").count(), 4, "{weft}");
    for r in &rows {
        let rounds = &r["rounds"];
        for key in ["requests_per_s", "p50_us", "p99_us", "p999_us", "server_cpu_us_per_req"] {
            let v = rounds[key].as_array().unwrap();
            assert_eq!(v.len(), 3, "{key}: {r}");
            assert!(v.iter().all(|x| x.as_f64().unwrap() > 0.0), "{key}: {r}");
        }
    }
}

/// `--idle-connections`: 50 keep-alive connections, each served once, stay parked in every
/// server beside 2 active ones; the row exists only because all 50 were counted alive.
#[test]
fn http_hello_holds_idle_connections_beside_the_active_ones() {
    let (md, rows) = http_hello("weft-mt,tokio-mt", &["--connections", "2", "--idle-connections", "0,50"]);
    assert!(md.contains("2 keep-alive connections + 50 idle ones (all verified alive)"), "{md}");
    assert_eq!(rows.len(), 4, "2 runtimes × idle 0 and 50");
    let idle: Vec<u64> = rows.iter().map(|r| r["idle_connections"].as_u64().unwrap()).collect();
    assert_eq!(idle, [0, 0, 50, 50]);
    for r in &rows {
        assert!(r["requests"].as_u64().unwrap() > 0 && r["errors"].as_u64() == Some(0), "{r}");
        assert!(r["server_rss_kib"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["rss_per_idle_conn_bytes"].is_null(), r["idle_connections"] == 0, "{r}");
    }
}

/// `--hyper-timer`: each runtime with a hyper timer gets a second row served with it, in the
/// same rounds, and the timer-cost table compares the pairs; a runtime without one (smol) gets
/// no such row, and its server refuses `--timer` rather than silently serving without it.
#[test]
fn http_hello_measures_the_hyper_timer_beside_the_plain_server() {
    let (md, rows) = http_hello("weft-mt,tokio-mt,smol", &["--connections", "4", "--hyper-timer"]);
    let names: Vec<&str> = rows.iter().map(|r| r["runtime"].as_str().unwrap()).collect();
    assert_eq!(names, ["weft-mt", "weft-mt+timer", "tokio-mt", "tokio-mt+timer", "smol"]);
    for r in &rows {
        assert!(r["requests"].as_u64().unwrap() > 0 && r["errors"].as_u64() == Some(0), "{r}");
    }
    assert!(md.contains("hyper timer cost") && md.contains("| weft-mt | ") && md.contains("| tokio-mt | "), "{md}");

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_weft-lab"))
        .args(["__http-hello", "--runtime", "smol", "--workers", "1", "--timer"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no hyper timer"), "{refused:?}");
}
