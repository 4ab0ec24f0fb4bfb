//! The embedded Ollama-compatible simulator: the model server the agents study runs against
//! when no `--ollama-url` is given, and `weft-lab serve-ollama` standalone.
//!
//! Design essay.
//!
//! Glossary:
//! - **instance**: one simulated Ollama process (its own port, slots, queue and loaded runner);
//!   `--instances 2` is the dual-Ollama setup of TR115 (*Technical Report 115 v2: Rust Async
//!   Runtime Performance Deep Dive*, docs/notes/reference-reports.md).
//! - **slot**: one concurrently generating request (`OLLAMA_NUM_PARALLEL`, default 1).
//! - **runner options**: `num_ctx`/`num_gpu`; a request whose options differ from the loaded
//!   ones waits until running requests drain, then pays `load_duration`.
//! - **profile**: the costs ([`model::Profile`]): `full` is calibrated to TR115's observations
//!   (≈ 41 tok/s, ≈ 1 s TTFT per agent with two instances), `quick` is the same model 20×
//!   faster.
//!
//! Layers: [`model`] is the pure timing model (slots, FIFO queue, reloads, load factor,
//! seeded jitter) that tests drive with explicit events; [`wire`] the JSON shapes; [`server`]
//! hyper 1.x on weft (`weft::hyper::WeftIo`), one accept loop per instance, a producer
//! task per streamed response. Everything runs on one dedicated weft runtime whose threads are
//! named `weft-sim`, so the study can read the simulator's own CPU time from
//! `/proc/self/task/*/schedstat` (ns) and subtract it from the process's.
//!
//! Invariants: the simulator binds 127.0.0.1 only; a request's slot is freed however it ends
//! (finished, faulted, client gone); queued requests start strictly in arrival order.
//!
//! Rejected alternatives: a discrete-event simulation answering instantly (clients would never
//! see real socket timing, which is what separates the runtimes); one task per token tick
//! across all streams (a global ticker couples unrelated streams' timing).

pub mod client;
pub mod model;
pub mod server;
pub mod wire;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use model::Profile;
use server::Instance;

/// The version `/api/version` reports (a simulator, not a real Ollama release).
pub const VERSION: &str = "0.0.0-weft-sim";

/// A fault injected into every generation request an instance serves (tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A line that is not JSON before token `after`.
    Malformed { after: u32 },
    /// The connection closes (no chunked terminator) before token `after`.
    Truncate { after: u32 },
    /// An `{"error":…}` line under status 200 before token `after`, then the end.
    MidStreamError { after: u32 },
    /// Nothing for `duration` before token `after` (0 = right after the headers).
    Stall { after: u32, duration: Duration },
    /// The response headers come only after this delay.
    SlowHeaders(Duration),
    /// `500` with a plain-text body.
    NonJson500,
    /// `503 server busy` at once.
    Busy,
}

/// How to build the simulator.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub profile: Profile,
    pub instances: usize,
    /// Slots per instance (`OLLAMA_NUM_PARALLEL`).
    pub num_parallel: usize,
    /// `OLLAMA_MAX_QUEUE`.
    pub max_queue: usize,
    /// Models `/api/tags` lists and generation accepts.
    pub models: Vec<String>,
    pub seed: u64,
    /// First port (instances take consecutive ports); 0 = ephemeral ports.
    pub port: u16,
    /// Per-instance faults (missing entries = healthy).
    pub faults: Vec<Option<Fault>>,
    /// Worker threads of the simulator's runtime.
    pub workers: usize,
}

impl SimConfig {
    pub fn new(profile: Profile) -> SimConfig {
        SimConfig {
            profile,
            instances: 2,
            num_parallel: 1,
            max_queue: 512,
            models: vec!["gemma3:latest".to_string()],
            seed: 0x5eed,
            port: 0,
            faults: Vec::new(),
            workers: 1,
        }
    }
}

/// State every connection of every instance shares.
pub struct Shared {
    pub config: SimConfig,
    ids: AtomicU64,
}

impl Shared {
    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    fn details() -> serde_json::Value {
        serde_json::json!({"parent_model": "", "format": "gguf", "family": "gemma3", "families": ["gemma3"],
                           "parameter_size": "4.3B", "quantization_level": "Q4_K_M"})
    }

    fn tags(&self) -> serde_json::Value {
        let models: Vec<_> = self
            .config
            .models
            .iter()
            .map(|m| {
                serde_json::json!({"name": m, "model": m, "modified_at": "2025-01-01T00:00:00Z", "size": 3_338_801_804u64,
                                   "digest": "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a",
                                   "details": Shared::details()})
            })
            .collect();
        serde_json::json!({ "models": models })
    }

    fn ps(&self, inst: &Instance) -> serde_json::Value {
        let models: Vec<_> = inst
            .loaded()
            .into_iter()
            .map(|_| {
                let m = &self.config.models[0];
                let expires =
                    humantime::format_rfc3339_seconds(std::time::SystemTime::now() + Duration::from_secs(300));
                serde_json::json!({"name": m, "model": m, "size": 3_338_801_804u64, "size_vram": 3_338_801_804u64,
                                   "digest": "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a",
                                   "details": Shared::details(), "expires_at": expires.to_string()})
            })
            .collect();
        serde_json::json!({ "models": models })
    }
}

/// A running simulator; dropping it stops it.
pub struct Sim {
    runtime: Option<weft::runtime::Runtime>,
    addrs: Vec<SocketAddr>,
    tids: Arc<Mutex<Vec<u32>>>,
    pub instances: Vec<Arc<Instance>>,
}

impl Sim {
    /// Starts every instance on 127.0.0.1 and returns once all are listening.
    pub fn start(config: SimConfig) -> std::io::Result<Sim> {
        let tids = Arc::new(Mutex::new(Vec::new()));
        let record = tids.clone();
        let runtime = weft::runtime::Builder::new_multi_thread()
            .worker_threads(config.workers.max(1))
            .thread_name("weft-sim")
            .on_thread_start(move || {
                if let Some(tid) = current_tid() {
                    record.lock().unwrap().push(tid);
                }
            })
            .enable_all()
            .build()?;
        let instances: Vec<Arc<Instance>> = (0..config.instances.max(1))
            .map(|i| {
                let fault = config.faults.get(i).copied().flatten();
                Arc::new(Instance::new(i, config.num_parallel, config.max_queue, fault))
            })
            .collect();
        let shared = Arc::new(Shared { config, ids: AtomicU64::new(0) });
        let mut addrs = Vec::new();
        for inst in &instances {
            let port = if shared.config.port == 0 { 0 } else { shared.config.port + inst.index as u16 };
            let listener = runtime.block_on(weft::net::TcpListener::bind(("127.0.0.1", port)))?;
            addrs.push(listener.local_addr()?);
            runtime.spawn(accept_loop(listener, shared.clone(), inst.clone()));
        }
        Ok(Sim { runtime: Some(runtime), addrs, tids, instances })
    }

    /// `http://127.0.0.1:PORT` of each instance.
    pub fn urls(&self) -> Vec<String> {
        self.addrs.iter().map(|a| format!("http://{a}")).collect()
    }

    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// CPU time (user + system) the simulator's threads have used so far.
    pub fn cpu(&self) -> Duration {
        self.tids.lock().unwrap().iter().map(|&t| thread_cpu(t)).sum()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

async fn accept_loop(listener: weft::net::TcpListener, shared: Arc<Shared>, inst: Arc<Instance>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let _ = stream.set_nodelay(true);
        let (shared, inst) = (shared.clone(), inst.clone());
        drop(weft::spawn(async move {
            let service = hyper::service::service_fn(move |req| server::handle(shared.clone(), inst.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(weft::hyper::WeftIo::new(stream), service)
                .await;
        }));
    }
}

/// The calling thread's kernel id, from `/proc/thread-self`.
fn current_tid() -> Option<u32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// CPU time one thread of this process has run, in nanoseconds: the first field of
/// `/proc/self/task/TID/schedstat` (the scheduler's `sum_exec_runtime`; `stat`'s utime/stime
/// are 10 ms ticks, too coarse for a 2-agent run).
pub fn thread_cpu(tid: u32) -> Duration {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map(Duration::from_nanos)
        .unwrap_or_default()
}

pub use weft_lab_agent::plan::process_cpu;
