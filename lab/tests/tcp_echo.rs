//! `weft-lab tcp-echo --idle-connections`: the runtime under test accepts and parks the idle
//! set beside the active echo connections; every idle connection is counted alive on both
//! sides at the end of the round, or the command fails.

use std::process::Command;

mod common;

#[test]
fn tcp_echo_holds_idle_connections_beside_the_active_ones() {
    let (md, rows) = common::run_study(
        &[
            "tcp-echo",
            "--runtimes",
            "weft-mt,weft-ct,tokio-mt,tokio-ct",
            "--workers",
            "2",
            "--rounds",
            "1",
            "--messages",
            "200",
            "--connections",
            "2",
            "--idle-connections",
            "50",
        ],
        "tcp_echo",
    );
    assert!(md.contains("2 connections + 50 idle") && md.contains("| weft-ct | 50 |"), "{md}");
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r["idle_connections"].as_u64(), Some(50), "{r}");
        assert_eq!(r["messages"].as_u64(), Some(200), "{r}");
        assert!(r["rss_kib"].as_f64().unwrap() > 0.0 && r["rss_per_idle_conn_bytes"].is_number(), "{r}");
    }
}

/// More descriptors than the hard limit allows: the command refuses at once and says how to
/// raise the limit, before opening anything.
#[test]
fn tcp_echo_refuses_an_idle_set_beyond_the_fd_limit() {
    let out = Command::new(env!("CARGO_BIN_EXE_weft-lab"))
        .args(["tcp-echo", "--runtimes", "weft-ct", "--rounds", "1", "--messages", "10"])
        .args(["--idle-connections", "100000000"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("RLIMIT_NOFILE") && err.contains("ulimit -n"), "{err}");
}
