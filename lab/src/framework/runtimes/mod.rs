//! The runtime registry: names, flavors, knobs, and the one `match` that turns a [`RuntimeId`]
//! into a monomorphised call of a workload on that runtime's adapter.
//!
//! Adding a runtime: write `runtimes/NAME.rs` (an [`Adapter`](crate::framework::adapter::Adapter)), add a
//! [`RuntimeId`] variant with its name, and a line in [`dispatch`].
//!
//! Architecture Invariant: [`sample_in_process`] builds the runtime, runs one sample and drops
//! it before returning, so no other runtime's threads exist while a sample is timed. Runtimes
//! that cannot be dropped (async-std's global executor) are marked [`RuntimeId::in_child`] and
//! only ever run in a `__sample` child process.

/// `Net::read_exact` and `Net::write_all` for a stream with futures-io's traits (smol's and
/// async-std's), through futures-lite.
macro_rules! futures_io_read_write {
    () => {
        fn read_exact<'a>(
            stream: &'a mut Self::Stream,
            buf: &'a mut [u8],
        ) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
            futures_lite::AsyncReadExt::read_exact(stream, buf)
        }
        fn write_all<'a>(
            stream: &'a mut Self::Stream,
            buf: &'a [u8],
        ) -> impl Future<Output = std::io::Result<()>> + Send + 'a {
            futures_lite::AsyncWriteExt::write_all(stream, buf)
        }
    };
}

/// hyper's I/O for a futures-io stream (`hyper_io::FuturesIo`) and no hyper timer: what smol and
/// async-std give hyper.
macro_rules! futures_io_hyper {
    () => {
        type HyperIo = $crate::framework::runtimes::hyper_io::FuturesIo<Self::Stream>;

        fn hyper_io(stream: Self::Stream) -> Self::HyperIo {
            $crate::framework::runtimes::hyper_io::FuturesIo(stream)
        }

        type HyperTimer = $crate::framework::runtimes::hyper_io::NoTimer;

        fn hyper_timer() -> Option<Self::HyperTimer> {
            None
        }
    };
}

mod async_channel_kit;
pub mod async_std;
pub mod hyper_io;
pub mod smol;
pub mod tokio;
mod tokio_shaped;
pub mod weft;

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::framework::adapter::{Adapter, Flavor, RtConfig};
use crate::framework::workloads::{self, Outcome, Workload};

/// Every runtime the lab can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuntimeId {
    WeftMt,
    WeftCt,
    TokioMt,
    TokioCt,
    Smol,
    AsyncStd,
}

/// Tunables that `sweep` can vary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Knob {
    WorkerThreads,
    GlobalQueueInterval,
    EventInterval,
    /// weft only: 1 turns the poll-time histogram on (the default configuration has it off).
    PollTimeHistogram,
    /// weft only: 1 turns the schedule-latency histogram on.
    ScheduleLatencyHistogram,
}

impl Knob {
    pub const ALL: [Knob; 5] = [
        Knob::WorkerThreads,
        Knob::GlobalQueueInterval,
        Knob::EventInterval,
        Knob::PollTimeHistogram,
        Knob::ScheduleLatencyHistogram,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Knob::WorkerThreads => "worker_threads",
            Knob::GlobalQueueInterval => "global_queue_interval",
            Knob::EventInterval => "event_interval",
            Knob::PollTimeHistogram => "poll_time_histogram",
            Knob::ScheduleLatencyHistogram => "schedule_latency_histogram",
        }
    }

    pub fn by_name(name: &str) -> Option<Knob> {
        Knob::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Sets this knob in `config`.
    pub fn apply(self, config: &mut RtConfig, value: u32) {
        match self {
            Knob::WorkerThreads => config.workers = value as usize,
            Knob::GlobalQueueInterval => config.global_queue_interval = Some(value),
            Knob::EventInterval => config.event_interval = Some(value),
            Knob::PollTimeHistogram => config.poll_time_histogram = value != 0,
            Knob::ScheduleLatencyHistogram => config.schedule_latency_histogram = value != 0,
        }
    }
}

impl RuntimeId {
    pub const ALL: [RuntimeId; 6] = [
        RuntimeId::WeftMt,
        RuntimeId::WeftCt,
        RuntimeId::TokioMt,
        RuntimeId::TokioCt,
        RuntimeId::Smol,
        RuntimeId::AsyncStd,
    ];

    /// The latency studies' default set (`lateness`, `tcp-echo`): every runtime but async-std,
    /// whose one global runtime cannot be built fresh for each round in this process.
    pub const IN_PROCESS: [RuntimeId; 5] =
        [RuntimeId::WeftMt, RuntimeId::WeftCt, RuntimeId::TokioMt, RuntimeId::TokioCt, RuntimeId::Smol];

    /// Stable name (JSON contract, `--runtimes`).
    pub fn name(self) -> &'static str {
        match self {
            RuntimeId::WeftMt => "weft-mt",
            RuntimeId::WeftCt => "weft-ct",
            RuntimeId::TokioMt => "tokio-mt",
            RuntimeId::TokioCt => "tokio-ct",
            RuntimeId::Smol => "smol",
            RuntimeId::AsyncStd => "async-std",
        }
    }

    pub fn by_name(name: &str) -> Option<RuntimeId> {
        RuntimeId::ALL.into_iter().find(|r| r.name() == name)
    }

    pub fn flavor(self) -> Flavor {
        match self {
            RuntimeId::WeftCt | RuntimeId::TokioCt => Flavor::CurrentThread,
            _ => Flavor::MultiThread,
        }
    }

    pub fn is_weft(self) -> bool {
        matches!(self, RuntimeId::WeftMt | RuntimeId::WeftCt)
    }

    /// Runs in a child process per sample (its runtime cannot be shut down).
    pub fn in_child(self) -> bool {
        self == RuntimeId::AsyncStd
    }

    /// Whether `sweep` can vary `knob` for this runtime.
    pub fn supports(self, knob: Knob) -> bool {
        match (self, knob) {
            (RuntimeId::WeftCt | RuntimeId::TokioCt, Knob::WorkerThreads) => false,
            (RuntimeId::WeftMt | RuntimeId::WeftCt, Knob::PollTimeHistogram | Knob::ScheduleLatencyHistogram) => true,
            (_, Knob::PollTimeHistogram | Knob::ScheduleLatencyHistogram) => false,
            (RuntimeId::WeftMt | RuntimeId::TokioMt | RuntimeId::Smol | RuntimeId::AsyncStd, Knob::WorkerThreads) => {
                true
            }
            (RuntimeId::WeftMt | RuntimeId::WeftCt | RuntimeId::TokioMt | RuntimeId::TokioCt, _) => true,
            _ => false,
        }
    }

    /// The baselines a weft runtime's ratios are computed against (empty for the others).
    pub fn baselines(self) -> &'static [RuntimeId] {
        match self {
            RuntimeId::WeftMt => &[RuntimeId::TokioMt, RuntimeId::Smol, RuntimeId::AsyncStd],
            RuntimeId::WeftCt => &[RuntimeId::TokioCt],
            _ => &[],
        }
    }

    /// The default configuration: `workers` threads, every other knob at the runtime's default.
    pub fn default_config(self, workers: usize) -> RtConfig {
        RtConfig::new(self.flavor(), workers)
    }
}

/// Work to do with one runtime's adapter *type*; [`dispatch`] picks the type for an id.
/// (A generic closure would do, if Rust had them.)
pub trait WithAdapter {
    type Output;
    fn run<R: Adapter>(self) -> Self::Output;
}

/// The one `match` from a [`RuntimeId`] to its adapter type: every command that runs
/// something on a runtime goes through here, so adding a runtime is one line.
pub fn dispatch<W: WithAdapter>(id: RuntimeId, work: W) -> W::Output {
    match id {
        RuntimeId::WeftMt | RuntimeId::WeftCt => work.run::<weft::Weft>(),
        RuntimeId::TokioMt | RuntimeId::TokioCt => work.run::<tokio::Tokio>(),
        RuntimeId::Smol => work.run::<smol::Smol>(),
        RuntimeId::AsyncStd => work.run::<async_std::AsyncStd>(),
    }
}

/// Builds `id` with `config` on a trimmed heap, runs one sample of `workload` at `scale`, drops
/// the runtime.
/// A panic anywhere (build, workload, drop) becomes [`Outcome::Failed`].
pub fn sample_in_process(id: RuntimeId, config: &RtConfig, workload: Workload, scale: u64) -> Outcome {
    struct Sample<'a>(&'a RtConfig, Workload, u64);
    impl WithAdapter for Sample<'_> {
        type Output = Outcome;
        fn run<R: Adapter>(self) -> Outcome {
            sample_with::<R>(self.0, self.1, self.2)
        }
    }
    dispatch(id, Sample(config, workload, scale))
}

fn sample_with<R: Adapter>(config: &RtConfig, workload: Workload, scale: u64) -> Outcome {
    let silence = workload.spec().silence_panics;
    let previous_hook = silence.then(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        previous
    });
    // The suite runs several runtimes in this process: each sample starts from a trimmed heap.
    crate::framework::memory::release_free_heap();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let runtime = match R::build(config) {
            Ok(runtime) => runtime,
            Err(e) => return Outcome::Failed(format!("building the runtime failed: {e}")),
        };
        let outcome = workloads::run(&runtime, config, workload, scale);
        crate::framework::measure::add_long_polls(runtime.long_polls());
        drop(runtime);
        outcome
    }))
    .unwrap_or_else(|payload| Outcome::Failed(format!("panicked: {}", panic_message(&payload))));
    if let Some(previous) = previous_hook {
        std::panic::set_hook(previous);
    }
    outcome
}

/// The text of a panic payload, when it has one.
pub fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// async-io's movable timer as the lab's `Adapter::Timer` (smol's and async-std's): the same
/// `Timer`, with its output (the instant it fired) dropped.
#[derive(Debug)]
pub struct AsyncIoTimer(pub async_io::Timer);

impl std::future::Future for AsyncIoTimer {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::pin::Pin::new(&mut self.0).poll(cx).map(drop)
    }
}
