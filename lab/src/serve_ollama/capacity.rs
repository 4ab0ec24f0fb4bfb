//! `weft-lab serve-ollama --capacity N`: checks what the agents study relies on, that the simulator
//! is never the bottleneck — N concurrent streaming clients against a simulator pinned to **one**
//! worker thread, each stream asking for the quick profile's tokens with no load slowdown
//! (`full_load_factor = 1`, a slot per stream), so every stream should see exactly the profile's
//! nominal inter-token rate.
//!
//! What it reports: the streams' achieved token rate beside the nominal one (client-side
//! median, and the server's own `eval_count / eval_duration`, which grows when the simulator's
//! single thread falls behind its `sleep_until` schedule), and the simulator threads' CPU per
//! streamed token (nanosecond `schedstat` clock of the `weft-sim` threads only). The clients run
//! in the same process on a separate weft multi-thread runtime with hyper, so on a small machine
//! they compete with the simulator for cores; the report says how many there are.

use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_lab_agent::stream::{stream_call, Endpoint};

use crate::framework::adapter::{Adapter, Flavor, RtConfig};
use crate::framework::ollama::client::{AdapterSleep, HyperClient};
use crate::framework::ollama::{process_cpu, Profile, Sim, SimConfig};
use crate::framework::runtimes::weft::Weft;
use crate::framework::stats;

/// The measurement's result.
#[derive(Clone, Debug)]
pub struct Capacity {
    pub streams: usize,
    pub ok_streams: usize,
    pub tokens: u64,
    pub wall: Duration,
    /// One stream alone at the profile's rate (tokens/s).
    pub nominal_stream_tok_s: f64,
    pub median_client_tok_s: f64,
    pub p5_client_tok_s: f64,
    pub median_server_tok_s: f64,
    /// Σ tokens ÷ wall, and what it would be if every stream ran at the nominal rate.
    pub aggregate_tok_s: f64,
    pub nominal_aggregate_tok_s: f64,
    pub sim_cpu: Duration,
    pub client_cpu: Duration,
    pub first_error: Option<String>,
}

impl Capacity {
    pub fn sim_ns_per_token(&self) -> f64 {
        self.sim_cpu.as_nanos() as f64 / self.tokens.max(1) as f64
    }
    pub fn client_ns_per_token(&self) -> f64 {
        self.client_cpu.as_nanos() as f64 / self.tokens.max(1) as f64
    }
}

/// Runs `streams` concurrent `/api/generate` streams of `predict` tokens each (quick profile;
/// at most the profile's natural answer length, 100 tokens)
/// against a one-thread simulator; `client_workers` threads drive the clients.
pub fn measure(streams: usize, predict: u32, client_workers: usize) -> Result<Capacity, String> {
    let mut config = SimConfig::new(Profile::quick());
    config.workers = 1;
    config.instances = 2;
    config.num_parallel = streams.div_ceil(2).max(1);
    config.max_queue = streams + 16;
    config.profile.full_load_factor = 1.0;
    let profile = config.profile.clone();
    let sim = Sim::start(config).map_err(|e| format!("starting the simulator: {e}"))?;
    let endpoints: Vec<Endpoint> = sim.urls().iter().map(|u| Endpoint::parse(u)).collect::<Result<_, _>>()?;
    let rt = Weft::build(&RtConfig::new(Flavor::MultiThread, client_workers.max(1)))
        .map_err(|e| format!("building the client runtime: {e}"))?;
    let client = Arc::new(HyperClient::<Weft>::default());
    let (sim0, cpu0, start) = (sim.cpu(), process_cpu(), Instant::now());
    let results = rt.block_on(async {
        let joins: Vec<_> = (0..streams)
            .map(|i| {
                let (client, ep) = (client.clone(), endpoints[i % endpoints.len()].clone());
                let body = serde_json::json!({"model": "gemma3:latest", "prompt": "capacity probe", "stream": true,
                                              "options": {"num_predict": predict, "seed": i}});
                Weft::spawn(async move {
                    let body = serde_json::to_vec(&body).expect("a JSON value serialises");
                    stream_call::<AdapterSleep<Weft>, _>(&*client, &ep, "/api/generate", body, Duration::from_secs(60))
                        .await
                })
            })
            .collect();
        let mut out = Vec::with_capacity(streams);
        for j in joins {
            out.push(
                Weft::join(j)
                    .await
                    .map_err(|_| "client task panicked".to_string())
                    .and_then(|r| r.map_err(|e| e.to_string())),
            );
        }
        out
    });
    let wall = start.elapsed();
    let sim_cpu = sim.cpu().saturating_sub(sim0);
    let client_cpu = process_cpu().saturating_sub(cpu0).saturating_sub(sim_cpu);
    drop(rt);
    drop(sim);
    let ok: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    let first_error = results.iter().find_map(|r| r.as_ref().err().cloned());
    // Validation: every token the server counted reached the client, and none was cut short.
    if let Some(c) = ok.iter().find(|c| c.tokens != c.eval_count || c.tokens != u64::from(predict)) {
        return Err(format!(
            "a stream delivered {} tokens (server counted {}), expected {predict}",
            c.tokens, c.eval_count
        ));
    }
    let client_rates: Vec<f64> = ok.iter().map(|c| c.client_tok_s).collect();
    let server_rates: Vec<f64> = ok.iter().map(|c| c.server_tok_s).collect();
    let pct = |v: &[f64], p| if v.is_empty() { f64::NAN } else { stats::percentile(v, p) };
    let tokens: u64 = ok.iter().map(|c| c.tokens).sum();
    let nominal = 1.0 / profile.inter_token.as_secs_f64();
    // Ideal wall: prefill of a short prompt plus `predict` tokens at the nominal rate.
    let ideal = profile.prefill_overhead.as_secs_f64() + f64::from(predict) / nominal;
    Ok(Capacity {
        streams,
        ok_streams: ok.len(),
        tokens,
        wall,
        nominal_stream_tok_s: nominal,
        median_client_tok_s: pct(&client_rates, 50.0),
        p5_client_tok_s: pct(&client_rates, 5.0),
        median_server_tok_s: pct(&server_rates, 50.0),
        aggregate_tok_s: tokens as f64 / wall.as_secs_f64(),
        nominal_aggregate_tok_s: streams as f64 * f64::from(predict) / ideal,
        sim_cpu,
        client_cpu,
        first_error,
    })
}

/// The lines `serve-ollama --capacity` prints.
pub fn describe(c: &Capacity, client_workers: usize) -> String {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    format!(
        "simulator capacity: {} concurrent streams ({} ok), simulator on 1 worker thread, clients on {client_workers} weft workers, {cores} cores\n\
         per stream: nominal {:.0} tok/s; achieved median {:.0} tok/s client-side (P5 {:.0}), {:.0} tok/s server-side (eval_count/eval_duration)\n\
         aggregate: {:.0} tok/s achieved vs {:.0} tok/s nominal ({:.1}%), {} tokens in {:.2} s\n\
         CPU per streamed token: simulator {:.0} ns ({:.0} ms total), clients {:.0} ns ({:.0} ms total)\n\
         at that cost one simulator core sustains ≈ {:.0} tok/s ≈ {:.0} streams at the nominal rate{}",
        c.streams,
        c.ok_streams,
        c.nominal_stream_tok_s,
        c.median_client_tok_s,
        c.p5_client_tok_s,
        c.median_server_tok_s,
        c.aggregate_tok_s,
        c.nominal_aggregate_tok_s,
        c.aggregate_tok_s / c.nominal_aggregate_tok_s * 100.0,
        c.tokens,
        c.wall.as_secs_f64(),
        c.sim_ns_per_token(),
        c.sim_cpu.as_secs_f64() * 1e3,
        c.client_ns_per_token(),
        c.client_cpu.as_secs_f64() * 1e3,
        1e9 / c.sim_ns_per_token(),
        1e9 / c.sim_ns_per_token() / c.nominal_stream_tok_s,
        c.first_error.as_ref().map(|e| format!("\nfirst error: {e}")).unwrap_or_default()
    )
}
