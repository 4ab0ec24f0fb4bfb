//! The blocking pool behind `weft::task::spawn_blocking`: a bounded set of plain threads
//! that run closures which would otherwise block a worker (DNS lookups, file I/O, CPU-heavy
//! or foreign blocking calls).
//!
//! Shaped as one mutex-protected FIFO plus a condvar, because blocking work is by definition
//! slow (micro- to milliseconds and up), so a lock per task costs nothing measurable and
//! keeps the pool obviously correct. Each closure runs as an ordinary weft task (so it
//! returns a normal `JoinHandle`, panics become `JoinError`s, and aborting a queued closure
//! cancels it) whose future completes in its one and only poll.
//!
//! # Size: the pool sizes itself
//! The problem (reference report 002, "Final Optimization Summary", a file-search engine
//! compared on tokio, smol and rayon; where to read it: docs/notes/reference-reports.md): its
//! file search ran 8% slower on smol's default pool (500 threads on 10 cores) than with
//! `BLOCKING_MAX_THREADS` = cores, and its sweep found 1 thread 6× slower than 10; tokio's 512
//! has the same trap. The best fixed size
//! depends on the work: CPU-bound closures (parse a file from the page cache) want about one
//! thread per core; closures that *wait* (DNS, a pipe, a cold disk) want many more; and
//! closures that wait *on each other* deadlock in any pool too small for all of them.
//!
//! The rule, "keep as many pool threads runnable as there are cores":
//! 1. *Floor*: up to `min(cores, cap)` threads are spawned on demand (a queued closure with
//!    no idle thread gets a new one).
//! 2. *Growth past the floor* is decided by a supervisor thread that exists only while a backlog
//!    does (closures queued, no idle thread, fewer threads than the cap). Every `TICK` (2 ms) it
//!    reads each pool thread's state (`/proc/self/task/<tid>/stat`) and counts the *runnable*
//!    ones (`R`: on a CPU or waiting for one); when fewer than the cores were runnable in two
//!    ticks in a row, it adds the difference. While the cores stay busy the tick backs off to
//!    `MAX_TICK` (16 ms); a tick that sees an unused core returns it to 2 ms. A thread that
//!    computes, or waits only for a CPU (a busy machine), is runnable, so CPU-bound work stays
//!    at the floor, where the sweep in `weft-lab search bench` finds the optimum; threads that
//!    wait (I/O, locks, sleeps) are not, so waiting work grows until `cores` threads are
//!    runnable again or the cap is reached (closures that are half waiting settle near
//!    2 × cores); closures waiting on each other are all blocked, so the pool grows until they
//!    can meet.
//! 3. *Shrinking*: a thread idle for the keep-alive (10 s) exits, so the pool falls back to zero.
//!    There is no early shrink: growth happens only while threads block, and a blocked thread
//!    that wakes up finds the queue drained soon after.
//! 4. *The cap* (`Builder::max_blocking_threads`, default 8 × cores clamped to 16..=128, or
//!    `WEFT_MAX_BLOCKING_THREADS`) bounds all of it: an explicit size is never exceeded.
//!
//! Where `/proc/self/task/<tid>/stat` cannot be read (not Linux, no `/proc`), the supervisor
//! falls back to a starvation rule: no closure completed for
//! `STARVATION_TICKS` ticks while a backlog waited → one more thread (the rule .NET's pool uses
//! on top of its hill climbing). Under loom the floor is the cap and there is no supervisor.
//!
//! Rejected alternatives:
//! - *A fixed size* (tokio 512, smol 500, or the cap itself: 8 × cores in 16..=128): right for
//!   one workload at a time; the report's sweep shows the cost of the wrong one.
//! - *Hill climbing on throughput* (.NET): perturb the thread count, keep the change if the
//!   completion rate improved. It needs many noisy samples per decision (hundreds of ms), while
//!   a search of a few thousand files is over in a few hundred ms, and it cannot tell "more
//!   threads would not help" from "the machine is noisy". Blocked time measures the cause
//!   directly, in one tick.
//! - *Thread CPU clocks alone* (`CLOCK_THREAD_CPUTIME_ID`): off-CPU time then mixes blocked and
//!   runnable-but-waiting, so a pool on a busy machine would grow into the oversubscription it
//!   should avoid; the thread state separates the two.
//! - *Blocked time from `schedstat`* (busy threads × tick − on-CPU time − run-queue wait): the
//!   kernel adds a running thread's CPU time at scheduler ticks and a runnable thread's wait
//!   only once it runs, so within a 2 ms tick threads that compute look blocked, and the pool
//!   grows to its cap on CPU-bound work (the 300-file search on 2 cores: slower, with twice
//!   the peak RSS; docs/notes/performance-figures.md, "Blocking pool").
//!   Sampling the state has no such lag; its noise (a thread caught in a short wait) is why
//!   growth needs two ticks in a row.
//! - *Counting blocked threads and replacing each*: threads that wait half of the time would
//!   each count half, and the pool would grow as long as any of them waited, never stopping at
//!   "the cores are busy".
//! - *Go's sysmon per-syscall handoff*: needs every blocking call to announce itself; closures
//!   given to `spawn_blocking` are arbitrary code.
//!
//! Known limit: a closure that waits by spinning looks like computation and is not replaced.
//! Threads are spawned on demand and exit after `DEFAULT_KEEP_ALIVE` (10 s) idle, so an idle
//! runtime holds no blocking threads.
//!
//! # Shutdown, as steps
//! 1. `Runtime` shutdown closes the pool: new spawns are refused (their `JoinHandle`s report
//!    cancellation). Closures already queued still run, as in tokio: the pool's threads —
//!    including one started for a closure an instant before — take the queue to its end before
//!    they exit. Only a queue no thread is left to run is cancelled.
//! 2. Idle threads are woken and exit once the queue is empty.
//! 3. Running closures cannot be interrupted: `Runtime::drop` waits for them (like tokio),
//!    `shutdown_timeout` waits at most its timeout and then detaches them, and
//!    `shutdown_background` detaches at once. A detached thread finishes its closure and exits.
//! 4. The supervisor, if running, is woken and exits; `shutdown` waits for it like a thread.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::loom::lock;
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::runtime::{context, scheduler};
use crate::task::{JoinHandle, Runnable, Schedule, Task, TaskRef};

/// The default bound of the pool; see the module comment for the reasoning.
pub(crate) fn default_max_threads() -> usize {
    if let Some(n) = std::env::var("WEFT_MAX_BLOCKING_THREADS").ok().and_then(|v| v.parse::<usize>().ok()) {
        if n > 0 {
            return n;
        }
    }
    (8 * cores()).clamp(16, 128)
}
pub(crate) const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// How often the supervisor measures the pool while a backlog waits: every `TICK` at first and
/// after any tick that found a core unused, backing off (doubling) to `MAX_TICK` while the pool
/// keeps the cores busy, so a long CPU-bound backlog is not interrupted every 2 ms.
const TICK: Duration = Duration::from_millis(2);
const MAX_TICK: Duration = Duration::from_millis(16);
/// Fallback rule (no thread states): ticks without a completion before one more thread.
const STARVATION_TICKS: u32 = 5;

fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Cloneable handle to one runtime's pool.
#[derive(Clone)]
pub(crate) struct BlockingPool {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Idle threads wait here for work or shutdown.
    work: Condvar,
    /// `shutdown` waits here for running threads (and the supervisor) to exit.
    exited: Condvar,
    /// The supervisor sleeps here between ticks; shutdown wakes it.
    tick: Condvar,
    max_threads: usize,
    /// Threads spawned on demand without asking the supervisor: `min(cores, max_threads)`.
    floor: usize,
    keep_alive: Duration,
}

struct State {
    queue: VecDeque<Runnable<BlockingSchedule>>,
    threads: usize,
    idle: usize,
    /// Wake-ups handed to idle threads and not yet consumed.
    notified: usize,
    shutdown: bool,
    /// Closures finished so far (the fallback starvation rule watches it).
    completed: u64,
    /// Whether the supervisor thread is running.
    supervising: bool,
    /// OS thread ids of the pool's threads, whose states the supervisor samples.
    tids: Vec<i64>,
    /// Supervisor ticks so far (tests wait on it instead of on the clock).
    ticks: u64,
    /// The most threads the pool ever had at once (for the metrics dump).
    peak_threads: usize,
}

impl State {
    /// Queued work that no idle thread is about to take, and room to grow.
    fn backlog(&self, max_threads: usize) -> bool {
        !self.shutdown && self.queue.len() > self.notified && self.idle == 0 && self.threads < max_threads
    }
}

/// The `Schedule` of blocking tasks. Their future completes in its first poll, so they are
/// never woken, never go idle and never join an owned list.
pub(crate) struct BlockingSchedule {
    /// Holds a paused clock's auto-advance until the task has completed and woken its joiner.
    #[cfg(feature = "test-util")]
    inhibit: Option<InhibitAutoAdvance>,
}

/// `test-util`: while held, the runtime's paused clock does not auto-advance (`time/clock.rs`).
/// Released by `release` (once the task completed and woke its joiner: released earlier, the
/// idle runtime could auto-advance past a `timeout` around the closure before the joiner is
/// woken; blocking tasks therefore never take the fast completion path, `COMPLETES_FAST`) or,
/// for a task dropped without completing, by `Drop`. Releasing unparks the driver so that an
/// idle runtime re-checks.
#[cfg(feature = "test-util")]
struct InhibitAutoAdvance {
    handle: scheduler::Handle,
    released: crate::loom::sync::atomic::AtomicBool,
}

#[cfg(feature = "test-util")]
impl InhibitAutoAdvance {
    fn new(handle: &scheduler::Handle) -> Option<InhibitAutoAdvance> {
        handle.driver().time()?.clock.inhibit_auto_advance();
        Some(InhibitAutoAdvance { handle: handle.clone(), released: crate::loom::sync::atomic::AtomicBool::new(false) })
    }

    fn release(&self) {
        if self.released.swap(true, crate::loom::sync::atomic::Ordering::AcqRel) {
            return;
        }
        if let Some(time) = self.handle.driver().time() {
            time.clock.allow_auto_advance();
        }
        self.handle.driver().unpark();
    }
}

#[cfg(feature = "test-util")]
impl Drop for InhibitAutoAdvance {
    fn drop(&mut self) {
        self.release();
    }
}

impl BlockingSchedule {
    /// Lets a paused clock auto-advance again (`test-util`; once, whichever path comes first).
    #[inline]
    fn allow_auto_advance(&self) {
        #[cfg(feature = "test-util")]
        if let Some(inhibit) = &self.inhibit {
            inhibit.release();
        }
    }
}

impl Schedule for BlockingSchedule {
    fn schedule(&self, task: Runnable<Self>) {
        // Never reached: a queued closure is already NOTIFIED (an abort only adds CANCELLED,
        // which the pool thread's poll observes) and a running one completes in that poll, so
        // no wake or abort submits it again. Should that change, cancelling is the safe answer.
        task.shutdown();
    }
    fn release(&self, _task: TaskRef<'_>) -> Option<Task<Self>> {
        // Called by the completing thread after it woke the joiner.
        self.allow_auto_advance();
        None
    }
    /// With `test-util`, `release` must run after completion while the completer still holds
    /// its reference. (A hook called after the fast path's RMW ran on a cell the `JoinHandle`
    /// could already have freed and reused for another blocking task, whose inhibit it then
    /// released: the count underflowed and the pool thread panicked.)
    const COMPLETES_FAST: bool = !cfg!(feature = "test-util");
    fn bind(&self, task: Task<Self>) -> bool {
        drop(task);
        false
    }
}

/// The closure as a future: runs it on its first poll, inside the runtime's context.
struct BlockingTask<F> {
    f: Option<F>,
    handle: scheduler::Handle,
    /// When `spawn_blocking` queued it (for the queue-latency histogram, `runtime/metrics`).
    queued_at: Instant,
}

impl<F> Unpin for BlockingTask<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingTask<F> {
    type Output = R;
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<R> {
        let f = self.f.take().expect("a blocking task is polled once");
        self.handle.metrics().record_blocking_queue_latency(self.queued_at);
        let _enter = context::enter(self.handle.clone());
        // Unconstrained: blocking code may drive leaf futures via `Handle::block_on`.
        let _budget = crate::task::coop::BudgetGuard::new(None);
        Poll::Ready(f())
    }
}

impl BlockingPool {
    pub(crate) fn new(max_threads: usize, keep_alive: Duration) -> BlockingPool {
        // Under loom: no supervisor thread and no /proc; the pool spawns on demand up to the cap.
        let floor = if cfg!(loom) { max_threads } else { cores().min(max_threads) };
        BlockingPool {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    threads: 0,
                    idle: 0,
                    notified: 0,
                    shutdown: false,
                    completed: 0,
                    supervising: false,
                    tids: Vec::new(),
                    ticks: 0,
                    peak_threads: 0,
                }),
                work: Condvar::new(),
                exited: Condvar::new(),
                tick: Condvar::new(),
                max_threads,
                floor,
                keep_alive,
            }),
        }
    }

    #[track_caller]
    pub(crate) fn spawn<F, R>(&self, f: F, handle: scheduler::Handle) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        match self.try_spawn(f, handle) {
            Ok(join) | Err(join) => join,
        }
    }

    /// Like `spawn`, but says whether the pool took the closure: `Err` (with an already
    /// cancelled handle) once shutdown has closed the pool. For work that must not be reported
    /// done unless it ran (stdout's write-behind: tokio's mandatory blocking tasks).
    #[track_caller]
    pub(crate) fn try_spawn<F, R>(&self, f: F, handle: scheduler::Handle) -> Result<JoinHandle<R>, JoinHandle<R>>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let queued_at = Instant::now();
        let schedule = BlockingSchedule {
            #[cfg(feature = "test-util")]
            inhibit: InhibitAutoAdvance::new(&handle),
        };
        let task = BlockingTask { f: Some(f), handle, queued_at };
        let (runnable, join) = crate::task::new_task(task, schedule, crate::task::Id::next());
        let mut state = lock(&self.inner.state);
        if state.shutdown {
            drop(state);
            runnable.shutdown();
            return Err(join);
        }
        state.queue.push_back(runnable);
        if state.idle > 0 {
            state.idle -= 1;
            state.notified += 1;
            drop(state);
            self.inner.work.notify_one();
        } else if state.threads < self.inner.floor {
            state.threads += 1;
            state.peak_threads = state.peak_threads.max(state.threads);
            drop(state);
            spawn_threads(&self.inner, 1);
        } else if !state.supervising && state.backlog(self.inner.max_threads) {
            // Past the floor, growth is the supervisor's decision (module doc, rule 2).
            state.supervising = true;
            drop(state);
            let inner = self.inner.clone();
            let spawned =
                crate::loom::thread::Builder::new().name("weft-blocking-sup".into()).spawn(move || supervise(inner));
            if let Err(e) = spawned {
                lock(&self.inner.state).supervising = false;
                panic!("weft: could not spawn the blocking-pool supervisor ({e}); raise the OS thread limit");
            }
        }
        // Otherwise the task waits in the queue for the first free thread.
        Ok(join)
    }

    /// (threads, idle threads, queued closures) now, for the runtime metrics.
    pub(crate) fn metrics_snapshot(&self) -> (usize, usize, usize) {
        let state = lock(&self.inner.state);
        (state.threads, state.idle, state.queue.len())
    }

    /// (max threads, keep-alive, peak threads, closures completed), for the metrics dump.
    pub(crate) fn summary(&self) -> (usize, Duration, usize, u64) {
        let state = lock(&self.inner.state);
        (self.inner.max_threads, self.inner.keep_alive, state.peak_threads, state.completed)
    }

    /// Threads currently in the pool (running or idle; not the supervisor).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn num_threads(&self) -> usize {
        lock(&self.inner.state).threads
    }

    /// (supervisor ticks so far, peak threads).
    #[cfg(all(test, not(loom)))]
    fn ticks_and_peak(&self) -> (u64, usize) {
        let state = lock(&self.inner.state);
        (state.ticks, state.peak_threads)
    }

    /// Closes the pool (steps in the module doc); waits for running closures up to `timeout`
    /// (`None` = for as long as they take).
    pub(crate) fn shutdown(&self, timeout: Option<Duration>) {
        let queued: Vec<_> = {
            let mut state = lock(&self.inner.state);
            if state.shutdown {
                return;
            }
            state.shutdown = true;
            // Queued closures run on the threads there are (each drains the queue before it
            // exits); with none left, nobody would.
            if state.threads == 0 {
                state.queue.drain(..).collect()
            } else {
                Vec::new()
            }
        };
        self.inner.work.notify_all();
        self.inner.tick.notify_all();
        for task in queued {
            task.shutdown();
        }
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut state = lock(&self.inner.state);
        while state.threads > 0 || state.supervising {
            match deadline {
                None => state = self.inner.exited.wait(state).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return; // detach the rest
                    }
                    state = self.inner.exited.wait_timeout(state, d - now).unwrap_or_else(|p| p.into_inner()).0;
                }
            }
        }
    }
}

/// Starts `n` pool threads already counted in `State::threads`.
fn spawn_threads(inner: &Arc<Inner>, n: usize) {
    for _ in 0..n {
        let inner2 = inner.clone();
        let spawned =
            crate::loom::thread::Builder::new().name("weft-blocking".into()).spawn(move || run_thread(inner2));
        if let Err(e) = spawned {
            lock(&inner.state).threads -= 1;
            panic!("weft: could not spawn a blocking-pool thread ({e}); lower the load or raise the OS thread limit");
        }
    }
}

fn run_thread(inner: Arc<Inner>) {
    let tid = crate::util::os_thread::thread_id();
    // Counted out on every exit, an unwind included: a thread that left `threads` counted
    // would make `BlockingPool::shutdown` wait forever for it.
    let _exit = ThreadExit { inner: &inner, tid };
    let mut state = lock(&inner.state);
    state.tids.push(tid);
    loop {
        if let Some(task) = state.queue.pop_front() {
            drop(state);
            task.run();
            state = lock(&inner.state);
            state.completed += 1;
            continue;
        }
        if state.shutdown {
            break;
        }
        state.idle += 1;
        let (s, timeout) = inner.work.wait_timeout(state, inner.keep_alive).unwrap_or_else(|p| p.into_inner());
        state = s;
        if state.notified > 0 {
            state.notified -= 1; // the spawner already took us off `idle`
        } else {
            state.idle -= 1;
            if timeout.timed_out() && state.queue.is_empty() {
                break;
            }
        }
    }
}

/// A pool thread's way out (normal or unwinding): leaves `threads` and `tids`, wakes shutdown.
struct ThreadExit<'a> {
    inner: &'a Inner,
    tid: i64,
}

impl Drop for ThreadExit<'_> {
    fn drop(&mut self) {
        let mut state = lock(&self.inner.state);
        state.threads -= 1;
        if let Some(i) = state.tids.iter().position(|&t| t == self.tid) {
            state.tids.swap_remove(i);
        }
        // The last thread leaving a closed pool with work still queued (it unwound): cancel it.
        let orphans: Vec<_> =
            if state.shutdown && state.threads == 0 { state.queue.drain(..).collect() } else { Vec::new() };
        drop(state);
        for task in orphans {
            task.shutdown();
        }
        self.inner.exited.notify_all();
    }
}

/// The supervisor (module doc, rule 2): runs while a backlog lasts, adding threads while fewer
/// pool threads are runnable than there are cores.
fn supervise(inner: Arc<Inner>) {
    let cores = cores();
    // The runnable count of the previous tick; growth needs two ticks in a row below `cores`.
    let mut previous: Option<usize> = None;
    let mut last_completed = u64::MAX;
    let mut starved_ticks = 0u32;
    let mut tick = TICK;
    let mut state = lock(&inner.state);
    loop {
        state = inner.tick.wait_timeout(state, tick).unwrap_or_else(|p| p.into_inner()).0;
        if !state.backlog(inner.max_threads) {
            break;
        }
        state.ticks += 1;
        let tids = state.tids.clone();
        // Spawned but not yet registered: about to run, so counted as runnable.
        let starting = state.threads.saturating_sub(tids.len());
        let completed = state.completed;
        drop(state);

        let mut grow = 0;
        match runnable_threads(&tids) {
            Some(r) => {
                let now = r + starting;
                if let Some(before) = previous {
                    grow = cores.saturating_sub(now.max(before));
                }
                tick = if now < cores { TICK } else { (tick * 2).min(MAX_TICK) };
                previous = Some(now);
            }
            None => {
                starved_ticks = if completed == last_completed { starved_ticks + 1 } else { 0 };
                if starved_ticks >= STARVATION_TICKS {
                    starved_ticks = 0;
                    grow = 1;
                }
            }
        }
        last_completed = completed;

        state = lock(&inner.state);
        let n = grow.min(inner.max_threads.saturating_sub(state.threads));
        if n > 0 && state.backlog(inner.max_threads) {
            state.threads += n;
            state.peak_threads = state.peak_threads.max(state.threads);
            drop(state);
            spawn_threads(&inner, n);
            state = lock(&inner.state);
            // The new threads are not in this tick's sample: start the two-tick window afresh.
            previous = None;
        }
    }
    state.supervising = false;
    drop(state);
    inner.exited.notify_all();
}

/// How many of `tids` are runnable now (state `R`: on a CPU or waiting for one), from
/// `/proc/self/task/<tid>/stat`; `None` when any of them cannot be read (the caller then uses
/// the starvation rule). Idle pool threads wait on a condvar (`S`) and so are not counted.
fn runnable_threads(tids: &[i64]) -> Option<usize> {
    if cfg!(loom) {
        return None;
    }
    let mut runnable = 0;
    for &tid in tids {
        let text = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
        // `tid (comm) S ...`: the name may hold spaces or parentheses, the state follows the last `)`.
        let state = text.get(text.rfind(')')? + 1..)?.split_ascii_whitespace().next()?;
        runnable += usize::from(state == "R");
    }
    Some(runnable)
}

#[cfg(all(test, not(loom)))]
mod tests {
    //! Behaviour of the sizing rule, asserted by exact thread counts; no test depends on how
    //! long anything takes (the closures wait on each other, not on the clock).
    use super::*;
    use crate::loom::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    fn runtime() -> crate::runtime::Runtime {
        crate::runtime::Builder::new_current_thread().build().expect("runtime")
    }

    /// Spawns `f` on `pool` from inside `rt`, returning the join handle.
    fn spawn<R: Send + 'static>(
        rt: &crate::runtime::Runtime,
        pool: &BlockingPool,
        f: impl FnOnce() -> R + Send + 'static,
    ) -> JoinHandle<R> {
        pool.spawn(f, rt.handle().inner.clone())
    }

    #[test]
    fn grows_past_the_floor_while_closures_block_on_each_other() {
        let rt = runtime();
        // More closures than cores, each waiting for all the others: only a pool that grows
        // past its floor (the cores) lets them meet.
        let n = cores() + 3;
        let pool = BlockingPool::new(n, Duration::from_secs(60));
        let barrier = Arc::new(Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let b = barrier.clone();
                spawn(&rt, &pool, move || {
                    b.wait();
                })
            })
            .collect();
        rt.block_on(async {
            for h in handles {
                h.await.expect("closure completes");
            }
        });
        assert_eq!(pool.num_threads(), n);
        pool.shutdown(None);
        assert_eq!(pool.num_threads(), 0);
    }

    #[test]
    fn computing_closures_stay_at_the_floor() {
        let rt = runtime();
        // Three closures per core that compute (spin) until the supervisor has watched the
        // backlog for 25 ticks: every pool thread is runnable all along, so none is added. (A
        // pool that grows anyway ends the spinning, so that the failure is an assertion, not a
        // hang: with every closure on a thread there is no backlog and no more ticks.)
        let pool = BlockingPool::new(64, Duration::from_secs(60));
        let floor = cores();
        let handles: Vec<_> = (0..3 * floor)
            .map(|_| {
                let p = pool.clone();
                spawn(&rt, &pool, move || {
                    let mut spins = 0u64;
                    while matches!(p.ticks_and_peak(), (ticks, peak) if ticks < 25 && peak <= floor) {
                        for _ in 0..10_000 {
                            spins = std::hint::black_box(spins + 1);
                        }
                    }
                    spins
                })
            })
            .collect();
        rt.block_on(async {
            for h in handles {
                h.await.expect("closure completes");
            }
        });
        let (ticks, peak) = pool.ticks_and_peak();
        assert!(ticks >= 25, "the supervisor ran {ticks} ticks");
        assert_eq!(peak, floor, "computing closures made the pool grow past the cores");
        pool.shutdown(None);
    }

    #[test]
    fn never_exceeds_an_explicit_cap() {
        let rt = runtime();
        let cap = cores() + 1;
        let pool = BlockingPool::new(cap, Duration::from_secs(60));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let most_threads = Arc::new(AtomicUsize::new(0));
        // The first `cap` closures need all `cap` threads at once; the rest block (sleep), which
        // the supervisor sees as blocked threads it would like to replace.
        let barrier = Arc::new(Barrier::new(cap));
        let handles: Vec<_> = (0..cap + 20)
            .map(|i| {
                let (running, most, most_threads, barrier, p) =
                    (running.clone(), most.clone(), most_threads.clone(), barrier.clone(), pool.clone());
                spawn(&rt, &pool, move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    most_threads.fetch_max(p.num_threads(), Ordering::SeqCst);
                    if i < cap {
                        barrier.wait();
                    } else {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        rt.block_on(async {
            for h in handles {
                h.await.expect("closure completes");
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), cap);
        assert_eq!(most_threads.load(Ordering::SeqCst), cap);
        assert_eq!(pool.num_threads(), cap);
        pool.shutdown(None);
    }

    #[test]
    fn retires_idle_threads() {
        let rt = runtime();
        let pool = BlockingPool::new(4, Duration::from_millis(1));
        let handles: Vec<_> = (0..8).map(|i| spawn(&rt, &pool, move || i * 2)).collect();
        let sum = rt.block_on(async {
            let mut sum = 0;
            for h in handles {
                sum += h.await.expect("closure completes");
            }
            sum
        });
        assert_eq!(sum, 56);
        assert!(pool.num_threads() <= 4);
        // Every thread exits once idle for the keep-alive; the generous limit only turns a
        // regression into a failure instead of a hang.
        let limit = Instant::now() + Duration::from_secs(120);
        while pool.num_threads() > 0 {
            assert!(Instant::now() < limit, "idle blocking threads were never retired");
            std::thread::sleep(Duration::from_millis(1));
        }
        // The pool still works after retiring everything.
        let h = spawn(&rt, &pool, || 7);
        assert_eq!(rt.block_on(h).expect("closure completes"), 7);
        pool.shutdown(None);
    }
}
