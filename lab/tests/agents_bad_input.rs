//! Bad input from the model server, on every runtime's client path: each fault ends the
//! affected agent's call with a typed error within the (short, in tests) idle timeout, while
//! the agent on the healthy instance completes; and the study marks such a run failed.

mod common;

use std::time::Duration;

use weft_lab::agents::agent::{generate_reports, AgentSpec, CoordKind};
use weft_lab::agents::client::{stream_call, AdapterSleep, CallError, Endpoint, HyperClient};
use weft_lab::agents::hosts::{self, AgentRuntime, RunPlan, SpawnMode};
use weft_lab::framework::ollama::{Fault, Profile, Sim, SimConfig};

const IDLE: Duration = Duration::from_secs(1);

/// The fast test profile, without slowdown at full occupancy.
fn tiny() -> Profile {
    common::tiny_profile(1.0, 12)
}

/// Instance 0 faulty, instance 1 healthy.
fn sim(fault: Fault) -> Sim {
    let mut c = SimConfig::new(tiny());
    c.faults = vec![Some(fault), None];
    Sim::start(c).unwrap()
}

fn data() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("weft-lab-agents-test-{}", std::process::id()));
    generate_reports(&d, 3).unwrap();
    d
}

fn spec(name: &str, url: &str, data: &std::path::Path) -> AgentSpec {
    AgentSpec {
        name: name.into(),
        endpoint: Endpoint::parse(url).unwrap(),
        model: "gemma3:latest".into(),
        options: serde_json::json!({"num_predict": 8}),
        data_dir: data.to_path_buf(),
        idle_timeout: IDLE,
        openai: false,
    }
}

/// A concurrent plan for `agents` with the test's small pool sizes; `exe` is the binary that
/// hosts async-std's rows.
fn plan(agents: Vec<AgentSpec>, spawn: SpawnMode, exe: &str) -> RunPlan {
    RunPlan {
        agents,
        spawn,
        coordinator: CoordKind::None,
        permits: 2,
        workers: 2,
        bridge_workers: 2,
        bridge: weft_lab::agents::client::BridgeKind::Enter,
        sequential: false,
        exe: Some(exe.into()),
    }
}

/// Runs the faulty and the healthy agent together on every runtime.
fn on_every_runtime(fault: Fault, expect: &str) {
    // async-std's rows run in a `weft-lab __agents` child (its executor is a global).
    let s = sim(fault);
    let d = data();
    for rt in AgentRuntime::ALL {
        for spawn in [SpawnMode::Join, SpawnMode::Tasks] {
            let agents = vec![spec("faulty", &s.urls()[0], &d), spec("healthy", &s.urls()[1], &d)];
            let plan = plan(agents, spawn, env!("CARGO_BIN_EXE_weft-lab"));
            let b = hosts::run(rt, &plan).unwrap();
            let faulty =
                b.agents[0].error.as_deref().unwrap_or_else(|| panic!("{}: the faulty agent succeeded", rt.name()));
            assert!(faulty.contains(expect), "{} {:?}: {faulty:?} lacks {expect:?}", rt.name(), spawn);
            assert!(b.agents[1].ok(), "{}: the healthy agent failed: {:?}", rt.name(), b.agents[1].error);
            assert_eq!(b.agents[1].calls.len(), 2);
            assert_eq!(b.agents[1].calls[1].eval_count, 8);
        }
    }
}

#[test]
fn malformed_line() {
    on_every_runtime(Fault::Malformed { after: 3 }, "malformed stream line");
}

#[test]
fn truncated_stream() {
    on_every_runtime(Fault::Truncate { after: 3 }, "stream ended before done");
}

#[test]
fn mid_stream_error() {
    on_every_runtime(Fault::MidStreamError { after: 2 }, "server error mid-stream: simulated runner failure");
}

#[test]
fn stall_after_headers() {
    on_every_runtime(Fault::Stall { after: 0, duration: Duration::from_secs(20) }, "no data for 1.0 s");
}

#[test]
fn stall_mid_stream() {
    on_every_runtime(Fault::Stall { after: 4, duration: Duration::from_secs(20) }, "no data for 1.0 s");
}

#[test]
fn slow_headers() {
    on_every_runtime(Fault::SlowHeaders(Duration::from_secs(20)), "no data for 1.0 s");
}

#[test]
fn non_json_500() {
    on_every_runtime(Fault::NonJson500, "HTTP 500: non-JSON body");
}

#[test]
fn busy_503() {
    on_every_runtime(Fault::Busy, "HTTP 503: server busy");
}

/// The error values themselves are typed (checked once, on weft's hyper client).
#[test]
fn errors_are_typed() {
    use weft_lab::framework::adapter::{Adapter, Flavor, RtConfig};
    use weft_lab::framework::runtimes::weft::Weft;
    type Check = fn(&CallError) -> bool;
    let cases: [(Fault, Check); 4] = [
        (Fault::Malformed { after: 1 }, |e| matches!(e, CallError::Malformed(_))),
        (Fault::Truncate { after: 1 }, |e| matches!(e, CallError::Truncated(_))),
        (Fault::MidStreamError { after: 1 }, |e| matches!(e, CallError::Server(m) if m == "simulated runner failure")),
        (Fault::Busy, |e| matches!(e, CallError::Status { status: 503, .. })),
    ];
    let rt = Weft::build(&RtConfig::new(Flavor::MultiThread, 2)).unwrap();
    for (fault, check) in cases {
        let s = sim(fault);
        let ep = Endpoint::parse(&s.urls()[0]).unwrap();
        let body = serde_json::to_vec(&serde_json::json!({"model": "gemma3:latest", "prompt": "x"})).unwrap();
        let client = HyperClient::<Weft>::default();
        let err =
            rt.block_on(stream_call::<AdapterSleep<Weft>, _>(&client, &ep, "/api/generate", body, IDLE)).unwrap_err();
        assert!(check(&err), "{fault:?} gave {err:?}");
    }
}

/// A faulty server fails the run in the study's records instead of counting as fast.
#[test]
fn study_marks_failed_runs() {
    use weft_lab::agents::study::{run_matrix, StudyOptions, CONFIGS};
    let s = sim(Fault::MidStreamError { after: 1 });
    let o = StudyOptions {
        profile: tiny(),
        runtimes: vec![AgentRuntime::WeftMt],
        configs: vec![CONFIGS[2]],
        runs: 1,
        spawn: SpawnMode::Join,
        coordinator: CoordKind::None,
        endpoints: s.urls().iter().map(|u| Endpoint::parse(u).unwrap()).collect(),
        model: "gemma3:latest".into(),
        data_dir: data(),
        workers: 2,
        bridge_workers: 2,
        bridge: weft_lab::agents::client::BridgeKind::Enter,
        idle_timeout: IDLE,
        permits: 2,
        verbose: false,
        openai: false,
        exe: None,
    };
    let runs = run_matrix(&o);
    assert_eq!(runs.len(), 1);
    assert!(runs[0].failed);
    assert!(runs[0].error.as_deref().unwrap().contains("collector"));
}

/// async-std's child process crashing or replying garbage is an error for its row, not a hang.
#[test]
fn async_std_child_that_fails_is_an_error() {
    let s = sim(Fault::Malformed { after: 1_000 });
    let d = data();
    for (exe, expect) in [("/bin/false", "exited with"), ("/bin/true", "")] {
        let plan = plan(vec![spec("a", &s.urls()[0], &d)], SpawnMode::Join, exe);
        let err = hosts::run(AgentRuntime::AsyncStd, &plan).unwrap_err();
        assert!(err.contains(expect), "{exe}: {err}");
        // `true` exits 0 at once: either the plan's pipe broke or the (empty) reply is bad.
        assert!(err.contains("exited with") || err.contains("sending the plan") || err.contains("bad reply"), "{err}");
    }
}
