//! The study: the matrix of TR115 (*Technical Report 115 v2: Rust Async Runtime Performance Deep
//! Dive*, docs/notes/reference-reports.md; configs × runs × runtimes, interleaved) with a measured
//! sequential baseline after every concurrent run, and the fleet-scaling sweep.
//!
//! Interleaving: within one run index every runtime runs once, in an order rotated by the run
//! index, so a noisy neighbour hurts all rows alike. Each runtime is built for the run and
//! dropped after it.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::agent::{AgentOutcome, AgentSpec, CoordKind};
use super::client::Endpoint;
use super::hosts::{self, AgentRuntime, Batch, RunPlan, SpawnMode};
use crate::framework::ollama::{Profile, Sim};
use crate::framework::stats;

/// One TR115 configuration: per-agent `num_gpu`/`num_ctx` (`None` = the model's defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StudyConfig {
    pub id: &'static str,
    pub agents: [Option<(u32, u32)>; 2],
}

/// TR115's six configurations (GPU layers / context per agent, temperature 1.0).
pub const CONFIGS: [StudyConfig; 6] = [
    StudyConfig { id: "baseline_vs_chimera", agents: [None, Some((80, 512))] },
    StudyConfig { id: "chimera_hetero", agents: [Some((80, 512)), Some((100, 1024))] },
    StudyConfig { id: "chimera_homo_gpu80_ctx512", agents: [Some((80, 512)), Some((80, 512))] },
    StudyConfig { id: "chimera_homo_gpu80_ctx1024", agents: [Some((80, 1024)), Some((80, 1024))] },
    StudyConfig { id: "chimera_homo_gpu80_ctx2048", agents: [Some((80, 2048)), Some((80, 2048))] },
    StudyConfig { id: "chimera_homo_gpu100_ctx512", agents: [Some((100, 512)), Some((100, 512))] },
];

/// Everything a study needs.
#[derive(Clone, Debug)]
pub struct StudyOptions {
    pub profile: Profile,
    pub runtimes: Vec<AgentRuntime>,
    pub configs: Vec<StudyConfig>,
    pub runs: usize,
    pub spawn: SpawnMode,
    pub coordinator: CoordKind,
    pub endpoints: Vec<Endpoint>,
    pub model: String,
    pub data_dir: PathBuf,
    pub workers: usize,
    pub bridge_workers: usize,
    pub bridge: super::client::BridgeKind,
    pub idle_timeout: Duration,
    /// Server slots in total (semaphore permits).
    pub permits: usize,
    pub verbose: bool,
    /// The endpoints are OpenAI-compatible servers.
    pub openai: bool,
    /// The weft-lab binary (async-std's rows run in a child process of it).
    pub exe: Option<PathBuf>,
}

/// Per-agent numbers of one run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AgentRecord {
    pub name: String,
    pub total_s: f64,
    pub ttft_ms: Vec<f64>,
    pub client_tok_s: Vec<f64>,
    pub server_tok_s: Vec<f64>,
    pub eval_count: Vec<u64>,
    pub error: Option<String>,
}

/// One concurrent run and its sequential baseline.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub runtime: String,
    pub config: String,
    pub agents: usize,
    pub run: usize,
    pub wall_s: f64,
    /// Σ agent times inside the concurrent run (TR115's "sequential time").
    pub sequential_estimated_s: f64,
    /// The same agents run one after another, right after.
    pub sequential_measured_s: f64,
    pub efficiency_pct: f64,
    pub measured_efficiency_pct: f64,
    /// Any TTFT above 3 s (scaled by the profile), or speedup < 1.5 (the study's code).
    pub contention: bool,
    pub failed: bool,
    pub error: Option<String>,
    pub per_agent: Vec<AgentRecord>,
}

fn record(a: &AgentOutcome) -> AgentRecord {
    AgentRecord {
        name: a.name.clone(),
        total_s: a.total_ms / 1e3,
        ttft_ms: a.calls.iter().map(|c| c.ttft_ms).collect(),
        client_tok_s: a.calls.iter().map(|c| c.client_tok_s).collect(),
        server_tok_s: a.calls.iter().map(|c| c.server_tok_s).collect(),
        eval_count: a.calls.iter().map(|c| c.eval_count).collect(),
        error: a.error.clone(),
    }
}

/// The agent specs of one configuration (agent `i` talks to endpoint `i mod endpoints`).
pub fn specs(o: &StudyOptions, config: &StudyConfig, n: usize, seed: u64) -> Vec<AgentSpec> {
    const NAMES: [&str; 2] = ["collector", "insight"];
    (0..n)
        .map(|i| {
            let mut options = serde_json::json!({
                "temperature": 1.0, "num_predict": o.profile.default_predict, "seed": seed * 1000 + i as u64,
            });
            if let Some((gpu, ctx)) = config.agents[i % 2] {
                options["num_gpu"] = gpu.into();
                options["num_ctx"] = ctx.into();
            }
            AgentSpec {
                name: if n <= 2 { NAMES[i].to_string() } else { format!("{}-{i}", NAMES[i % 2]) },
                endpoint: o.endpoints[i % o.endpoints.len()].clone(),
                model: o.model.clone(),
                options,
                data_dir: o.data_dir.clone(),
                idle_timeout: o.idle_timeout,
                openai: o.openai,
            }
        })
        .collect()
}

fn plan(
    o: &StudyOptions,
    agents: Vec<AgentSpec>,
    sequential: bool,
    spawn: SpawnMode,
    coordinator: CoordKind,
) -> RunPlan {
    RunPlan {
        agents,
        spawn,
        coordinator,
        permits: o.permits,
        workers: o.workers,
        bridge_workers: o.bridge_workers,
        bridge: o.bridge,
        sequential,
        exe: o.exe.clone(),
    }
}

/// One untimed sequential pass, so every instance has this config's runner loaded before the
/// first timed run (otherwise whichever runtime runs first pays the reloads).
fn warm_up(o: &StudyOptions, config: &StudyConfig, n: usize) {
    if let Some(&rt) = o.runtimes.first() {
        let _ = hosts::run(rt, &plan(o, specs(o, config, n, 0), true, SpawnMode::Join, CoordKind::None));
    }
}

fn first_error(b: &Batch) -> Option<String> {
    b.agents.iter().find_map(|a| a.error.as_ref().map(|e| format!("{}: {e}", a.name)))
}

/// TTFT above which a run counts as contended: the study's 3 s, scaled with the profile.
pub fn contention_ttft_ms(profile: &Profile) -> f64 {
    3000.0 * profile.inter_token.as_secs_f64() / Profile::full().inter_token.as_secs_f64()
}

/// Runs the matrix; every run of every runtime lands in the result, failed ones marked.
pub fn run_matrix(o: &StudyOptions) -> Vec<RunRecord> {
    let mut out = Vec::new();
    for config in &o.configs {
        warm_up(o, config, 2);
        for run in 0..o.runs {
            let k = o.runtimes.len();
            for j in 0..k {
                let rt = o.runtimes[(j + run) % k];
                let agents = specs(o, config, 2, run as u64);
                let conc = hosts::run(rt, &plan(o, agents.clone(), false, o.spawn, o.coordinator));
                let seq = hosts::run(rt, &plan(o, agents, true, o.spawn, CoordKind::None));
                let rec = match (conc, seq) {
                    (Ok(c), Ok(s)) => to_record(o, rt, config.id, run, &c, &s),
                    (Err(e), _) | (_, Err(e)) => RunRecord {
                        runtime: rt.name().into(),
                        config: config.id.into(),
                        agents: 2,
                        run,
                        wall_s: 0.0,
                        sequential_estimated_s: 0.0,
                        sequential_measured_s: 0.0,
                        efficiency_pct: 0.0,
                        measured_efficiency_pct: 0.0,
                        contention: false,
                        failed: true,
                        error: Some(e),
                        per_agent: Vec::new(),
                    },
                };
                if o.verbose {
                    eprintln!(
                        "{:<16} {:<28} run {} efficiency {:>6.2}% (measured {:>6.2}%) wall {:.3} s{}",
                        rec.runtime,
                        rec.config,
                        run + 1,
                        rec.efficiency_pct,
                        rec.measured_efficiency_pct,
                        rec.wall_s,
                        rec.error.as_ref().map(|e| format!(" FAILED: {e}")).unwrap_or_default()
                    );
                }
                out.push(rec);
            }
        }
    }
    out
}

fn to_record(o: &StudyOptions, rt: AgentRuntime, config: &str, run: usize, c: &Batch, s: &Batch) -> RunRecord {
    let n = c.agents.len();
    let wall = c.wall.as_secs_f64();
    let est: f64 = c.agents.iter().map(|a| a.total_ms / 1e3).sum();
    let measured = s.wall.as_secs_f64();
    let speedup = est / wall;
    let limit = contention_ttft_ms(&o.profile);
    let error = first_error(c).or_else(|| first_error(s).map(|e| format!("sequential baseline: {e}")));
    RunRecord {
        runtime: rt.name().into(),
        config: config.into(),
        agents: n,
        run,
        wall_s: wall,
        sequential_estimated_s: est,
        sequential_measured_s: measured,
        efficiency_pct: speedup / n as f64 * 100.0,
        measured_efficiency_pct: measured / wall / n as f64 * 100.0,
        contention: speedup < 1.5 || c.agents.iter().flat_map(|a| &a.calls).any(|call| call.ttft_ms > limit),
        failed: error.is_some(),
        error,
        per_agent: c.agents.iter().map(record).collect(),
    }
}

/// One fleet size on one runtime.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FleetRecord {
    pub runtime: String,
    pub agents: usize,
    pub wall_s: f64,
    pub efficiency_pct: f64,
    pub measured_efficiency_pct: f64,
    pub p50_ttft_ms: f64,
    pub p99_ttft_ms: f64,
    pub tokens: u64,
    pub client_cpu_ms: f64,
    pub sim_cpu_ms: f64,
    /// Client-side (runtime + HTTP client) CPU per streamed token.
    pub cpu_ns_per_token: f64,
    pub failed_agents: usize,
}

/// Agents of a fleet run one after another for its measured sequential baseline: all of them
/// up to this many, else this many evenly spaced ones, scaled by n ÷ k (128 agents one after
/// another would take minutes per runtime in `--quick`).
pub const FLEET_SEQUENTIAL_SAMPLE: usize = 8;

/// Fleet scaling: `sizes` agents at once (a task per agent, no coordinator) against a fixed
/// server; the measured baseline runs the same fleet's agents one after another (all of them,
/// or [`FLEET_SEQUENTIAL_SAMPLE`] evenly spaced ones scaled to n).
pub fn run_fleet(o: &StudyOptions, sizes: &[usize], sim: Option<&Sim>) -> Vec<FleetRecord> {
    let config = &CONFIGS[2];
    warm_up(o, config, o.endpoints.len().max(2));
    let mut out = Vec::new();
    for &n in sizes {
        for (j, _) in o.runtimes.iter().enumerate() {
            let rt = o.runtimes[(j + n) % o.runtimes.len()];
            let fleet = specs(o, config, n, 7);
            let k = n.clamp(1, FLEET_SEQUENTIAL_SAMPLE);
            let sample: Vec<AgentSpec> = (0..k).map(|i| fleet[i * n / k].clone()).collect();
            let single = hosts::run(rt, &plan(o, sample, true, SpawnMode::Tasks, CoordKind::None));
            let sim0 = sim.map(Sim::cpu).unwrap_or_default();
            let batch = hosts::run(rt, &plan(o, fleet, false, SpawnMode::Tasks, CoordKind::None));
            let sim_cpu = sim.map(Sim::cpu).unwrap_or_default().saturating_sub(sim0);
            let (Ok(single), Ok(batch)) = (single, batch) else {
                out.push(FleetRecord {
                    runtime: rt.name().into(),
                    agents: n,
                    wall_s: 0.0,
                    efficiency_pct: 0.0,
                    measured_efficiency_pct: 0.0,
                    p50_ttft_ms: f64::NAN,
                    p99_ttft_ms: f64::NAN,
                    tokens: 0,
                    client_cpu_ms: 0.0,
                    sim_cpu_ms: 0.0,
                    cpu_ns_per_token: f64::NAN,
                    failed_agents: n,
                });
                continue;
            };
            let wall = batch.wall.as_secs_f64();
            let est: f64 = batch.agents.iter().map(|a| a.total_ms / 1e3).sum();
            let ttfts: Vec<f64> = batch.agents.iter().flat_map(|a| a.calls.iter().map(|c| c.ttft_ms)).collect();
            let tokens: u64 = batch.agents.iter().flat_map(|a| a.calls.iter().map(|c| c.tokens)).sum();
            let client_cpu = batch.cpu.saturating_sub(sim_cpu);
            let pct = |p| if ttfts.is_empty() { f64::NAN } else { stats::percentile(&ttfts, p) };
            let rec = FleetRecord {
                runtime: rt.name().into(),
                agents: n,
                wall_s: wall,
                efficiency_pct: est / wall / n as f64 * 100.0,
                measured_efficiency_pct: single.wall.as_secs_f64() * (n as f64 / k as f64) / wall / n as f64 * 100.0,
                p50_ttft_ms: pct(50.0),
                p99_ttft_ms: pct(99.0),
                tokens,
                client_cpu_ms: client_cpu.as_secs_f64() * 1e3,
                sim_cpu_ms: sim_cpu.as_secs_f64() * 1e3,
                cpu_ns_per_token: if tokens > 0 { client_cpu.as_nanos() as f64 / tokens as f64 } else { f64::NAN },
                failed_agents: batch.agents.iter().filter(|a| !a.ok()).count(),
            };
            if o.verbose {
                eprintln!(
                    "fleet {:>4} {:<16} efficiency {:>6.2}% (measured {:>6.2}%) p99 TTFT {:>8.1} ms, {:>7.0} ns CPU/token (sim {:.0} ms, client {:.0} ms)",
                    n, rec.runtime, rec.efficiency_pct, rec.measured_efficiency_pct, rec.p99_ttft_ms, rec.cpu_ns_per_token, rec.sim_cpu_ms, rec.client_cpu_ms
                );
            }
            out.push(rec);
        }
    }
    out
}
