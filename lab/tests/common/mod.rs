//! Shared helpers for the integration tests: synthetic measurements with known samples, a fast
//! simulator profile, and a study run end to end.
// Each test binary includes this module and uses only some of it.
#![allow(dead_code)]

use std::time::Duration;

use weft_lab::framework::measure::{Measured, Status};
use weft_lab::framework::ollama::Profile;
use weft_lab::framework::results::{self, Machine, Results, Settings};
use weft_lab::framework::runtimes::RuntimeId;
use weft_lab::framework::workloads::Workload;

pub fn measured(workload: Workload, scale: u64, runtime: RuntimeId, samples: &[u64]) -> Measured {
    Measured {
        workload,
        scale,
        runtime,
        label: runtime.name().into(),
        status: Status::Ok,
        samples_ns: samples.to_vec(),
        long_polls: 0,
    }
}

pub fn with_status(mut m: Measured, status: Status) -> Measured {
    m.samples_ns.clear();
    m.status = status;
    m
}

/// Samples around `base` with ±2% deterministic jitter.
pub fn around(base: u64, n: usize) -> Vec<u64> {
    (0..n).map(|i| base + base * [0, 2, 1, 3, 2, 4, 1, 0, 3, 2][i % 10] / 100).collect()
}

pub fn assemble(measured: &[Measured]) -> Results {
    let settings =
        Settings { workers: 2, reps: 5, warmup: 1, runtimes: vec!["weft-mt".into(), "tokio-mt".into()], filter: None };
    results::assemble(measured, Machine::detect(), "quick", settings)
}

/// A simulator profile fast enough for tests: 200 µs a token, millisecond prefill and loads,
/// light jitter. The load factor at full occupancy and the default token count are what the
/// tests vary.
pub fn tiny_profile(full_load_factor: f64, default_predict: u32) -> Profile {
    Profile {
        name: "test",
        inter_token: Duration::from_micros(200),
        prefill_overhead: Duration::from_millis(1),
        prefill_per_token: Duration::from_micros(1),
        load: Duration::from_millis(2),
        full_load_factor,
        jitter: 0.05,
        default_predict,
    }
}

/// Runs `weft-lab ARGS --out DIR` in a fresh temporary DIR, checks it succeeded, and returns the
/// study's `STEM.md` and its `STEM.json` rows (the directory is removed).
pub fn run_study(args: &[&str], stem: &str) -> (String, Vec<serde_json::Value>) {
    // Tests of one binary run in parallel: each run gets its own directory.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = std::env::temp_dir().join(format!("weft-lab-{stem}-{}-{n}", std::process::id()));
    let status =
        std::process::Command::new(env!("CARGO_BIN_EXE_weft-lab")).args(args).arg("--out").arg(&out).status().unwrap();
    assert!(status.success(), "weft-lab {args:?} failed");
    let md = std::fs::read_to_string(out.join(format!("{stem}.md"))).unwrap();
    let rows = serde_json::from_str(&std::fs::read_to_string(out.join(format!("{stem}.json"))).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    (md, rows)
}
