//! `weft-lab agents`: argument parsing, the pre-flight check of
//! every server (a one-line error naming the URL before any timing starts), and writing the
//! `agents` section into `results.json`/`report.md`/`report.html`.
//!
//! TR115 in the flags' help is *Technical Report 115 v2: Rust Async Runtime Performance Deep
//! Dive* (docs/notes/reference-reports.md).

use std::path::PathBuf;
use std::time::Duration;

use super::agent::{generate_reports, CoordKind};
use super::client::{BridgeKind, Endpoint};
use super::hosts::{AgentRuntime, SpawnMode};
use super::study::{self, StudyOptions, CONFIGS};
use super::summary::{self, AgentsSection};
use super::SECTION;
use crate::framework::checks::{SmokeOptions, SmokeReport};
use crate::framework::ollama::{Profile, Sim, SimConfig};

#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Quick profile (the default): the simulated model 20× faster, 2 runs per cell.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// TR115's matrix with realistic timings (≈ 41 tok/s, ≈ 1 s TTFT), 5 runs per cell.
    #[arg(long)]
    pub full: bool,
    /// Comma-separated runtimes (default: all eight; `weft-mt+reqwest-patched`, reqwest on weft
    /// natively through the tokio patch, runs only when named: it first builds its own binary).
    #[arg(long, value_delimiter = ',')]
    pub runtimes: Vec<String>,
    /// Comma-separated config ids or numbers 1–6 (default: all six).
    #[arg(long, value_delimiter = ',')]
    pub configs: Vec<String>,
    /// Runs per runtime × config.
    #[arg(long)]
    pub runs: Option<usize>,
    /// Fleet sizes (0 = no fleet sweep).
    #[arg(long, value_delimiter = ',', default_value = "2,8,32,128")]
    pub agents: Vec<usize>,
    /// Ollama server(s) to use instead of the embedded simulator (agent i → URL i mod n).
    #[arg(long, value_delimiter = ',')]
    pub ollama_url: Vec<String>,
    /// An OpenAI-compatible server (llama.cpp, vLLM): `/v1/chat/completions`.
    #[arg(long, value_delimiter = ',')]
    pub openai_url: Vec<String>,
    #[arg(long, default_value = "gemma3:latest")]
    pub model: String,
    /// `join` (one join of all agents in one task, as TR115's code) or `tasks`.
    #[arg(long, default_value = "join")]
    pub spawn: String,
    /// `none`, `semaphore` or `mutex`.
    #[arg(long, default_value = "none")]
    pub coordinator: String,
    /// Worker threads of multi-thread runtimes (default: the machine's cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Worker threads of the tokio bridge used by reqwest on non-tokio runtimes.
    #[arg(long, default_value_t = 2)]
    pub bridge_workers: usize,
    /// How `weft-mt+reqwest` reaches tokio: `enter` (Handle::enter per poll on a lab-owned
    /// runtime) or `async-compat` (the async-compat crate's global runtime).
    #[arg(long, default_value = "enter")]
    pub bridge: String,
    /// Seconds without a byte before a call fails.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// Reports directory for the data-summary step (default: generated under OUT).
    #[arg(long)]
    pub data: Option<PathBuf>,
    #[arg(long, default_value = "lab-results/agents")]
    pub out: PathBuf,
    /// Less output.
    #[arg(long)]
    pub quiet: bool,
}

fn default_workers() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

fn error_text(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v["error"].as_str().map(str::to_string).or_else(|| v["error"]["message"].as_str().map(str::to_string))
        })
        .unwrap_or_else(|| body.chars().take(120).collect())
}

/// Checks that `ep` answers, serves `model`, and is not busy: one short generation.
pub fn preflight(ep: &Endpoint, model: &str, openai: bool) -> Result<(), String> {
    let (path, body) = if openai {
        (
            "/v1/chat/completions",
            serde_json::json!({"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "stream": false}),
        )
    } else {
        (
            "/api/generate",
            serde_json::json!({"model": model, "prompt": "hi", "stream": false, "options": {"num_predict": 1}}),
        )
    };
    let (status, text) = crate::framework::http1::exchange(ep.addr, &ep.authority, "POST", path, &body.to_string())?;
    match status {
        200 => Ok(()),
        404 => Err(format!(
            "{}: model {model:?} not found ({}); pull it (`ollama pull {model}`) or pass --model",
            ep.base,
            error_text(&text)
        )),
        503 => Err(format!("{}: server busy ({}); retry later or raise OLLAMA_MAX_QUEUE", ep.base, error_text(&text))),
        s => Err(format!("{}: HTTP {s} on {path}: {}", ep.base, error_text(&text))),
    }
}

/// `weft-lab agents`.
pub fn agents_main(args: Args) -> Result<bool, String> {
    let full = args.full;
    let profile = if full { Profile::full() } else { Profile::quick() };
    let runtimes: Vec<AgentRuntime> = if args.runtimes.is_empty() {
        AgentRuntime::ALL.to_vec()
    } else {
        args.runtimes
            .iter()
            .map(|n| AgentRuntime::by_name(n).ok_or_else(|| format!("unknown runtime {n:?} (one of: {})", names())))
            .collect::<Result<_, _>>()?
    };
    let configs = if args.configs.is_empty() {
        CONFIGS.to_vec()
    } else {
        args.configs
            .iter()
            .map(|c| {
                c.parse::<usize>()
                    .ok()
                    .and_then(|i| CONFIGS.get(i.wrapping_sub(1)))
                    .or_else(|| CONFIGS.iter().find(|k| k.id == c))
                    .copied()
                    .ok_or_else(|| format!("unknown config {c:?} (1–6 or an id)"))
            })
            .collect::<Result<_, _>>()?
    };
    let spawn = SpawnMode::by_name(&args.spawn).ok_or("--spawn is join or tasks")?;
    let coordinator = CoordKind::by_name(&args.coordinator).ok_or("--coordinator is none, semaphore or mutex")?;
    let workers = args.workers.unwrap_or_else(default_workers);
    let bridge = BridgeKind::by_name(&args.bridge).ok_or("--bridge is enter or async-compat")?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let data_dir = match &args.data {
        Some(d) => d.clone(),
        None => {
            let d = args.out.join("data");
            generate_reports(&d, 24).map_err(|e| format!("generating {}: {e}", d.display()))?;
            d
        }
    };
    let openai = !args.openai_url.is_empty();
    let urls: Vec<String> = if openai { args.openai_url.clone() } else { args.ollama_url.clone() };
    let mut sim = None;
    let (endpoints, permits, server) = if urls.is_empty() {
        let mut config = SimConfig::new(profile.clone());
        config.models = vec![args.model.clone()];
        let s = Sim::start(config).map_err(|e| format!("starting the simulator: {e}"))?;
        let eps = s.urls().iter().map(|u| Endpoint::parse(u)).collect::<Result<Vec<_>, _>>()?;
        sim = Some(s);
        (eps, 2, format!("embedded simulator, 2 instances × 1 slot, {} profile", profile.name))
    } else {
        let eps = urls.iter().map(|u| Endpoint::parse(u)).collect::<Result<Vec<_>, _>>()?;
        (eps.clone(), eps.len(), urls.join(", "))
    };
    for ep in &endpoints {
        preflight(ep, &args.model, openai)?;
    }
    let options = StudyOptions {
        profile: profile.clone(),
        runtimes,
        configs,
        runs: args.runs.unwrap_or(if full { 5 } else { 2 }),
        spawn,
        coordinator,
        endpoints,
        model: args.model.clone(),
        data_dir,
        workers,
        bridge_workers: args.bridge_workers,
        bridge,
        idle_timeout: Duration::from_secs_f64(args.timeout),
        permits,
        verbose: !args.quiet,
        openai,
        exe: Some(std::env::current_exe().map_err(|e| format!("cannot find the weft-lab binary: {e}"))?),
    };
    let started = std::time::Instant::now();
    let runs = study::run_matrix(&options);
    drop(sim);
    let sizes: Vec<usize> = args.agents.iter().copied().filter(|&n| n > 0).collect();
    let fleet = if sizes.is_empty() {
        Vec::new()
    } else if urls.is_empty() {
        // A fixed server with room for the largest fleet that does not slow down with
        // occupancy: what is left of efficiency is the clients' (runtime + HTTP client).
        let mut config = SimConfig::new(profile.clone());
        config.models = vec![args.model.clone()];
        config.num_parallel = sizes.iter().max().copied().unwrap_or(2).div_ceil(2);
        config.profile.full_load_factor = 1.0;
        let s = Sim::start(config).map_err(|e| format!("starting the simulator: {e}"))?;
        let mut o = options.clone();
        o.endpoints = s.urls().iter().map(|u| Endpoint::parse(u)).collect::<Result<Vec<_>, _>>()?;
        study::run_fleet(&o, &sizes, Some(&s))
    } else {
        study::run_fleet(&options, &sizes, None)
    };
    let section = AgentsSection {
        profile: profile.name.to_string(),
        server,
        spawn: spawn.name().into(),
        coordinator: coordinator.name().into(),
        summary: summary::summarize(&runs),
        runs,
        fleet,
        notes: vec![
            format!("full profile calibrated to TR115's observations: {:.1} tok/s and ≈ 1 s TTFT per agent with two instances; quick = 20× faster", 1.0 / Profile::full().inter_token.as_secs_f64()),
            format!("study took {:.1} s; {} workers, tokio bridge {} workers, weft-mt+reqwest bridge {}, idle timeout {:.0} s", started.elapsed().as_secs_f64(), workers, args.bridge_workers, bridge.name(), args.timeout),
            format!("fleet measured efficiency: the fleet's agents run one after another (up to {k}; larger fleets: {k} evenly spaced agents, time scaled by n ÷ {k}) ÷ the concurrent wall ÷ n", k = study::FLEET_SEQUENTIAL_SAMPLE),
            "CPU times are nanosecond clocks (CLOCK_PROCESS_CPUTIME_ID; simulator threads from /proc/self/task/*/schedstat); client CPU = process CPU − simulator threads' CPU".into(),
        ],
    };
    let failed = section.runs.iter().any(|r| r.failed) || section.fleet.iter().any(|f| f.failed_agents > 0);
    let md = summary::markdown(&section);
    println!("{md}");
    let mut results = crate::framework::results::assemble(
        &[],
        crate::framework::results::Machine::detect(),
        profile.name,
        crate::framework::results::Settings {
            workers,
            reps: options.runs,
            warmup: 0,
            runtimes: options.runtimes.iter().map(|r| r.name().to_string()).collect(),
            filter: None,
        },
    );
    results.sections.insert(SECTION.study.into(), serde_json::to_value(&section).map_err(|e| e.to_string())?);
    let latest = args.out.join("latest");
    crate::framework::report::write_all(&latest, &results, &[SECTION])
        .map_err(|e| format!("cannot write {}: {e}", latest.display()))?;
    println!("wrote {}/{{results.json,report.md,report.html}}", latest.display());
    Ok(!failed)
}

fn names() -> String {
    AgentRuntime::ALL.iter().chain(&AgentRuntime::OPTIONAL).map(|r| r.name()).collect::<Vec<_>>().join(", ")
}

/// `weft-lab smoke`'s agents check: the embedded simulator and two agents at a tiny size on
/// every runtime, both spawn modes.
pub fn smoke(options: &SmokeOptions, report: &mut SmokeReport) {
    let (workers, exe) = (options.workers, options.exe.as_path());
    use super::hosts::{self, RunPlan};
    let mut profile = Profile::quick();
    profile.default_predict = 8;
    let setup = || -> Result<(Sim, Vec<super::agent::AgentSpec>), String> {
        let sim = Sim::start(SimConfig::new(profile.clone())).map_err(|e| format!("starting the simulator: {e}"))?;
        let dir = std::env::temp_dir().join(format!("weft-lab-smoke-agents-{}", std::process::id()));
        generate_reports(&dir, 3).map_err(|e| e.to_string())?;
        let o = StudyOptions {
            profile: profile.clone(),
            runtimes: Vec::new(),
            configs: Vec::new(),
            runs: 1,
            spawn: SpawnMode::Join,
            coordinator: CoordKind::None,
            endpoints: sim.urls().iter().map(|u| Endpoint::parse(u)).collect::<Result<_, _>>()?,
            model: "gemma3:latest".into(),
            data_dir: dir,
            workers,
            bridge_workers: 2,
            bridge: BridgeKind::Enter,
            idle_timeout: Duration::from_secs(10),
            permits: 2,
            verbose: false,
            openai: false,
            exe: Some(exe.to_path_buf()),
        };
        Ok((sim, study::specs(&o, &CONFIGS[2], 2, 1)))
    };
    let (sim, agents) = match setup() {
        Ok(v) => v,
        Err(e) => return report.check("agents simulator", Err(e)),
    };
    for rt in AgentRuntime::ALL {
        let check = || -> Result<(), String> {
            for spawn in [SpawnMode::Join, SpawnMode::Tasks] {
                let plan = RunPlan {
                    agents: agents.clone(),
                    spawn,
                    coordinator: CoordKind::None,
                    permits: 2,
                    workers,
                    bridge_workers: 2,
                    bridge: BridgeKind::Enter,
                    sequential: false,
                    exe: Some(exe.to_path_buf()),
                };
                let b = hosts::run(rt, &plan)?;
                for a in &b.agents {
                    if let Some(e) = &a.error {
                        return Err(format!("{} ({}): {e}", a.name, spawn.name()));
                    }
                    let tokens: Vec<u64> = a.calls.iter().map(|c| c.eval_count).collect();
                    if tokens != [8, 8] || a.calls.iter().any(|c| c.tokens != 8) {
                        return Err(format!("{}: expected 2 calls × 8 tokens, got {tokens:?}", a.name));
                    }
                }
            }
            Ok(())
        };
        report.check(&format!("{:<22} {:>6} {:<10}", "agents", 2, rt.name()), check().map(|()| Some(String::new())));
    }
    drop(sim);
}
