//! `weft-lab memory-burst` end to end, briefly: one child process per runtime per round, every
//! task checked parked, released and joined, RSS sampled while the runtime idles, the table and
//! JSON (with every sample) written.

mod common;

#[test]
fn memory_burst_samples_each_runtime_after_its_burst_and_writes_the_table() {
    let (md, rows) = common::run_study(
        &["memory-burst", "--runtimes", "weft-mt,tokio-mt", "--workers", "2", "--rounds", "1", "--tasks", "5000"]
            .into_iter()
            .chain(["--seconds", "0.3", "--interval-ms", "50"])
            .collect::<Vec<_>>(),
        "memory_burst",
    );
    assert!(md.contains("| weft-mt |") && md.contains("| tokio-mt |"), "{md}");
    for row in &rows {
        let samples = row["traces"][0]["samples"].as_array().unwrap();
        assert!(samples.len() >= 4, "{row}");
        // weft's samples carry the arena metric, tokio's do not.
        let weft = row["runtime"].as_str().unwrap().starts_with("weft");
        assert_eq!(!samples[0][2].is_null(), weft, "{row}");
    }
}

#[test]
fn memory_burst_refuses_async_std() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_weft-lab"))
        .args(["memory-burst", "--runtimes", "async-std", "--rounds", "1", "--tasks", "10", "--seconds", "0.1"])
        .args(["--out", "/nonexistent-weft-lab-out"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("async-std"), "{}", String::from_utf8_lossy(&out.stderr));
}
