//! `weft-lab smoke` must pass: every workload once, tiny sizes, every built-in runtime.
//! Also checks the sampler's interleaving on a real runtime.

use weft_lab::framework::checks::{self, SmokeHook, SmokeOptions};
use weft_lab::framework::measure::{self, Cell, Contender, Options, Status};
use weft_lab::framework::runtimes::RuntimeId;
use weft_lab::framework::workloads::Workload;

fn exe() -> std::path::PathBuf {
    env!("CARGO_BIN_EXE_weft-lab").into()
}

#[test]
fn smoke_passes_on_every_runtime() {
    let runtimes = RuntimeId::ALL.to_vec();
    let agents = [SmokeHook { name: "agents", run: weft_lab::agents::smoke }];
    let report = checks::run(
        &SmokeOptions {
            runtimes,
            filter: vec![],
            workers: 2,
            exe: exe(),
            verbose: false,
            timeout: std::time::Duration::from_secs(30),
        },
        &agents,
    );
    assert!(report.ok(), "{}\n{}", report.summary(), report.failures.join("\n"));
    assert!(report.passed >= 19 * 4 + 16 * 2, "{}", report.summary());
}

#[test]
fn sampler_interleaves_and_counts_only_the_counted_rounds() {
    let contenders = vec![
        Contender::default_for(RuntimeId::TokioMt, 2),
        Contender::default_for(RuntimeId::Smol, 2),
        Contender::default_for(RuntimeId::AsyncStd, 2),
    ];
    let cells = vec![Cell { workload: Workload::SpawnInside, scale: 100, contenders }];
    let measured = measure::run(
        &cells,
        &Options { reps: 3, warmup: 1, quiet: true, exe: exe(), sample_timeout: std::time::Duration::from_secs(60) },
    );
    assert_eq!(measured.len(), 3);
    for m in &measured {
        assert_eq!(m.status, Status::Ok, "{}", m.label);
        assert_eq!(m.samples_ns.len(), 3, "{}", m.label);
        assert!(m.samples_ns.iter().all(|&ns| ns > 0));
    }
}
