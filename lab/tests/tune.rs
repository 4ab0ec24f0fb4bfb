//! `weft-lab tune` end to end, on tiny deterministic `sh -c` commands: the child appends the
//! knob variables it saw to a log file (the run order, recorded at the source) and prints a
//! metric computed from them, so every ratio and verdict is exact. No assertion on timing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_weft-lab")
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-lab-tune-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tune(args: &[&str], script: &str) -> Output {
    let mut cmd = Command::new(exe());
    cmd.arg("tune").args(args).args(["--", "sh", "-c", script]);
    // A value exported by the caller must not leak into the default configuration.
    cmd.env("A", "99").env("WEFT_WORKER_THREADS", "99");
    cmd.output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `s` with every run of spaces collapsed to one (table columns are padded).
fn squash(s: &str) -> String {
    s.split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

fn log_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_string).collect()
}

#[test]
fn one_knob_interleaved_and_rotated_then_confirmed() {
    let dir = scratch("interleave");
    let log = dir.join("log");
    // Metric: 10 + WEFT_WORKER_THREADS (5 when unset): the default 15, "1" 11, "2" 12.
    let script = format!(
        "echo \"${{WEFT_WORKER_THREADS:-unset}} ${{WEFT_METRICS_DUMP:+dump}}\" >> {}; echo \"v=$((10 + ${{WEFT_WORKER_THREADS:-5}}))\"",
        log.display()
    );
    let out = tune(&["--reps", "3", "--knob", "WEFT_WORKER_THREADS=1,2", "--metric", r"regex:v=(\d+)"], &script);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let seen = log_lines(&log);
    assert!(seen.iter().all(|l| l.ends_with(" dump")), "every run gets WEFT_METRICS_DUMP: {seen:?}");
    let order: Vec<&str> = seen.iter().map(|l| l.split(' ').next().unwrap()).collect();
    #[rustfmt::skip]
    let expected = [
        // Round 1: one warm-up run of the default, then default, 1, 2 round-robin; each rep
        // starts one configuration later.
        "unset",  "unset", "1", "2",  "1", "2", "unset",  "2", "unset", "1",
        // Round 2: a warm-up, then the default against the winner (the combination of one
        // knob's winner), with twice the reps.
        "unset",  "unset", "1",  "1", "unset",  "unset", "1",  "1", "unset",  "unset", "1",  "1", "unset",
    ];
    assert_eq!(order, expected);
    assert!(
        squash(&stdout).contains("WEFT_WORKER_THREADS=1 11 0.733 [0.733, 0.733] better (CI excludes 1)"),
        "{stdout}"
    );
    assert!(squash(&stdout).contains("WEFT_WORKER_THREADS=2 12 0.800 [0.800, 0.800] better"), "{stdout}");
    assert!(stdout.contains("best: WEFT_WORKER_THREADS=1 — 0.733× the default"), "{stdout}");
    assert!(stdout.contains("deploy:\n  export WEFT_WORKER_THREADS=1\n"), "{stdout}");
    assert!(stdout.contains("no weft runtime reported"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn knobs_vary_alone_then_the_combination_of_winners_is_confirmed() {
    let dir = scratch("combination");
    let log = dir.join("log");
    // Metric A + B (3 each when unset): default 6; A=1 and B=1 give 4; both together 2.
    let script =
        format!("echo \"A=${{A:-}} B=${{B:-}}\" >> {}; echo \"v=$(( ${{A:-3}} + ${{B:-3}} ))\"", log.display());
    let out = tune(&["--reps", "3", "--knob", "A=1,2", "--knob", "B=1,2", "--metric", r"regex:v=(\d+)"], &script);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let seen = log_lines(&log);
    // Each round starts with one warm-up run of the default.
    assert_eq!((seen.len(), seen[0].as_str(), seen[16].as_str()), (1 + 15 + 1 + 18, "A= B=", "A= B="), "{seen:?}");
    let (round1, round2) = (&seen[1..16], &seen[17..]);
    assert!(round1.iter().all(|l| !(l.starts_with("A=1") || l.starts_with("A=2")) || l.ends_with("B=")), "{seen:?}");
    let mut distinct: Vec<&str> = round1.iter().map(String::as_str).collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct, ["A= B=", "A= B=1", "A= B=2", "A=1 B=", "A=2 B="]);
    let mut confirmed: Vec<&str> = round2.iter().map(String::as_str).collect();
    confirmed.sort();
    let expected: Vec<&str> = ["A= B=", "A=1 B=", "A=1 B=1"].iter().flat_map(|c| [*c; 6]).collect();
    assert_eq!(confirmed, expected);
    assert!(stdout.contains("best: A=1 B=1 — 0.333× the default"), "{stdout}");
    assert!(stdout.contains("  export A=1\n  export B=1\n"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn higher_is_better_flips_the_verdict_and_a_tie_is_no_winner() {
    let script = "echo \"took ${A:-5} ms\"; echo \"took $((10 + ${A:-5})) ms\"";
    let out =
        tune(&["--reps", "3", "--knob", "A=1,5", "--metric", r"regex:took (\d+) ms", "--higher-is-better"], script);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The last match counts: default 15, A=1 11 (worse when higher is better), A=5 15 (tie).
    assert!(squash(&stdout).contains("A=1 11 0.733 [0.733, 0.733] worse (CI excludes 1)"), "{stdout}");
    assert!(squash(&stdout).contains("A=5 15 1.000 [1.000, 1.000] tie"), "{stdout}");
    assert!(stdout.contains("no configuration beats the default beyond noise (round 1)"), "{stdout}");
    assert!(!stdout.contains("round 2") && !stdout.contains("export "), "{stdout}");
}

#[test]
fn failing_configurations_are_reported_and_excluded() {
    let dir = scratch("failing");
    let log = dir.join("log");
    let script = format!(
        "echo \"${{K:-default}}\" >> {}; case \"$K\" in bad) echo oops >&2; exit 3;; silent) exit 0;; esac; echo v=7",
        log.display()
    );
    let out = tune(&["--reps", "3", "--knob", "K=good,bad,silent", "--metric", r"regex:v=(\d+)"], &script);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(squash(&stdout).contains("K=bad FAILED: exit status: 3; stderr ends: oops (excluded)"), "{stdout}");
    assert!(squash(&stdout).contains("K=silent FAILED: the metric pattern /v=(\\d+)/ did not match"), "{stdout}");
    assert!(stdout.contains("K=good") && stdout.contains("tie"), "{stdout}");
    assert!(stdout.contains("no configuration beats the default beyond noise"), "{stdout}");
    let seen = log_lines(&log);
    let count = |k: &str| seen.iter().filter(|l| *l == k).count();
    // A failed configuration is not run again.
    // (The default: one warm-up run and three measured ones.)
    assert_eq!((count("default"), count("good"), count("bad"), count("silent")), (4, 3, 1, 1), "{seen:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failing_default_ends_tune_with_a_clear_error() {
    let out = tune(&["--reps", "3", "--knob", "K=1"], "[ -n \"$K\" ] || exit 4");
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("the default configuration (no knob variable set) failed: exit status: 4"), "{stderr}");
}

#[test]
fn a_hung_command_is_killed_at_the_timeout() {
    // `sleep` is a grandchild (sh runs it): the whole process group must be killed, or its
    // open stdout would keep tune waiting.
    let script = "if [ \"$K\" = hang ]; then sleep 600; echo never; fi; echo v=1";
    let out = tune(&["--reps", "3", "--knob", "K=hang", "--timeout", "3s", "--metric", r"regex:v=(\d+)"], script);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(squash(&stdout).contains("K=hang FAILED: timed out after 3s (killed) (excluded)"), "{stdout}");
}

#[test]
fn bad_arguments_are_clear_errors() {
    for (args, expected) in [
        (&["--knob", "WEFT_WORKER_THREADS"][..], "expected NAME=v1,v2,..."),
        (&["--knob", "A=1,,2"], "empty value"),
        (&["--knob", "A=1", "--knob", "A=2"], "given twice"),
        (&["--metric", "regex:abc"], "needs a capture group"),
        (&["--metric", "cpu"], "expected wall, user+sys or regex:PATTERN"),
        (&["--reps", "2"], "at least 3"),
    ] {
        let out = tune(args, "true");
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?}: {stdout}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn time_metrics_run_and_weft_programs_get_a_diagnosis() {
    // The lab's console demo is a weft program with a 50 ms blocking poll in a loop, and a
    // Builder call fixing 2 workers (so the environment's worker count cannot reach it).
    let out = Command::new(exe())
        .args(["tune", "--reps", "3", "--knob", "WEFT_WORKER_THREADS=1", "--metric", "user+sys", "--"])
        .args([exe(), "console-demo", "--seconds", "0.5"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("metric user+sys (lower is better)"), "{stdout}");
    // Round 1 measures real CPU time: noise may make a knob look like a winner, and then the
    // confirmation round runs the default 6 more times. So the run counts are 3 or 6.
    let counted = |n: usize| format!("{n} runtime(s) over {n} run(s) ({n} multi-thread); e.g. 2 worker(s)");
    assert!(stdout.contains(&counted(3)) || stdout.contains(&counted(6)), "{stdout}");
    assert!(stdout.contains("note: WEFT_WORKER_THREADS=1 did not reach every runtime: some ran with 2"), "{stdout}");
    assert!(
        stdout.contains("long poll(s) ≥ 10 ms over 3 run(s)") || stdout.contains("long poll(s) ≥ 10 ms over 6 run(s)"),
        "{stdout}"
    );
    assert!(stdout.contains(" at lab/src/console_demo/mod.rs:"), "{stdout}");
}
