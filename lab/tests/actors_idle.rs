//! `weft-lab actors`' bytes-per-idle-actor table: its child and its bad inputs; the study's
//! refusal of an unknown peer.

use std::process::{Command, Output};

fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft-lab")).args(args).output().unwrap()
}

#[test]
fn the_idle_table_alone_measures_each_peer_in_its_own_process() {
    let out_dir = std::env::temp_dir().join(format!("weft-actors-idle-{}", std::process::id()));
    let out = lab(&[
        "actors",
        "--filter",
        "=idle_bytes",
        "--runtimes",
        "weft-actor,tokio",
        "--idle-actors",
        "2000",
        "--idle-rounds",
        "1",
        "--quiet",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(report.contains("## Bytes per idle actor"), "{report}");
    assert!(!report.contains("| workload |"), "no timed workload was selected: {report}");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("idle.json")).unwrap()).unwrap();
    let peers: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["peer"].as_str().unwrap()).collect();
    assert_eq!(peers, ["weft-actor", "tokio"]);
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn the_child_refuses_an_unknown_peer_and_zero_actors() {
    let out = lab(&["__actors", "--peer", "erlang", "--actors", "10"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown actor peer erlang"));
    let out = lab(&["__actors", "--peer", "weft-actor", "--actors", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--actors must be at least 1"));
}

#[test]
fn the_study_refuses_an_unknown_peer_before_measuring() {
    let out = lab(&["actors", "--runtimes", "weft-actor,tokio-tasks", "--filter", "=spawn", "--quiet"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown actor peer \"tokio-tasks\"") && err.contains("weft-tasks"), "{err}");
}
