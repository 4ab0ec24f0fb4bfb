//! `weft-lab memory-per-task` end to end, briefly: one child process per runtime per round,
//! every task checked parked and then joined, the table and JSON written.

#[test]
fn memory_per_task_runs_a_child_per_sample_and_writes_the_table() {
    let out = std::env::temp_dir().join(format!("weft-lab-mem-{}", std::process::id()));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_weft-lab"))
        .args(["memory-per-task", "--runtimes", "weft-mt,tokio-mt", "--workers", "2", "--rounds", "2"])
        .args(["--tasks", "5000", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let md = std::fs::read_to_string(out.join("memory_per_task.md")).unwrap();
    assert!(md.contains("| weft-mt | 5000 |") && md.contains("| tokio-mt | 5000 |"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("memory_per_task.json")).unwrap()).unwrap();
    for row in json.as_array().unwrap() {
        assert_eq!(row["bytes_per_task"].as_array().unwrap().len(), 2, "{row}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
