//! Schedulers: who runs which task, where, and how idle threads sleep.
//!
//! Two flavors share the task machinery (`crate::task`) and the driver (`runtime::driver`):
//! * `current_thread` — every task runs on the thread that calls `block_on`.
//! * `multi_thread` — N worker threads with work stealing.
//!
//! Both handles embed a `common::HandleCommon` (driver handle, blocking pool, owned-task
//! list, task arena, configuration, metrics), and `Schedule` is implemented once for both in
//! `common.rs`, over the small `common::Flavor` trait through which each flavor says where a
//! woken task goes.
//!
//! # Glossary
//! * **worker** — a thread of the multi-thread runtime, running its **core**.
//! * **core** (`Box<Core>`) — what a worker needs to run tasks: its local run queue, LIFO
//!   slot, tick counter and parker. Exactly one thread holds a given core at a time.
//! * **inject queue** — the global FIFO for tasks spawned or woken off the workers.
//! * **searching** — a worker that ran out of local work and is stealing.
//! * **driver** — the time wheel and the mio poller (`runtime/io`), or, without I/O, a
//!   condvar parker: what the driver owner sleeps in until the next timer, an I/O event or an
//!   unpark.
//!
//! # Parking (the essay)
//! A worker with nothing to run goes through two stages:
//! 1. *Search* — one pass: steal half of a random sibling's queue, trying
//!    each sibling once, then look at the inject queue. At most half the workers search at
//!    once (a CAS on the idle word enforces it), so a burst of work does not wake everybody
//!    into a stealing frenzy (no thundering herd).
//!
//!    There is deliberately no further spinning. Re-checking the queues' lengths for some
//!    rounds before parking is a net loss on 2 workers: a thief that stays awake steals every
//!    freshly woken task of a fine-grained pipeline, so producers and consumers end up on both
//!    cores fighting over the same cache lines (`mpsc_contended`, `spawn_inside` and
//!    `yield_in_hot_loop` all lose). Spinning longer (512 rounds) cuts context switches to a
//!    trickle and still makes spawning slower. Figures and command:
//!    docs/notes/performance-figures.md, "Spinning before parking".
//!    A sleeping worker is woken by `notify_parked` when a queue holds more than one task,
//!    which rate-limits stealing to when it pays.
//! 2. *Park* — the worker registers as a sleeper in `Idle` and then sleeps in its `Parker`.
//!    The first parker to find the driver free (`try_lock`) becomes the **driver owner**: it
//!    blocks inside the driver with the next timer deadline as its timeout, and fires
//!    expired timers when it wakes. Every other parked worker waits on its own condition
//!    variable, which is cheap to signal.
//!
//! Waking: whoever makes work available (a spawn, a remote wake, a timer) calls
//! `notify_parked`, which unparks *one* sleeper, and only if no worker is already searching —
//! a searching worker will find the work, and when it does, it wakes the next sleeper if it
//! was the last searcher (a chain of at most one wake per unit of found work). An unpark sets
//! the parker's state to NOTIFIED before signalling, so a wake that races with a worker about
//! to sleep is never lost: the worker's final CAS from EMPTY to PARKED fails and it returns.
//! Unparking the driver owner goes through the driver's own unpark (`driver::Unpark`),
//! chosen by the parker's state word (`PARKED_CONDVAR` vs `PARKED_DRIVER`), so the waker
//! never needs to know who owns it.
//!
//! *The I/O driver.* With `enable_io` the driver owner blocks in `epoll_wait` (mio's `Poll`)
//! with the next timer deadline as its timeout, dispatches the I/O events it got (setting
//! readiness and waking the socket's tasks, which pushes them on the inject queue or this
//! worker's queue), then fires due timers. A wake from another thread reaches it through
//! mio's eventfd `Waker`; the wake is *coalesced*: an `AtomicBool` "wake pending" is set by
//! every unpark but only the one that flips it false → true writes the eventfd, and the owner
//! clears it right after `epoll_wait` returns, so a burst of wakes while it sleeps costs one
//! syscall (see `runtime/io/mod.rs`). The time handle uses the same `Unpark` when a timer
//! earlier than the owner's timeout is registered.
//!
//! Busy workers still poll the driver without blocking every `event_interval` ticks (if it is
//! free), so timers fire and I/O readiness is collected even when no worker is idle.
//!
//! *Hand-off.* The driver is only held *while parked*. When the owner wakes to run work (a
//! timer fired for one of its tasks, or it was unparked), that work may block for a long time
//! (a slow poll, a blocking call), and the other idle workers sleep on their condvars, not in
//! the driver: nobody would fire timers or read I/O. So the driver is handed to a sleeper: the
//! ordinary `notify_parked` wakes one (skipped if a worker is searching — a searcher parks, and
//! takes the driver, soon anyway); it finds nothing to do, parks, and wins the driver's
//! `try_lock` — and from then on it, not the busy former owner, blocks in `epoll_wait`, so
//! sockets are read while the long-running task runs. The hand-over is *lazy*: the monitor
//! (`multi_thread/monitor.rs`) does it once a worker has been in one poll for a whole sample
//! and nobody sleeps in the driver, sampling at least every 1 ms while a worker polls and
//! another sleeps. Handing over every time a worker leaves the driver costs a futex wake and
//! a thread switch per request at low load (server CPU per request of hyper hello at one
//! connection, `weft-lab http-hello --connections 1`: docs/notes/performance-figures.md,
//! "Driver hand-over"); without a monitor (threshold 0) the hand-over stays eager.
//! `tests/fairness.rs` has the scenario the hand-over exists for (a timer must fire while the
//! worker that owned the driver blocks in a poll). Timers registered
//! with an earlier deadline than the one the owner sleeps until unpark the driver, which then
//! re-arms its timeout.
//!
//! Rejected designs: (a) a dedicated timer/I/O thread — every wake of a task would cross
//! threads and every timer would cost a context switch; (b) all idle workers blocking in
//! epoll — wakes would need epoll-wide notifications and each would wake them all; (c)
//! spinning indefinitely before parking, as some fiber runtimes do — it wins spawn
//! microbenchmarks and burns a core per idle worker in production, and the lab would then
//! measure the competitor running against a spinning neighbour.
//!
//! # Blocked workers (`block_in_place`, detection, compensation)
//! Glossary: a **long poll** is one `poll` of one task that keeps a worker longer than
//! `long_poll_threshold` (10 ms); a **spare** is a runtime thread without a core, waiting to
//! run one (`multi_thread/handoff.rs`); a **stand-in** is a compensating thread running in
//! place of a stuck worker (`multi_thread/compensate.rs`).
//!
//! *`block_in_place`* (the user says "this blocks"): the worker parks its core in its hand-off
//! slot and a spare (or a new thread) runs the ordinary worker loop with it; the closure runs
//! on the original thread, which takes the core back afterwards if no thread got to it, or
//! finishes the poll without a core and becomes a spare. Cores never multiply: the slot's
//! lock decides who gets a parked core.
//!
//! *Detection* (the user did not say): each worker publishes, around every poll, the poll's
//! sequence number, task id and spawn location in its own cache line (four relaxed stores,
//! no clock read). A monitor thread per runtime samples those slots like Go's sysmon (20 µs
//! doubling to `min(10 ms, threshold / 2)`, parked on a condvar while every worker sleeps), and
//! takes the time itself: the same odd sequence number seen for longer than the threshold is
//! a long poll. It is counted (`long_poll_count`), kept (`recent_long_polls`, 64) and printed
//! once per second at most: `weft: task 42 spawned at src/handler.rs:88:5 blocked worker 1
//! for 230 ms` — but only once the poll has lasted the threshold *without* the time its thread
//! spent waiting for a CPU (the kernel's run delay): a preempted worker is not a blocking task,
//! and a warning that fires on a busy machine for short polls would be turned off
//! (`multi_thread/monitor.rs`, "Preempted is not blocked").
//!
//! *Compensation* (on by default): for each worker stuck past the threshold the monitor steals
//! its queued tasks into the injection queue (a thief like any other), with the task in its
//! LIFO slot (through an asymmetric handshake that keeps the worker's side free of atomic
//! read-modify-writes, `multi_thread/lifo.rs`), and wakes a sleeper. If work still
//! waits with no worker asleep, or every worker is stuck (then nobody drives timers and I/O),
//! it starts a stand-in for one stuck poll: a thread without a core that runs injected tasks
//! and drives the driver in 1 ms slices, and exits when that poll returns. At most one per
//! stuck poll, so at most `worker_threads` extra threads; all are joined at shutdown.
//!
//! tokio's objections, and what this design does about them:
//! * *What counts as progress?* A worker is "blocked" only when one poll of one task outlasts
//!   the threshold — a fact the worker publishes, not a guess from CPU time or queue lengths.
//!   A task that spins in a loop and one that sleeps in a syscall are both blocked from the
//!   scheduler's view, and both are what stalls the other tasks; a busy worker that keeps
//!   finishing polls is never compensated, however loaded.
//! * *Oversubscription.* A stand-in adds a runnable thread only while a worker is inside a
//!   long poll; if that poll spins, the CPU is oversubscribed by one thread per stuck worker
//!   for the poll's remainder (the kernel time-slices them; without a stand-in the other
//!   tasks would not run at all). The bound is `worker_threads` extra threads, and the stand-in
//!   exits at the end of the stuck poll, not after a keep-alive.
//! * *Stutter under bursty load.* With a fixed threshold, a burst of 10 ms polls would start
//!   and stop stand-ins repeatedly. A stand-in starts only when work waits *and* no worker is
//!   asleep, or every worker is stuck; a CPU-heavy burst on an otherwise busy runtime therefore
//!   starts none as long as one worker still cycles. `compensate_blocked_workers(false)` (or
//!   `WEFT_COMPENSATE=0`) keeps detection and turns this off.
//!
//! Rejected: (a) *moving the stuck worker's core to a new thread* (async-std's unmerged
//! design, and Go's P hand-off): the running task reaches the core through the worker's
//! context without synchronisation (every spawn and wake); letting another thread take it
//! mid-poll would put an atomic exchange on that path. The stand-in needs no core, so the hot
//! path is unchanged, at the price of its tasks waking through the injection queue.
//! (b) *Extra cores pre-allocated for stand-ins*: every steal, notify and metrics loop would
//! walk slots that are almost always empty. (c) *Timing every poll on the worker* (two clock
//! reads per poll) instead of the monitor's sampling: the per-poll cost the metrics essay
//! already declines to pay by default; sampling gives the same answer for polls ≥ 1.5 ×
//! threshold.
//!
//! In `weft-lab blocking-resilience` (1,000 tasks spawned by a task that then blocks its
//! worker for 1 s), weft's stealing already rescues the queue with or without compensation
//! (spawns never go to the LIFO slot), while tokio-mt's worst latency is the whole block (the
//! task in its LIFO slot waits for it); figures in docs/notes/performance-figures.md,
//! "Blocking resilience". Compensation matters when every worker blocks
//! (`tests/blocking.rs`, the timer test), which tokio and an uncompensated weft cannot serve,
//! and when a task wakes another and then blocks until that one has run (the LIFO-slot tests
//! there: a deadlock for tokio and for any runtime whose LIFO slot cannot be taken).
//!
//! # Shutdown, as steps
//! 1. The inject queue is closed and every worker is unparked.
//! 2. Each worker, at its next maintenance tick, marks its core shut down, cancels the tasks
//!    of the owned-task list (every worker helps; each task is cancelled once), and hands its
//!    core back.
//! 3. The last core handed back drains every run queue (dropping the `Runnable`s of the
//!    already-cancelled tasks) and shuts the driver down, which fires every pending timer (its waker is *woken*, so the
//!    sleeping task sees the shutdown on its next poll; see `time/mod.rs`) and marks every socket registration shut down (their I/O futures then return an error).
//! 4. `Runtime::drop` closes the blocking pool (queued closures are cancelled, running ones
//!    waited for) and waits for the worker threads (or `shutdown_timeout` gives up waiting).

mod common;
pub(crate) mod current_thread;
pub(crate) mod multi_thread;

use crate::loom::sync::Arc;
use std::future::Future;

use crate::task::{Id, JoinHandle};

/// A shared handle to either flavor (cheap to clone).
#[derive(Clone)]
pub(crate) enum Handle {
    CurrentThread(Arc<current_thread::Handle>),
    MultiThread(Arc<multi_thread::Handle>),
}

/// The per-thread context of a running scheduler loop.
pub(crate) enum Context {
    CurrentThread(current_thread::Context),
    MultiThread(multi_thread::Context),
}

impl Handle {
    #[track_caller]
    pub(crate) fn spawn<F>(&self, future: F, id: Id) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self {
            Handle::CurrentThread(h) => current_thread::Handle::spawn(h, future, id),
            Handle::MultiThread(h) => multi_thread::Handle::spawn_remote(h, future, id),
        }
    }

    pub(crate) fn driver(&self) -> &crate::runtime::driver::Handle {
        match self {
            Handle::CurrentThread(h) => &h.common.driver,
            Handle::MultiThread(h) => &h.common.driver,
        }
    }

    /// The runtime's configuration, as built.
    pub(crate) fn config(&self) -> &crate::runtime::Config {
        match self {
            Handle::CurrentThread(h) => &h.common.config,
            Handle::MultiThread(h) => &h.common.config,
        }
    }

    /// The runtime's blocking pool (a scheduler service: its threads enter this handle's
    /// context to run closures).
    pub(crate) fn blocking(&self) -> &crate::runtime::blocking::BlockingPool {
        match self {
            Handle::CurrentThread(h) => &h.common.blocking,
            Handle::MultiThread(h) => &h.common.blocking,
        }
    }

    /// Runs `f` on the blocking pool, inside this runtime's context.
    pub(crate) fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.blocking().spawn(f, self.clone())
    }

    /// Runs `f` on the blocking pool, or returns `None` when shutdown has closed the pool.
    pub(crate) fn spawn_mandatory_blocking<F, R>(&self, f: F) -> Option<JoinHandle<R>>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.blocking().try_spawn(f, self.clone()).ok()
    }

    /// The runtime's task arena (`None` when `Builder::task_arena(false)`).
    pub(crate) fn task_arena(&self) -> Option<&crate::task::arena::TaskArena> {
        match self {
            Handle::CurrentThread(h) => h.common.arena.as_ref(),
            Handle::MultiThread(h) => h.common.arena.as_ref(),
        }
    }

    pub(crate) fn metrics(&self) -> &crate::runtime::metrics::SchedulerMetrics {
        match self {
            Handle::CurrentThread(h) => &h.common.metrics,
            Handle::MultiThread(h) => &h.common.metrics,
        }
    }

    pub(crate) fn global_queue_depth(&self) -> usize {
        match self {
            Handle::CurrentThread(h) => h.global_queue_depth(),
            Handle::MultiThread(h) => h.global_queue_depth(),
        }
    }

    pub(crate) fn worker_local_queue_depth(&self, worker: usize) -> usize {
        match self {
            Handle::CurrentThread(h) => h.local_queue_depth(),
            Handle::MultiThread(h) => h.worker_local_queue_depth(worker),
        }
    }

    pub(crate) fn num_workers(&self) -> usize {
        match self {
            Handle::CurrentThread(_) => 1,
            Handle::MultiThread(h) => h.num_workers(),
        }
    }
}

impl Context {
    /// Spawns from this scheduler's own thread (no cross-thread queue).
    #[track_caller]
    pub(crate) fn spawn<F>(&self, future: F, id: Id) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self {
            Context::CurrentThread(cx) => current_thread::Handle::spawn(&cx.handle, future, id),
            Context::MultiThread(cx) => cx.spawn_local(future, id),
        }
    }
}
