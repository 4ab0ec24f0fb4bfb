//! Agent rows in a child process: async-std's (`weft-lab __agents --runtime async-std`)
//! and `weft-mt+reqwest-patched` (`lab/services/agents-reqwest`, built with tokio patched to
//! weft: a graph the lab's own, which links the real tokio, cannot be).
//!
//! async-std's executor is a process-wide global that can be neither sized after first use nor
//! shut down, so, like the micro suite's `__sample` children (`measure.rs`), it never runs in the
//! lab's own process: the parent writes the [`RunPlan`] as JSON to the child's stdin, the child
//! builds async-std (sized by `ASYNC_STD_THREAD_COUNT`), runs the plan against the same endpoints
//! and prints the [`Batch`] as one JSON line. The simulator stays in the parent, so the batch's
//! CPU time is the child's timed part *plus* the parent's CPU over the child's life (the
//! simulator's threads; the parent's own thread only waits) — the same "client + simulator"
//! figure the in-process hosts report.
//!
//! A child that crashes, prints garbage or outlives its deadline is an error for that row, never
//! a hang of the study. The deadline is generous (every agent's calls have their own idle
//! timeout), it only guards against a wedged child.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::hosts::{Batch, RunPlan};
use crate::agents::hosts::AgentRuntime;
use crate::framework::ollama::process_cpu;
use crate::framework::runtimes::async_std::CHILD_ENV;

/// Runs `plan` on `rt` in a child process of `plan.exe`.
pub fn run_in_child(rt: AgentRuntime, plan: &RunPlan) -> Result<Batch, String> {
    let exe =
        plan.exe.as_ref().ok_or_else(|| format!("{} runs in a child process: no weft-lab binary given", rt.name()))?;
    let mut command = Command::new(exe);
    command
        .args(["__agents", "--runtime", rt.name()])
        .env(CHILD_ENV, "1")
        .env("ASYNC_STD_THREAD_COUNT", plan.workers.to_string());
    run_command(rt, command, plan)
}

/// `weft-mt+reqwest-patched`: the plan run by `lab/services/agents-reqwest`, the same workflow
/// (`weft_lab_agent`) compiled with tokio patched to weft, so reqwest runs on weft natively.
/// Built on first use (release, `--locked`, into `target/agents-reqwest`; CI's smoke run sets
/// `WEFT_LAB_SERVICES_DEBUG=1` and `WEFT_LAB_SERVICES_TARGET_DIR` to build it unoptimised into
/// the target directory its other patched builds share).
pub fn run_patched(plan: &RunPlan) -> Result<Batch, String> {
    static EXE: std::sync::OnceLock<Result<std::path::PathBuf, String>> = std::sync::OnceLock::new();
    let exe = EXE
        .get_or_init(|| {
            let target = std::env::var_os("WEFT_LAB_SERVICES_TARGET_DIR")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/agents-reqwest"));
            let debug = std::env::var_os("WEFT_LAB_SERVICES_DEBUG").is_some_and(|v| v == "1");
            crate::framework::services::expect_only_the_facade("agents-reqwest")?;
            crate::framework::services::build("agents-reqwest", "agents-reqwest", &target, debug)
        })
        .clone()?;
    run_command(AgentRuntime::WeftMtReqwestPatched, Command::new(exe), plan)
}

/// Runs `plan` in `command`'s process: the plan as JSON on its stdin, `Result<Batch, String>`
/// as one JSON line back on its stdout.
fn run_command(rt: AgentRuntime, mut command: Command, plan: &RunPlan) -> Result<Batch, String> {
    let json = serde_json::to_string(plan).map_err(|e| format!("encoding the plan: {e}"))?;
    let cpu0 = process_cpu();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting the {} child: {e}", rt.name()))?;
    // The plan is small; the reply may exceed a pipe buffer, so it is read on its own thread
    // while this one watches the deadline.
    let mut stdin = child.stdin.take().expect("piped stdin");
    let written = stdin.write_all(json.as_bytes());
    drop(stdin);
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).map(|_| s)
    });
    let per_agent = plan.agents.iter().map(|a| a.idle_timeout * 4).sum::<Duration>();
    let deadline = Instant::now() + Duration::from_secs(600) + per_agent;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} child still running after its deadline: killed", rt.name()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for the {} child: {e}", rt.name())),
        }
    };
    let parent_cpu = process_cpu().saturating_sub(cpu0);
    let out = reader.join().map_err(|_| "the reply reader panicked".to_string())?.map_err(|e| e.to_string())?;
    let line = out.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    // The exit status first: a child that died early also broke the plan's pipe.
    if !status.success() {
        return Err(format!("{} child exited with {status}: {line}", rt.name()));
    }
    written.map_err(|e| format!("sending the plan to the {} child: {e}", rt.name()))?;
    let reply: Result<Batch, String> =
        serde_json::from_str(line).map_err(|e| format!("bad reply from the {} child ({e}): {line:.200}", rt.name()))?;
    let mut batch = reply?;
    batch.cpu += parent_cpu;
    Ok(batch)
}

/// The child side: reads a plan from stdin, runs it, prints `Result<Batch, String>` as JSON.
pub fn child_main(runtime: &str) -> Result<(), String> {
    let rt = AgentRuntime::by_name(runtime).ok_or_else(|| format!("unknown runtime {runtime:?}"))?;
    if std::env::var_os(CHILD_ENV).is_none() {
        return Err("__agents is started by `weft-lab agents`, not by hand".into());
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| format!("reading the plan: {e}"))?;
    let plan: RunPlan = serde_json::from_str(&input).map_err(|e| format!("bad plan: {e}"))?;
    let reply = super::hosts::run(rt, &plan);
    println!("{}", serde_json::to_string(&reply).map_err(|e| e.to_string())?);
    Ok(())
}
