//! The simulator's timing model: one model-server instance's slots, FIFO queue, loaded runner
//! options and per-token costs, as a pure state machine over explicit times.
//!
//! Shaped as a pure machine (no clock, no I/O) so tests assert the *computed schedule* — who
//! starts when, who reloads, what the load factor is — instead of wall-clock spacing, and the
//! HTTP server only turns its decisions into sleeps.

use std::collections::VecDeque;
use std::time::Duration;

/// The options that make Ollama (re)load a runner when they change.
pub use weft_lab_agent::sim_request::RunnerOpts;

/// Layers of the simulated model (gemma3:4b).
pub const LAYERS: u32 = 35;

/// Costs of one simulated model server.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    /// Inter-token latency of one stream alone, all layers on the GPU.
    pub inter_token: Duration,
    /// Fixed part of time-to-first-token once a request starts.
    pub prefill_overhead: Duration,
    /// Prefill cost per prompt token at a 2048-token context.
    pub prefill_per_token: Duration,
    /// A runner (re)load.
    pub load: Duration,
    /// Load factor at full occupancy: inter-token latency × `f` when every slot runs.
    pub full_load_factor: f64,
    /// Relative σ of the per-token Gaussian jitter.
    pub jitter: f64,
    /// Tokens generated when the request sets no `num_predict`.
    pub default_predict: u32,
}

impl Profile {
    /// Calibrated to the observations of TR115 (*Technical Report 115 v2: Rust Async Runtime
    /// Performance Deep Dive*, docs/notes/reference-reports.md) with two instances sharing one
    /// GPU: ≈ 41 tok/s per agent (24.4 ms/token) and ≈ 1 s TTFT for a ~200-token prompt
    /// (0.6 s + 200 × 2 ms).
    pub fn full() -> Profile {
        Profile {
            name: "full",
            inter_token: Duration::from_micros(24_400),
            prefill_overhead: Duration::from_millis(600),
            prefill_per_token: Duration::from_millis(2),
            load: Duration::from_millis(2_500),
            full_load_factor: 1.6,
            jitter: 0.05,
            default_predict: 400,
        }
    }

    /// The same model 20× faster.
    pub fn quick() -> Profile {
        let f = Profile::full();
        Profile {
            name: "quick",
            inter_token: f.inter_token / 20,
            prefill_overhead: f.prefill_overhead / 20,
            prefill_per_token: f.prefill_per_token / 20,
            load: f.load / 20,
            default_predict: 100,
            ..f
        }
    }

    /// Inter-token latency for `opts` before the load factor. gemma3:4b has [`LAYERS`] layers,
    /// so any `num_gpu` ≥ 35 (TR115's 80 and 100 alike) offloads all of them; each layer left
    /// on the CPU costs 6 %.
    pub fn base_inter_token(&self, opts: RunnerOpts) -> Duration {
        let on_cpu = LAYERS.saturating_sub(opts.num_gpu) as f64;
        self.inter_token.mul_f64(1.0 + 0.06 * on_cpu)
    }

    /// Prefill time: overhead + prompt tokens × per-token cost, the per-token cost scaling with
    /// the context size (attention over a larger KV cache) relative to 2048.
    pub fn prefill(&self, opts: RunnerOpts, prompt_tokens: u32) -> Duration {
        let ctx_scale = 0.5 + 0.5 * opts.num_ctx.max(1) as f64 / 2048.0;
        self.prefill_overhead + self.prefill_per_token.mul_f64(prompt_tokens as f64 * ctx_scale)
    }
}

/// `1 + (f − 1)·(running − 1)/(slots − 1)`; 1 with one slot or one running stream.
pub fn load_factor(full_load_factor: f64, running: usize, slots: usize) -> f64 {
    if slots <= 1 || running <= 1 {
        return 1.0;
    }
    let running = running.min(slots);
    1.0 + (full_load_factor - 1.0) * (running - 1) as f64 / (slots - 1) as f64
}

/// What happened to an arriving request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Runs now; `reload` when its runner options differ from the loaded ones.
    Start { reload: bool },
    /// Waits in the FIFO queue.
    Queued,
    /// The queue is full: answer 503.
    Busy,
}

/// A queued request that [`Model::finish`] starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    pub id: u64,
    pub reload: bool,
}

/// One instance's scheduler state.
#[derive(Debug)]
pub struct Model {
    slots: usize,
    max_queue: usize,
    running: usize,
    loaded: Option<RunnerOpts>,
    queue: VecDeque<(u64, RunnerOpts)>,
}

impl Model {
    /// `slots` = Ollama's `OLLAMA_NUM_PARALLEL`; `max_queue` = `OLLAMA_MAX_QUEUE`.
    pub fn new(slots: usize, max_queue: usize) -> Model {
        assert!(slots >= 1, "a model server needs at least one slot (num_parallel >= 1)");
        Model { slots, max_queue, running: 0, loaded: None, queue: VecDeque::new() }
    }

    pub fn running(&self) -> usize {
        self.running
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn loaded(&self) -> Option<RunnerOpts> {
        self.loaded
    }

    /// Whether a request with `opts` may start now: a free slot, and either the same runner or
    /// nothing running (a different runner waits for the running requests to drain).
    fn can_start(&self, opts: RunnerOpts) -> bool {
        self.running < self.slots && (self.loaded == Some(opts) || self.running == 0)
    }

    fn start(&mut self, opts: RunnerOpts) -> bool {
        let reload = self.loaded != Some(opts);
        self.loaded = Some(opts);
        self.running += 1;
        reload
    }

    /// A request arrives. FIFO: nobody overtakes a queued request, even one that could run.
    pub fn arrive(&mut self, id: u64, opts: RunnerOpts) -> Arrival {
        if self.queue.is_empty() && self.can_start(opts) {
            return Arrival::Start { reload: self.start(opts) };
        }
        if self.queue.len() >= self.max_queue {
            return Arrival::Busy;
        }
        self.queue.push_back((id, opts));
        Arrival::Queued
    }

    /// A running request ended (finished, failed or cancelled): starts queued requests in
    /// order while the head can run.
    pub fn finish(&mut self) -> Vec<Started> {
        assert!(self.running > 0, "Model::finish without a running request");
        self.running -= 1;
        let mut started = Vec::new();
        while let Some(&(id, opts)) = self.queue.front() {
            if !self.can_start(opts) {
                break;
            }
            self.queue.pop_front();
            started.push(Started { id, reload: self.start(opts) });
        }
        started
    }

    /// A queued request gave up (its client went away) before starting.
    pub fn cancel(&mut self, id: u64) -> bool {
        let before = self.queue.len();
        self.queue.retain(|&(q, _)| q != id);
        before != self.queue.len()
    }
}

/// A seeded generator (the lab's splitmix64, `stats::SplitMix64`) with Gaussian draws
/// (Box–Muller): jitter and token text.
#[derive(Clone, Debug)]
pub struct Rng(crate::framework::stats::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(crate::framework::stats::SplitMix64::new(seed ^ 0x9E37_79B9_7F4A_7C15))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// Standard normal.
    pub fn gaussian(&mut self) -> f64 {
        let (u1, u2) = (self.unit(), self.unit());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// `base × max(0.2, 1 + σ·N(0,1))`.
    pub fn jittered(&mut self, base: Duration, sigma: f64) -> Duration {
        base.mul_f64((1.0 + sigma * self.gaussian()).max(0.2))
    }
}
