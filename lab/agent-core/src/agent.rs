//! One agent, written once for every runtime and client: TR115's workflow — a blocking
//! data-summary step over a directory of reports, then two streamed `POST /api/generate`
//! calls (analysis from the summary, then a report from the analysis).
//!
//! The summary step is a plain blocking `std::fs` walk inside the async function, as the
//! study's code did; it takes milliseconds on the generated data, and a runtime that pins both
//! agents to one thread pays for it, which is part of what is measured.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::stream::{stream_call, CallError, CallStats, Endpoint, HttpClient, OPENAI_PATH};
use crate::Sleep;

/// How agents coordinate (`--coordinator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CoordKind {
    None,
    /// A semaphore with one permit per server slot: never more calls in flight than the
    /// servers can run.
    Semaphore,
    /// One mutex held across an agent's LLM calls (the study's async-std variant).
    Mutex,
}

impl CoordKind {
    pub const ALL: [CoordKind; 3] = [CoordKind::None, CoordKind::Semaphore, CoordKind::Mutex];
    pub fn name(self) -> &'static str {
        match self {
            CoordKind::None => "none",
            CoordKind::Semaphore => "semaphore",
            CoordKind::Mutex => "mutex",
        }
    }
    pub fn by_name(s: &str) -> Option<CoordKind> {
        CoordKind::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// The shared coordinator of one run (runtime-neutral `async-lock` primitives, so the knob
/// changes the coordination, not the runtime's lock implementation).
#[derive(Clone)]
pub enum Coordinator {
    None,
    Semaphore(Arc<async_lock::Semaphore>),
    Mutex(Arc<async_lock::Mutex<()>>),
}

impl Coordinator {
    pub fn new(kind: CoordKind, permits: usize) -> Coordinator {
        match kind {
            CoordKind::None => Coordinator::None,
            CoordKind::Semaphore => Coordinator::Semaphore(Arc::new(async_lock::Semaphore::new(permits.max(1)))),
            CoordKind::Mutex => Coordinator::Mutex(Arc::new(async_lock::Mutex::new(()))),
        }
    }
}

/// What one agent does.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentSpec {
    pub name: String,
    pub endpoint: Endpoint,
    pub model: String,
    /// `options` sent with both calls (num_gpu, num_ctx, temperature, num_predict, seed).
    pub options: serde_json::Value,
    pub data_dir: PathBuf,
    /// A call fails after this long without a byte.
    pub idle_timeout: Duration,
    /// Talk OpenAI's `/v1/chat/completions` instead of Ollama's `/api/generate`.
    pub openai: bool,
}

/// One agent's result in one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AgentOutcome {
    pub name: String,
    /// Start offset from the run's start.
    pub start_ms: f64,
    pub total_ms: f64,
    pub summary_ms: f64,
    pub calls: Vec<CallStats>,
    pub error: Option<String>,
}

impl AgentOutcome {
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
}

/// Writes `files` deterministic plain-text "benchmark reports" into `dir` (once).
pub fn generate_reports(dir: &Path, files: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 0..files {
        let path = dir.join(format!("report_{i:03}.md"));
        if path.exists() {
            continue;
        }
        let mut text = format!("# Benchmark report {i}\n\n");
        for j in 0..40 {
            let v = (i * 131 + j * 17) % 997;
            text += &format!(
                "- run {j}: throughput {}.{} tok/s, ttft {} ms, efficiency {}.{} %\n",
                30 + v % 20,
                v % 10,
                800 + v,
                90 + v % 10,
                v % 100
            );
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// The blocking data-summary step: walks `dir`, counts files/lines/bytes and averages every
/// `throughput` figure.
pub fn summarize(dir: &Path) -> Result<String, String> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    let (mut lines, mut bytes, mut sum, mut n) = (0usize, 0usize, 0.0f64, 0usize);
    for p in &entries {
        let text = std::fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))?;
        bytes += text.len();
        for line in text.lines() {
            lines += 1;
            if let Some(v) =
                line.split("throughput ").nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse::<f64>().ok())
            {
                sum += v;
                n += 1;
            }
        }
    }
    if entries.is_empty() {
        return Err(format!("{} holds no report files", dir.display()));
    }
    Ok(format!(
        "{} report files, {lines} lines, {bytes} bytes; {n} throughput samples averaging {:.2} tok/s. Files: {}.",
        entries.len(),
        if n > 0 { sum / n as f64 } else { 0.0 },
        entries
            .iter()
            .take(8)
            .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The request body: Ollama's `/api/generate`, or an OpenAI chat completion (streamed, usage
/// included) when the agent talks to an OpenAI-compatible server.
pub fn request_body(spec: &AgentSpec, prompt: String) -> Vec<u8> {
    let v = if spec.openai {
        serde_json::json!({
            "model": spec.model, "messages": [{"role": "user", "content": prompt}], "stream": true,
            "stream_options": {"include_usage": true}, "max_tokens": spec.options["num_predict"],
            "temperature": spec.options["temperature"], "seed": spec.options["seed"],
        })
    } else {
        serde_json::json!({ "model": spec.model, "prompt": prompt, "stream": true, "options": spec.options })
    };
    serde_json::to_vec(&v).expect("a JSON value serialises")
}

async fn call<R: Sleep, C: HttpClient + ?Sized>(
    spec: &AgentSpec,
    client: &C,
    prompt: String,
) -> Result<CallStats, CallError> {
    let path = if spec.openai { OPENAI_PATH } else { "/api/generate" };
    stream_call::<R, C>(client, &spec.endpoint, path, request_body(spec, prompt), spec.idle_timeout).await
}

/// Runs one agent; never panics on bad input, the error lands in the outcome.
pub async fn run_agent<R: Sleep, C: HttpClient + ?Sized>(
    spec: &AgentSpec,
    client: &C,
    coordinator: &Coordinator,
    run_start: Instant,
) -> AgentOutcome {
    let start = Instant::now();
    let mut out = AgentOutcome {
        name: spec.name.clone(),
        start_ms: (start - run_start).as_secs_f64() * 1e3,
        ..AgentOutcome::default()
    };
    let summary = summarize(&spec.data_dir);
    out.summary_ms = start.elapsed().as_secs_f64() * 1e3;
    let result = async {
        let summary = summary?;
        let analysis_prompt = format!(
            "You are {}, a performance analyst. Analyse this benchmark data summary and list the three most \
             important findings with numbers:\n{summary}",
            spec.name
        );
        let analysis = call::<R, C>(spec, client, analysis_prompt).await.map_err(|e| format!("analysis call: {e}"))?;
        let report_prompt = format!(
            "Write a short technical report for engineers from this analysis. Keep every number.\n{}",
            analysis.text
        );
        out.calls.push(analysis);
        let report = call::<R, C>(spec, client, report_prompt).await.map_err(|e| format!("report call: {e}"))?;
        out.calls.push(report);
        Ok::<(), String>(())
    };
    let result = match coordinator {
        Coordinator::None => result.await,
        Coordinator::Semaphore(s) => {
            let _permit = s.acquire().await;
            result.await
        }
        Coordinator::Mutex(m) => {
            let _guard = m.lock().await;
            result.await
        }
    };
    out.error = result.err();
    out.total_ms = start.elapsed().as_secs_f64() * 1e3;
    out
}
