//! `weft-lab memory-per-task` end to end, briefly: one child process per runtime per round,
//! every task checked parked and then joined, the table and JSON written.

mod common;

#[test]
fn memory_per_task_runs_a_child_per_sample_and_writes_the_table() {
    let args =
        ["memory-per-task", "--runtimes", "weft-mt,tokio-mt", "--workers", "2", "--rounds", "2", "--tasks", "5000"];
    let (md, rows) = common::run_study(&args, "memory_per_task");
    assert!(md.contains("| weft-mt | 5000 |") && md.contains("| tokio-mt | 5000 |"), "{md}");
    for row in &rows {
        assert_eq!(row["bytes_per_task"].as_array().unwrap().len(), 2, "{row}");
    }
}
