//! The workload catalogue: every benchmark, written once against [`Adapter`].
//!
//! A workload is an `async fn name<R: Adapter>(scale: u64) -> Result<(), String>` that does its
//! work and *checks its own output* (sums, counts, depths): `Err` is a failed validation and
//! fails the run, so no runtime can win by skipping work. [`SPECS`] holds each workload's name
//! and group (part of the JSON contract), its scales per profile and a rough cost used only for
//! the progress bar's ETA. [`run`] times one workload on one built runtime.
//!
//! Adding a workload: write the async fn in the file of its group, add a [`Workload`] variant, a
//! [`Spec`] row and a line in [`run`]. The validation and joining helpers the workloads share
//! live in `support.rs`, so this file stays the catalogue.
//!
//! Architecture Invariant: the timed region is exactly the workload future, polled by
//! `block_on`; building and dropping the runtime are outside it.

mod channels;
mod compute;
mod cross_runtime;
mod locks;
pub mod net;
mod panics;
mod spawn;
mod timers;
mod yields;

mod support;
pub(crate) use support::{expect_eq, inside, join_sum, Countdown};

use std::future::Future;
use std::time::{Duration, Instant};

use crate::framework::adapter::{Adapter, Channels, RtConfig};

/// Every workload the lab knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    SpawnOutside,
    SpawnInside,
    Deflect,
    SpawnMany,
    SpawnStormBusy,
    ChainedSpawn,
    DeepRecursion,
    PingPong,
    YieldMany,
    Yield10x100,
    YieldInHotLoop,
    FanOutCompute,
    MultiThreadScaling,
    TimersCreateDrop,
    TimerReset,
    ManyTimers,
    MpscUncontended,
    MpscContended,
    OneshotPing,
    BroadcastFanout,
    CrossRuntimePing,
    CrossRuntimeStream,
    SemaphoreContended,
    MutexContended,
    CatchUnwindPanics,
    TcpEcho,
}

/// Report groups (one table and one pair of charts each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    Spawn,
    Yield,
    Compute,
    Timers,
    Channels,
    Panics,
    Net,
}

impl Group {
    pub const ALL: [Group; 7] =
        [Group::Spawn, Group::Yield, Group::Compute, Group::Timers, Group::Channels, Group::Panics, Group::Net];

    pub fn name(self) -> &'static str {
        match self {
            Group::Spawn => "spawn",
            Group::Yield => "yield",
            Group::Compute => "compute",
            Group::Timers => "timers",
            Group::Channels => "channels",
            Group::Panics => "panics",
            Group::Net => "net",
        }
    }
}

/// What the lab knows about a workload besides its code.
pub struct Spec {
    pub workload: Workload,
    /// Stable name (JSON contract).
    pub name: &'static str,
    pub group: Group,
    /// One line for the report: what one unit of scale is.
    pub about: &'static str,
    pub quick: &'static [u64],
    pub full: &'static [u64],
    /// The tiny size `smoke` runs.
    pub smoke: u64,
    /// Rough nanoseconds per unit of scale (progress-bar ETA only).
    pub est_ns_per_unit: f64,
    /// Needs the runtime's own channels (else "not yet").
    pub needs_channels: bool,
    /// Needs a second runtime of the same kind beside the first ([`Adapter::OWN_RUNTIMES`],
    /// else "not yet").
    pub needs_second_runtime: bool,
    /// Runs with the panic hook silenced.
    pub silence_panics: bool,
}

#[allow(clippy::too_many_arguments)] // one positional row per workload keeps SPECS a readable table
const fn spec(
    workload: Workload,
    name: &'static str,
    group: Group,
    about: &'static str,
    quick: &'static [u64],
    full: &'static [u64],
    smoke: u64,
    est_ns_per_unit: f64,
) -> Spec {
    Spec {
        workload,
        name,
        group,
        about,
        quick,
        full,
        smoke,
        est_ns_per_unit,
        needs_channels: false,
        needs_second_runtime: false,
        silence_panics: false,
    }
}

const fn with_channels(mut s: Spec) -> Spec {
    s.needs_channels = true;
    s
}

const fn with_second_runtime(mut s: Spec) -> Spec {
    s.needs_second_runtime = true;
    s
}

const fn silenced(mut s: Spec) -> Spec {
    s.silence_panics = true;
    s
}

use Group as G;
use Workload as W;

/// The catalogue, in report order.
pub static SPECS: &[Spec] = &[
    spec(
        W::SpawnOutside,
        "spawn_outside",
        G::Spawn,
        "N trivial tasks spawned from block_on (outside the workers), all joined",
        &[1_000, 10_000, 100_000, 1_000_000],
        &[1_000, 10_000, 100_000, 1_000_000],
        100,
        550.0,
    ),
    spec(
        W::SpawnInside,
        "spawn_inside",
        G::Spawn,
        "N trivial tasks spawned from inside a spawned task (on a worker), all joined",
        &[1_000, 10_000, 100_000, 1_000_000],
        &[1_000, 10_000, 100_000, 1_000_000],
        100,
        500.0,
    ),
    spec(
        W::Deflect,
        "deflect",
        G::Spawn,
        "one task spawns N tasks that each sum 100 numbers, joins all (hot core)",
        &[10_000, 100_000, 1_000_000],
        &[10_000, 100_000, 1_000_000, 10_000_000],
        100,
        600.0,
    ),
    spec(
        W::SpawnMany,
        "spawn_many",
        G::Spawn,
        "N detached spawns from block_on counting down to a channel",
        &[10_000],
        &[10_000, 100_000],
        100,
        450.0,
    ),
    spec(
        W::SpawnStormBusy,
        "spawn_storm_busy",
        G::Spawn,
        "N short tasks spawned and joined while 8 yielding tasks keep the workers busy",
        &[10_000],
        &[10_000, 100_000],
        100,
        700.0,
    ),
    spec(
        W::ChainedSpawn,
        "chained_spawn",
        G::Spawn,
        "a chain of N tasks, each spawning the next",
        &[1_000],
        &[1_000, 10_000],
        50,
        450.0,
    ),
    spec(
        W::DeepRecursion,
        "deep_recursion",
        G::Spawn,
        "recursion N deep, one task per level, each awaiting the next",
        &[500],
        &[500, 5_000],
        50,
        900.0,
    ),
    spec(
        W::PingPong,
        "ping_pong",
        G::Spawn,
        "N pairs of tasks trading a message each way over oneshots",
        &[1_000],
        &[1_000, 10_000],
        20,
        1_600.0,
    ),
    spec(W::YieldMany, "yield_many", G::Yield, "N tasks x 1,000 yields each", &[200], &[200, 2_000], 4, 100_000.0),
    spec(W::Yield10x100, "yield_10x100", G::Yield, "N tasks x 100 yields each", &[10], &[10, 100], 2, 20_000.0),
    spec(
        W::YieldInHotLoop,
        "yield_in_hot_loop",
        G::Yield,
        "one task yields N times while 2 other tasks keep yielding",
        &[1_000_000],
        &[1_000_000],
        1_000,
        600.0,
    ),
    spec(
        W::FanOutCompute,
        "fan_out_compute",
        G::Compute,
        "N CPU-bound tasks of ~20 us fanned out and gathered",
        &[1_000],
        &[1_000, 10_000],
        10,
        10_000.0,
    ),
    spec(
        W::MultiThreadScaling,
        "multi_thread_scaling",
        G::Compute,
        "N CPU-bound tasks of ~2 ms fanned out and gathered",
        &[16],
        &[16, 64],
        2,
        1_000_000.0,
    ),
    spec(
        W::TimersCreateDrop,
        "timers_create_drop",
        G::Timers,
        "N one-second sleeps created, polled once and dropped",
        &[1_000_000],
        &[100_000, 1_000_000],
        100,
        150.0,
    ),
    spec(
        W::TimerReset,
        "timer_reset",
        G::Timers,
        "one pending timer moved later and polled N times (an idle timeout), then fired",
        &[1_000_000],
        &[1_000_000],
        100,
        100.0,
    ),
    spec(
        W::ManyTimers,
        "many_timers",
        G::Timers,
        "N tasks each sleeping 1 ms, joined (none may wake early)",
        &[10_000],
        &[10_000, 100_000],
        100,
        900.0,
    ),
    with_channels(spec(
        W::MpscUncontended,
        "mpsc_uncontended",
        G::Channels,
        "1 producer sends N messages over a bounded(1,024) channel",
        &[1_000_000],
        &[1_000_000],
        1_000,
        90.0,
    )),
    with_channels(spec(
        W::MpscContended,
        "mpsc_contended",
        G::Channels,
        "10 producers share N messages over a bounded(1,024) channel",
        &[1_000_000],
        &[1_000_000],
        1_000,
        170.0,
    )),
    with_channels(spec(
        W::OneshotPing,
        "oneshot_ping",
        G::Channels,
        "N requests to a responder task, each answered on a fresh oneshot",
        &[10_000],
        &[10_000, 100_000],
        100,
        1_000.0,
    )),
    with_channels(spec(
        W::BroadcastFanout,
        "broadcast_fanout",
        G::Channels,
        "1 sender broadcasts N values to 16 receiver tasks (channel holds N: nobody lags)",
        &[100_000],
        &[100_000, 1_000_000],
        1_000,
        400.0,
    )),
    with_second_runtime(with_channels(spec(
        W::CrossRuntimePing,
        "cross_runtime_ping",
        G::Channels,
        "N requests from a task to a task on a second runtime, one outstanding, each answered",
        &[10_000],
        &[10_000, 100_000],
        100,
        20_000.0,
    ))),
    with_second_runtime(with_channels(spec(
        W::CrossRuntimeStream,
        "cross_runtime_stream",
        G::Channels,
        "N values from a task to a task on a second runtime over a bounded(64) channel",
        &[1_000_000],
        &[1_000_000],
        1_000,
        300.0,
    ))),
    with_channels(spec(
        W::SemaphoreContended,
        "semaphore_contended",
        G::Channels,
        "16 tasks share N acquisitions of a 4-permit semaphore, yielding while holding",
        &[100_000],
        &[100_000, 1_000_000],
        1_000,
        500.0,
    )),
    with_channels(spec(
        W::MutexContended,
        "mutex_contended",
        G::Channels,
        "16 tasks share N increments of one counter behind an async mutex",
        &[1_000_000],
        &[1_000_000],
        1_000,
        60.0,
    )),
    silenced(spec(
        W::CatchUnwindPanics,
        "catch_unwind_panics",
        G::Panics,
        "N panicking tasks, each joined and seen as a panic",
        &[10_000],
        &[10_000],
        20,
        2_700.0,
    )),
    spec(
        W::TcpEcho,
        "tcp_echo",
        G::Net,
        "64 loopback TCP connections share N round trips of a 256-byte message",
        &[20_000],
        &[20_000, 200_000],
        640,
        15_000.0,
    ),
];

impl Workload {
    pub fn spec(self) -> &'static Spec {
        SPECS.iter().find(|s| s.workload == self).expect("every workload has a spec")
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn by_name(name: &str) -> Option<Workload> {
        SPECS.iter().find(|s| s.name == name).map(|s| s.workload)
    }
}

/// What one sample produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Validated; the time the workload future took.
    Time(Duration),
    /// The runtime lacks a feature the workload needs (channels, a second runtime of its own).
    NotYet,
    /// Build error, panic or failed validation.
    Failed(String),
}

/// Runs `workload` at `scale` once on the built runtime `rt` and times it; `config` is what
/// `rt` was built with (a second runtime, where the workload needs one, is built the same).
pub fn run<R: Adapter>(rt: &R, config: &RtConfig, workload: Workload, scale: u64) -> Outcome {
    let spec = workload.spec();
    if (spec.needs_channels && !<R::Channels as Channels>::AVAILABLE) || (spec.needs_second_runtime && !R::OWN_RUNTIMES)
    {
        return Outcome::NotYet;
    }
    match workload {
        W::SpawnOutside => timed(rt, spawn::spawn_outside::<R>(scale)),
        W::SpawnInside => timed(rt, spawn::spawn_inside::<R>(scale)),
        W::Deflect => timed(rt, spawn::deflect::<R>(scale)),
        W::SpawnMany => timed(rt, spawn::spawn_many::<R>(scale)),
        W::SpawnStormBusy => timed(rt, spawn::spawn_storm_busy::<R>(scale)),
        W::ChainedSpawn => timed(rt, spawn::chained_spawn::<R>(scale)),
        W::DeepRecursion => timed(rt, spawn::deep_recursion::<R>(scale)),
        W::PingPong => timed(rt, spawn::ping_pong::<R>(scale)),
        W::YieldMany => timed(rt, yields::yield_many::<R>(scale)),
        W::Yield10x100 => timed(rt, yields::yield_10x100::<R>(scale)),
        W::YieldInHotLoop => timed(rt, yields::yield_in_hot_loop::<R>(scale)),
        W::FanOutCompute => timed(rt, compute::fan_out_compute::<R>(scale)),
        W::MultiThreadScaling => timed(rt, compute::multi_thread_scaling::<R>(scale)),
        W::TimersCreateDrop => timed(rt, timers::timers_create_drop::<R>(scale)),
        W::TimerReset => timed(rt, timers::timer_reset::<R>(scale)),
        W::ManyTimers => timed(rt, timers::many_timers::<R>(scale)),
        W::MpscUncontended => timed(rt, channels::mpsc_uncontended::<R>(scale)),
        W::MpscContended => timed(rt, channels::mpsc_contended::<R>(scale)),
        W::OneshotPing => timed(rt, channels::oneshot_ping::<R>(scale)),
        W::BroadcastFanout => timed(rt, channels::broadcast_fanout::<R>(scale)),
        W::CrossRuntimePing => cross_runtime::with_peer::<R>(config, cross_runtime::Serve::Echo, |tx, rx| {
            timed(rt, cross_runtime::ping::<R>(tx, rx, scale))
        }),
        W::CrossRuntimeStream => cross_runtime::with_peer::<R>(config, cross_runtime::Serve::Sum, |tx, rx| {
            timed(rt, cross_runtime::stream::<R>(tx, rx, scale))
        }),
        W::SemaphoreContended => timed(rt, locks::semaphore_contended::<R>(scale)),
        W::MutexContended => timed(rt, locks::mutex_contended::<R>(scale)),
        W::CatchUnwindPanics => timed(rt, panics::catch_unwind_panics::<R>(scale)),
        W::TcpEcho => timed(rt, net::tcp_echo::<R>(scale)),
    }
}

fn timed<R: Adapter, F: Future<Output = Result<(), String>>>(rt: &R, work: F) -> Outcome {
    let result = rt.block_on(async move {
        let start = Instant::now();
        work.await.map(|()| start.elapsed())
    });
    match result {
        Ok(elapsed) => Outcome::Time(elapsed),
        Err(why) => Outcome::Failed(why),
    }
}
