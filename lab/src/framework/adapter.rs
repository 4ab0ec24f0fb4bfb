//! The runtime-adapter traits: the only surface a workload may touch.
//!
//! Every workload in [`crate::framework::workloads`] is written once, generic over `R: Adapter`, and is
//! monomorphised per runtime (static dispatch). Nothing on a workload's hot path goes through
//! `Box<dyn Future>` or a vtable: a boxed spawn would add an allocation and an indirect call to
//! every task and distort exactly the costs the lab exists to measure.
//!
//! Glossary:
//! - **adapter**: a type that owns one built runtime (`build` → use → `drop` shuts it down) and
//!   knows how to spawn, join, yield and sleep on it. One file per runtime in `runtimes/`.
//! - **context functions** (`spawn`, `yield_now`, `sleep`): free functions, like `tokio::spawn`,
//!   that find the runtime from the calling thread. They are only called from inside
//!   [`Adapter::block_on`] or from a task spawned there.
//! - **channel kit** ([`Channels`]): each runtime's *own* bounded mpsc, oneshot, broadcast,
//!   semaphore and mutex (for smol and async-std: the crates of their ecosystem, async-channel,
//!   async-broadcast, async-lock). A runtime that has none yet names [`NotYet`], and the runner
//!   reports its rows as "not yet" instead of running them on borrowed channels.
//!
//! - **net kit** ([`Net`]): each runtime's *own* TCP listener and stream, bound to 127.0.0.1
//!   only, for the network workloads (`tcp_echo`).
//!
//! Architecture Invariant: an adapter never keeps threads alive after it is dropped; the
//! runner relies on that for "only one runtime alive at a time".

use std::future::Future;
use std::time::Duration;

/// Multi-thread (work-stealing workers) or current-thread (everything on the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    MultiThread,
    CurrentThread,
}

/// How to build a runtime for one sample. `None` knobs mean "the runtime's own default".
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RtConfig {
    pub flavor: Flavor,
    /// Worker threads for multi-thread flavors; ignored by current-thread.
    pub workers: usize,
    pub global_queue_interval: Option<u32>,
    pub event_interval: Option<u32>,
    /// weft's opt-in poll-time histogram (the `sweep` knob `poll_time_histogram=1`).
    pub poll_time_histogram: bool,
    /// weft's opt-in schedule-latency histogram (`schedule_latency_histogram=1`).
    pub schedule_latency_histogram: bool,
}

impl RtConfig {
    pub fn new(flavor: Flavor, workers: usize) -> Self {
        RtConfig {
            flavor,
            workers,
            global_queue_interval: None,
            event_interval: None,
            poll_time_histogram: false,
            schedule_latency_histogram: false,
        }
    }
}

/// The task panicked (or was cancelled); the payload is dropped, only the fact counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panicked;

/// The other side of a channel is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// One built runtime plus the context functions that reach it from inside.
pub trait Adapter: Sized + 'static {
    /// The runtime's join handle (awaited through [`Adapter::join`]).
    type Handle<T: Send + 'static>: Send + 'static;
    /// The runtime's own channels, or [`NotYet`].
    type Channels: Channels;
    /// The runtime's own TCP sockets.
    type Net: Net;

    /// Whether each `build` makes a runtime of its own, so that two can run side by side (the
    /// cross-runtime workloads). False for a process-global executor.
    const OWN_RUNTIMES: bool = true;

    /// Builds the runtime with `config` (threads started, ready to run).
    fn build(config: &RtConfig) -> std::io::Result<Self>;

    /// Runs `fut` to completion on the calling thread, with the runtime as context.
    fn block_on<F: Future>(&self, fut: F) -> F::Output;

    /// Polls this runtime's long-poll monitor counted so far (weft's `long_poll_count`); 0 for
    /// runtimes without one. The lab turns weft's warning lines off and reports this instead.
    fn long_polls(&self) -> u64 {
        0
    }

    /// Spawns onto the current runtime (call only inside `block_on` or a task).
    fn spawn<F>(fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Lets a task run on without anyone waiting for it (tokio: drop the handle; smol: `detach`).
    fn detach<T: Send + 'static>(handle: Self::Handle<T>) {
        drop(handle);
    }

    /// Waits for a task; a panic inside it becomes `Err(Panicked)`.
    fn join<T: Send + 'static>(handle: Self::Handle<T>) -> impl Future<Output = Result<T, Panicked>> + Send;

    /// Gives the worker to other tasks once.
    fn yield_now() -> impl Future<Output = ()> + Send;

    /// The runtime's timer.
    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send;

    /// The runtime's movable timer (what an idle timeout pushed back on every read uses).
    type Timer: Future<Output = ()> + Send;
    /// A timer that fires at `deadline`.
    fn timer_at(deadline: std::time::Instant) -> Self::Timer;
    /// Moves `timer` to `deadline` in place (tokio's `Sleep::reset`, async-io's `set_at`).
    fn reset_timer(timer: std::pin::Pin<&mut Self::Timer>, deadline: std::time::Instant);
}

/// Why a broadcast receive returned nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BroadcastEnd {
    /// Every sender is gone and everything was received.
    Closed,
    /// The receiver fell behind and values were skipped (a failed validation in the lab).
    Lagged,
}

/// A runtime's own bounded mpsc, oneshot and broadcast channels, semaphore and mutex.
pub trait Channels: 'static {
    /// False for [`NotYet`]: the runner skips channel workloads and reports "not yet".
    const AVAILABLE: bool;
    type Sender<T: Send + 'static>: Clone + Send + 'static;
    type Receiver<T: Send + 'static>: Send + 'static;
    type OneshotSender<T: Send + 'static>: Send + 'static;
    type OneshotReceiver<T: Send + 'static>: Send + 'static;

    fn bounded<T: Send + 'static>(capacity: usize) -> (Self::Sender<T>, Self::Receiver<T>);
    fn send<T: Send + 'static>(tx: &Self::Sender<T>, value: T) -> impl Future<Output = Result<(), Closed>> + Send + '_;
    fn recv<T: Send + 'static>(rx: &mut Self::Receiver<T>) -> impl Future<Output = Option<T>> + Send + '_;
    fn oneshot<T: Send + 'static>() -> (Self::OneshotSender<T>, Self::OneshotReceiver<T>);
    fn send_once<T: Send + 'static>(tx: Self::OneshotSender<T>, value: T) -> Result<(), Closed>;
    fn recv_once<T: Send + 'static>(rx: Self::OneshotReceiver<T>) -> impl Future<Output = Result<T, Closed>> + Send;

    type BroadcastSender<T: Clone + Send + Sync + 'static>: Send + Sync + 'static;
    type BroadcastReceiver<T: Clone + Send + Sync + 'static>: Send + 'static;
    /// A broadcast channel holding at least `capacity` values.
    fn broadcast<T: Clone + Send + Sync + 'static>(
        capacity: usize,
    ) -> (Self::BroadcastSender<T>, Self::BroadcastReceiver<T>);
    fn subscribe<T: Clone + Send + Sync + 'static>(tx: &Self::BroadcastSender<T>) -> Self::BroadcastReceiver<T>;
    fn broadcast_send<T: Clone + Send + Sync + 'static>(
        tx: &Self::BroadcastSender<T>,
        value: T,
    ) -> impl Future<Output = Result<(), Closed>> + Send + '_;
    fn broadcast_recv<T: Clone + Send + Sync + 'static>(
        rx: &mut Self::BroadcastReceiver<T>,
    ) -> impl Future<Output = Result<T, BroadcastEnd>> + Send + '_;

    type Semaphore: Send + Sync + 'static;
    fn semaphore(permits: usize) -> Self::Semaphore;
    /// Runs `work` while holding one permit.
    fn with_permit<'a, F: Future<Output: Send> + Send + 'a>(
        sem: &'a Self::Semaphore,
        work: F,
    ) -> impl Future<Output = F::Output> + Send + 'a;

    type Mutex<T: Send + 'static>: Send + Sync + 'static;
    fn mutex<T: Send + 'static>(value: T) -> Self::Mutex<T>;
    /// Locks, runs `f` on the data, unlocks.
    fn with_lock<'a, T: Send + 'static, R: Send + 'a>(
        m: &'a Self::Mutex<T>,
        f: impl FnOnce(&mut T) -> R + Send + 'a,
    ) -> impl Future<Output = R> + Send + 'a;
}

/// A runtime's own TCP sockets (loopback only: workloads never listen beyond 127.0.0.1).
/// `TCP_NODELAY` is set on every stream, as latency-sensitive servers do.
pub trait Net: 'static {
    type Listener: Send + Sync + 'static;
    type Stream: Send + 'static;
    /// The stream as hyper 1.x I/O, through the runtime's own (or its usual) hyper adapter.
    type HyperIo: hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static;

    fn hyper_io(stream: Self::Stream) -> Self::HyperIo;

    /// The runtime's own hyper timer (`hyper::rt::Timer`: header-read timeouts, keep-alive
    /// timers), as its users would configure it: `WeftTimer` for weft, hyper-util's
    /// `TokioTimer` for tokio; `None` for a runtime without one (`NoTimer`).
    type HyperTimer: hyper::rt::Timer + Send + Sync + 'static;
    fn hyper_timer() -> Option<Self::HyperTimer>;

    /// Listens on 127.0.0.1 on an ephemeral port.
    fn bind_loopback() -> impl Future<Output = std::io::Result<(Self::Listener, std::net::SocketAddr)>> + Send;
    fn accept(listener: &Self::Listener) -> impl Future<Output = std::io::Result<Self::Stream>> + Send + '_;
    fn connect(addr: std::net::SocketAddr) -> impl Future<Output = std::io::Result<Self::Stream>> + Send;
    fn read_exact<'a>(
        stream: &'a mut Self::Stream,
        buf: &'a mut [u8],
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'a;
    fn write_all<'a>(
        stream: &'a mut Self::Stream,
        buf: &'a [u8],
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'a;
}

/// The channel kit of a runtime that has no channels yet. It cannot be constructed: the runner
/// checks [`Channels::AVAILABLE`] before any channel workload starts.
#[derive(Clone, Copy, Debug)]
pub enum NotYet {}

const NOT_YET: &str = "this runtime has no channels yet (Channels::AVAILABLE is false)";

#[allow(unreachable_code)] // every method takes an uninhabited value
impl Channels for NotYet {
    const AVAILABLE: bool = false;
    type Sender<T: Send + 'static> = NotYet;
    type Receiver<T: Send + 'static> = NotYet;
    type OneshotSender<T: Send + 'static> = NotYet;
    type OneshotReceiver<T: Send + 'static> = NotYet;

    fn bounded<T: Send + 'static>(_: usize) -> (NotYet, NotYet) {
        unreachable!("{NOT_YET}")
    }
    fn send<T: Send + 'static>(tx: &NotYet, _: T) -> impl Future<Output = Result<(), Closed>> + Send + '_ {
        std::future::ready(match *tx {})
    }
    fn recv<T: Send + 'static>(rx: &mut NotYet) -> impl Future<Output = Option<T>> + Send + '_ {
        std::future::ready(match *rx {})
    }
    fn oneshot<T: Send + 'static>() -> (NotYet, NotYet) {
        unreachable!("{NOT_YET}")
    }
    fn send_once<T: Send + 'static>(tx: NotYet, _: T) -> Result<(), Closed> {
        match tx {}
    }
    fn recv_once<T: Send + 'static>(rx: NotYet) -> impl Future<Output = Result<T, Closed>> + Send {
        std::future::ready(match rx {})
    }
    type BroadcastSender<T: Clone + Send + Sync + 'static> = NotYet;
    type BroadcastReceiver<T: Clone + Send + Sync + 'static> = NotYet;
    fn broadcast<T: Clone + Send + Sync + 'static>(_: usize) -> (NotYet, NotYet) {
        unreachable!("{NOT_YET}")
    }
    fn subscribe<T: Clone + Send + Sync + 'static>(tx: &NotYet) -> NotYet {
        match *tx {}
    }
    fn broadcast_send<T: Clone + Send + Sync + 'static>(
        tx: &NotYet,
        _: T,
    ) -> impl Future<Output = Result<(), Closed>> + Send + '_ {
        std::future::ready(match *tx {})
    }
    fn broadcast_recv<T: Clone + Send + Sync + 'static>(
        rx: &mut NotYet,
    ) -> impl Future<Output = Result<T, BroadcastEnd>> + Send + '_ {
        std::future::ready(match *rx {})
    }
    type Semaphore = NotYet;
    fn semaphore(_: usize) -> NotYet {
        unreachable!("{NOT_YET}")
    }
    fn with_permit<'a, F: Future<Output: Send> + Send + 'a>(
        sem: &'a NotYet,
        _: F,
    ) -> impl Future<Output = F::Output> + Send + 'a {
        std::future::ready(match *sem {})
    }
    type Mutex<T: Send + 'static> = NotYet;
    fn mutex<T: Send + 'static>(_: T) -> NotYet {
        unreachable!("{NOT_YET}")
    }
    fn with_lock<'a, T: Send + 'static, R: Send + 'a>(
        m: &'a NotYet,
        _: impl FnOnce(&mut T) -> R + Send + 'a,
    ) -> impl Future<Output = R> + Send + 'a {
        std::future::ready(match *m {})
    }
}
