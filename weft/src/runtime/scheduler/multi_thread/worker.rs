//! A worker thread's run loop.
//!
//! Per tick the worker takes the next task from, in order: the LIFO slot, its local queue,
//! the injection queue (every `global_queue_interval` ticks the injection queue goes first,
//! so remote work is never starved by a busy local queue), the tasks that yielded (below),
//! a sibling's queue (stealing half), and finally it parks (see the parking essay in
//! `scheduler/mod.rs`: why it does not spin). Every `event_interval` ticks it polls the
//! driver without blocking, and checks for shutdown.
//!
//! The LIFO slot holds the task most recently *woken* by the running task (message passing:
//! the receiver runs next, while the sender's data is hot in cache). At most
//! `MAX_LIFO_POLLS` tasks run back to back from the slot; then the slot's task goes to the
//! back of the queue, so two tasks waking each other cannot monopolise the worker. Spawned
//! and yielding tasks go to the back of the queue (or the deferred list), never to the slot.
//! Thieves never take the slot; the monitor does, from a worker stuck in a poll (`lifo.rs`).
//!
//! A task that yields (`yield_now`, or a leaf future that ran out of cooperative budget)
//! while remote work waits in the injection queue is *deferred*: it waits in `Core::deferred`
//! until the local queue and the injection queue are empty, then the deferred tasks go back
//! (the first runs at once, the others to the back of the local queue); a task deferred for a
//! whole maintenance interval goes back anyway (`age_deferred`: a local queue that never empties
//! must not starve it). If a yield
//! always went to the back of the local queue, eight actors busy sending to themselves would
//! keep it non-empty forever, and remote work (spawns and wakes from outside the runtime)
//! would come off the injection queue one task per `global_queue_interval` ticks, ~4,000 busy
//! messages per spawned actor (`weft-lab actors --filter storm`; figures in
//! docs/notes/performance-figures.md, "Deferred yields"). With nothing waiting outside, a yield
//! still goes straight to the back of the local queue: there is nobody to be fair to, and it
//! saves the move through `deferred` (deferring every yield, as tokio does, costs more
//! instructions per yield). Deferred tasks are taken
//! before stealing, so a worker with a yielding task does not turn thief (and wake a sleeper
//! for the search) per yield; like the local queue's tasks while it kept running them, they
//! are not stealable while deferred.
//!
//! A yield also lets ready I/O and due timers in before the yielder runs again, as tokio's
//! does (`yield_defers_until_park`): the first task that yields after the driver was last
//! polled marks its place in the queue (`yield_countdown`, the pops until it comes up), and
//! when it comes up, or when deferred tasks go back, the worker polls the driver first if no
//! one is in it (`Parker::poll_driver` only tries). One poll per round of the queue, not per
//! yield: 200 tasks yielding cost one `epoll_wait(0)` per 200 yields, a lone yielder one per
//! yield (tokio's cost too). Left to the next `event_interval` tick, the driver would let a
//! task yielding until a socket becomes ready spin ~60 times for nothing.
//!
//! While a task runs, the worker's `Core` sits in `Context::core` so that spawns and wakes
//! issued by the task reach the local queue without any synchronisation. `block_in_place`
//! takes it from there and hands it to another thread (`handoff.rs`); the loop then ends on
//! this thread when the poll returns and finds no core.
//!
//! Around every poll the worker publishes the poll's sequence number, task id and spawn
//! location in its `PollSlot` (`monitor.rs`): relaxed stores to its own cache line.

use std::cell::RefCell;
use std::future::Future;
use std::panic::Location;

use super::lifo::LifoSlot;
use super::queue::{self, Local};
use super::Handle;
use crate::loom::sync::Arc;
use crate::runtime::metrics::worker::MetricsBatch;
use crate::runtime::park::Parker;
use crate::task::{Id, JoinHandle, Runnable};

/// Consecutive LIFO-slot polls before the slot's task is sent to the back of the queue.
const MAX_LIFO_POLLS: u32 = 3;

/// What a worker thread needs to run tasks. Exactly one thread holds it at a time.
pub(crate) struct Core {
    tick: u32,
    /// Shared with the monitor, which may empty it while this core's poll is stuck (`lifo.rs`).
    lifo_slot: Arc<LifoSlot<Arc<Handle>>>,
    pub(super) run_queue: Local<Arc<Handle>>,
    /// Tasks that yielded while this core ran them (see the module comment).
    deferred: Vec<Runnable<Arc<Handle>>>,
    /// `deferred` was non-empty at the last maintenance (see `age_deferred`).
    deferred_aged: bool,
    /// Local-queue pops until the first task that yielded since the driver was last polled
    /// comes up (0: none waits); then `poll_driver_first` (see the module comment).
    yield_countdown: u32,
    poll_driver_first: bool,
    is_searching: bool,
    is_shutdown: bool,
    park: Option<Parker>,
    rand: FastRand,
    /// This worker's counters (see `runtime/metrics`).
    metrics: MetricsBatch,
    /// Number of the current (or last) poll, always odd (`PollSlot`), and its task.
    poll_seq: u64,
    polling: Option<(Id, &'static Location<'static>)>,
}

/// The thread-local context of a worker.
pub(crate) struct Context {
    pub(crate) handle: Arc<Handle>,
    pub(crate) index: usize,
    core: RefCell<Option<Box<Core>>>,
    /// This thread's OS id, published with each poll (the monitor reads its run-queue wait).
    tid: i64,
}

impl Core {
    pub(super) fn new(
        run_queue: Local<Arc<Handle>>,
        lifo_slot: Arc<LifoSlot<Arc<Handle>>>,
        park: Parker,
        seed: u32,
        poll_histogram: bool,
    ) -> Box<Core> {
        Box::new(Core {
            tick: 0,
            lifo_slot,
            run_queue,
            deferred: Vec::new(),
            deferred_aged: false,
            yield_countdown: 0,
            poll_driver_first: false,
            is_searching: false,
            is_shutdown: false,
            park: Some(park),
            rand: FastRand(seed.max(1)),
            metrics: MetricsBatch::new(poll_histogram),
            poll_seq: 1,
            polling: None,
        })
    }

    fn has_tasks(&self) -> bool {
        self.lifo_slot.is_some() || self.run_queue.has_tasks() || !self.deferred.is_empty()
    }

    fn should_notify_others(&self) -> bool {
        !self.is_searching && self.lifo_slot.is_some() as usize + self.run_queue.len() > 1
    }

    /// Out of line: keeps the `Vec` push (and its growth path) off `schedule`'s hot path
    /// (inlined, it makes every yield cost more even when nothing is deferred).
    #[cold]
    #[inline(never)]
    fn defer(&mut self, task: Runnable<Arc<Handle>>) {
        self.deferred.push(task);
    }

    fn next_local_task(&mut self) -> Option<Runnable<Arc<Handle>>> {
        if let Some(task) = self.lifo_slot.take() {
            return Some(task);
        }
        let task = self.run_queue.pop()?;
        if self.yield_countdown != 0 {
            self.yield_countdown -= 1;
            self.poll_driver_first = self.yield_countdown == 0;
        }
        Some(task)
    }

    /// Cancels every queued task (shutdown; see `Runnable::shutdown`).
    pub(super) fn drain(&mut self) {
        if let Some(task) = self.lifo_slot.take() {
            task.shutdown();
        }
        while let Some(task) = self.run_queue.pop() {
            task.shutdown();
        }
        for task in self.deferred.drain(..) {
            task.shutdown();
        }
    }
}

/// Entry point of a worker thread.
pub(super) fn run(handle: Arc<Handle>, index: usize, core: Box<Core>) {
    let cx = crate::runtime::scheduler::Context::MultiThread(Context {
        handle: handle.clone(),
        index,
        core: RefCell::new(None),
        tid: crate::util::os_thread::thread_id(),
    });
    let _runtime = crate::runtime::context::enter_runtime("weft worker thread");
    let _enter = crate::runtime::context::enter(crate::runtime::scheduler::Handle::MultiThread(handle.clone()));
    // SAFETY: `cx` lives on this stack frame until after the guard is dropped (declared
    // after it, so dropped before it).
    let _sched = unsafe { crate::runtime::context::SchedulerGuard::enter(&cx) };
    let crate::runtime::scheduler::Context::MultiThread(cx) = &cx else { unreachable!() };
    if let Some(core) = cx.run(core) {
        handle.shutdown_core(core);
    }
}

impl Context {
    fn shared(&self) -> &super::Shared {
        &self.handle.shared
    }

    /// Runs the loop until shutdown (returns the core) or until the core left this thread
    /// during a poll (`block_in_place`; returns `None`).
    fn run(&self, mut core: Box<Core>) -> Option<Box<Core>> {
        let event_interval = self.handle.common.config.event_interval;
        let gqi = self.handle.common.config.global_queue_interval;
        core.metrics.start(Arc::as_ptr(&self.handle) as usize);
        while !core.is_shutdown {
            core.tick = core.tick.wrapping_add(1);
            if core.tick.is_multiple_of(event_interval) {
                core = self.maintenance(core);
                if core.is_shutdown {
                    break;
                }
            }
            if let Some(task) = self.next_task(&mut core, gqi) {
                if core.poll_driver_first {
                    core = self.poll_driver(core);
                }
                core = self.run_task(task, core)?;
                continue;
            }
            if !core.deferred.is_empty() {
                core = self.poll_driver(core);
            }
            if let Some(task) = self.requeue_deferred(&mut core) {
                core = self.run_task(task, core)?;
                continue;
            }
            if let Some(task) = self.steal_work(&mut core) {
                core = self.run_task(task, core)?;
                continue;
            }
            core = self.park(core);
        }
        // Cancel every task (all workers help; each task is cancelled exactly once).
        self.handle.common.owned.close_and_shutdown_all();
        core.metrics.exit(self.worker_metrics());
        Some(core)
    }

    fn worker_metrics(&self) -> &crate::runtime::metrics::worker::WorkerMetrics {
        &self.handle.common.metrics.workers[self.index]
    }

    fn next_task(&self, core: &mut Core, gqi: u32) -> Option<Runnable<Arc<Handle>>> {
        let inject = &self.shared().inject;
        if core.tick.is_multiple_of(gqi) {
            if let Some(task) = inject.pop() {
                return Some(task);
            }
            return core.next_local_task();
        }
        if let Some(task) = core.next_local_task() {
            return Some(task);
        }
        if inject.is_empty() {
            return None;
        }
        // Take a fair share of the injection queue in one lock, run the first, queue the rest.
        let share = inject.len() / self.handle.num_workers() + 1;
        let max = share.min(core.run_queue.remaining_slots()).min(queue::CAPACITY / 2);
        let mut first = None;
        let rq = &mut core.run_queue;
        inject.pop_n(max, |task| match first {
            None => first = Some(task),
            Some(_) => {
                let _ = rq.push_back_or_overflow(task, inject);
            }
        });
        first
    }

    /// Bounds how long a task stays deferred: tasks that were already deferred at the previous
    /// maintenance (`event_interval` ticks ago) go to the back of the local queue now. Without
    /// this, a worker whose local queue never empties (tasks waking each other forever, as in
    /// tokio's `rt_common::ping_pong_saturation` with 4 workers on 2 cores) would never requeue
    /// its deferred tasks, and a task that yielded while remote work waited would starve for
    /// good (that test hangs under load). A persistent yielder rejoins the queue at most once
    /// per `event_interval` ticks, so remote work still goes first most of the time.
    fn age_deferred(&self, core: &mut Core) {
        if core.deferred.is_empty() {
            core.deferred_aged = false;
            return;
        }
        if !std::mem::replace(&mut core.deferred_aged, true) {
            return;
        }
        core.deferred_aged = false;
        let inject = &self.shared().inject;
        for task in core.deferred.drain(..) {
            if core.run_queue.push_back_or_overflow(task, inject) {
                core.metrics.inc_overflow();
            }
        }
        self.handle.notify_parked_hint();
    }

    /// The local queue and the injection queue are empty: returns the first deferred task to
    /// run now and moves the others to the back of the local queue (a lone task yielding in
    /// a loop thus skips the queue).
    fn requeue_deferred(&self, core: &mut Core) -> Option<Runnable<Arc<Handle>>> {
        // Checked first: building and dropping an empty `Drain` is not free, and most calls
        // find nothing deferred.
        if core.deferred.is_empty() {
            return None;
        }
        let mut deferred = core.deferred.drain(..);
        let first = deferred.next()?;
        let inject = &self.shared().inject;
        for task in deferred {
            if core.run_queue.push_back_or_overflow(task, inject) {
                core.metrics.inc_overflow();
            }
        }
        if core.run_queue.len() > 0 {
            self.handle.notify_parked_hint();
        }
        Some(first)
    }

    fn steal_work(&self, core: &mut Core) -> Option<Runnable<Arc<Handle>>> {
        if !core.is_searching {
            core.is_searching = self.shared().idle.transition_worker_to_searching();
        }
        if !core.is_searching {
            return None;
        }
        let remotes = &self.shared().remotes;
        let n = remotes.len();
        let start = core.rand.next_n(n as u32) as usize;
        for i in 0..n {
            let i = (start + i) % n;
            if i == self.index {
                continue;
            }
            let before = core.run_queue.len();
            if let Some(task) = remotes[i].steal.steal_into(&mut core.run_queue) {
                core.metrics.record_steal(core.run_queue.len() - before + 1);
                return Some(task);
            }
        }
        self.shared().inject.pop()
    }

    fn run_task(&self, task: Runnable<Arc<Handle>>, mut core: Box<Core>) -> Option<Box<Core>> {
        if core.is_searching {
            core.is_searching = false;
            if self.shared().idle.transition_worker_from_searching() {
                // We were the last searcher and found work: there may be more, so keep the
                // search going by waking one sleeper.
                self.handle.notify_parked();
            }
        }
        core.metrics.start_poll();
        self.begin_poll(&mut core, &task);
        *self.core.borrow_mut() = Some(core);
        task.run();
        let mut lifo_polls = 0;
        loop {
            // No core: `block_in_place` gave it to another thread, which now runs this worker.
            let mut core = self.core.borrow_mut().take()?;
            self.poll_slot().end(core.poll_seq);
            core.metrics.end_poll();
            let between_polls = || self.poll_slot().seq().is_multiple_of(2);
            let Some(task) = core.lifo_slot.take_between_polls(between_polls) else { return Some(core) };
            if lifo_polls >= MAX_LIFO_POLLS {
                if core.run_queue.push_back_or_overflow(task, &self.shared().inject) {
                    core.metrics.inc_overflow();
                }
                return Some(core);
            }
            lifo_polls += 1;
            core.tick = core.tick.wrapping_add(1);
            core.metrics.start_poll();
            self.begin_poll(&mut core, &task);
            *self.core.borrow_mut() = Some(core);
            task.run();
        }
    }

    fn poll_slot(&self) -> &super::monitor::PollSlot {
        &self.handle.monitor.slots[self.index]
    }

    #[inline]
    fn begin_poll(&self, core: &mut Core, task: &Runnable<Arc<Handle>>) {
        let header = task.header();
        core.poll_seq = core.poll_seq.wrapping_add(2);
        core.polling = Some((header.id(), header.spawned_at));
        self.poll_slot().begin(core.poll_seq, header.id(), header.spawned_at, self.tid);
    }

    /// `block_in_place` on this worker: hands the core (with the task running now still
    /// mid-poll) to another thread. Returns whether it did; if not (no core here: nested in
    /// a task's drop at shutdown, or no thread could be started) the closure simply blocks
    /// this thread.
    pub(crate) fn hand_off_core(&self) -> bool {
        let Some(mut core) = self.core.borrow_mut().take() else { return false };
        // Thieves cannot take the LIFO slot; the queue they can, should no thread pick the
        // core up.
        if let Some(task) = core.lifo_slot.take() {
            if core.run_queue.push_back_or_overflow(task, &self.shared().inject) {
                core.metrics.inc_overflow();
            }
        }
        self.poll_slot().end(core.poll_seq);
        core.metrics.end_poll();
        core.metrics.exit(self.worker_metrics());
        match self.handle.spares.hand_off(&self.handle, self.index, core) {
            Ok(()) => true,
            Err(core) => {
                self.resume_core(core);
                false
            }
        }
    }

    /// After the blocking closure: takes the core back if no other thread picked it up.
    pub(crate) fn reclaim_core(&self) {
        if let Some(core) = self.handle.spares.reclaim(self.index) {
            self.resume_core(core);
        }
    }

    fn resume_core(&self, mut core: Box<Core>) {
        core.metrics.start(Arc::as_ptr(&self.handle) as usize);
        core.metrics.start_poll();
        if let Some((id, location)) = core.polling {
            core.poll_seq = core.poll_seq.wrapping_add(2);
            self.poll_slot().begin(core.poll_seq, id, location, self.tid);
        }
        *self.core.borrow_mut() = Some(core);
    }

    fn maintenance(&self, mut core: Box<Core>) -> Box<Core> {
        core.metrics.maintenance(self.worker_metrics());
        self.age_deferred(&mut core);
        core = self.poll_driver(core);
        if self.handle.is_shutdown() {
            core.is_shutdown = true;
        }
        core
    }

    fn park(&self, mut core: Box<Core>) -> Box<Core> {
        if core.has_tasks() {
            return core;
        }
        let config = &self.handle.common.config;
        if let Some(f) = &config.on_thread_park {
            f();
        }
        let idle = &self.shared().idle;
        self.handle.monitor.worker_parking(self.index);
        let was_searching = std::mem::replace(&mut core.is_searching, false);
        idle.transition_worker_to_parked(self.index, was_searching);
        let mut drove = false;
        loop {
            // Final look after registering as a sleeper: a producer that published work
            // before our registration may have seen us awake and not woken anyone.
            if self.handle.is_shutdown() {
                core.is_shutdown = true;
            } else if !self.handle.has_pending_work() {
                // Idle: a burst's task memory goes back now if enough of it is free
                // (`task/arena.rs`). Chunks pinned by a few slots in sleeping workers' caches:
                // wake those workers once, to hand their slots back here (a flush-only trim
                // wakes nobody, so this ends).
                if self.handle.common.arena.as_ref().is_some_and(|a| a.on_idle(false)) {
                    self.handle.unpark_others(self.index);
                }
                (core, drove) = self.park_timeout(core);
                if self.handle.is_shutdown() {
                    core.is_shutdown = true;
                }
            }
            if core.is_shutdown || core.has_tasks() || !idle.is_parked(self.index) || self.handle.has_pending_work() {
                break;
            }
            // Spurious wake-up (or a timer that woke nothing here): sleep again.
        }
        // If a notifier picked us it counted us as unparked and searching; otherwise we
        // remove ourselves from the sleepers and count as unparked, not searching.
        core.is_searching = !idle.unpark_worker_by_id(self.index);
        self.handle.monitor.worker_awake(self.index);
        if drove && !core.is_shutdown && !self.handle.monitor.enabled() {
            // We leave the driver to run work, which may take long: with no monitor to notice
            // (threshold 0), wake a sleeper now so that it parks in the driver and timers and
            // I/O keep being served. With the monitor this hand-over is lazy (`monitor.rs`):
            // done only once a poll has lasted a whole sample. Done eagerly, it costs about one
            // futex wake and a thread switch per request at low load (the `strace` count and its
            // command: docs/notes/performance-figures.md, "Driver hand-over"). Dropping the wake
            // without the monitor as a fallback is not enough on its own: the monitor's own
            // park/unpark per request also costs a futex pair (`monitor.rs`).
            self.handle.notify_parked();
        }
        if let Some(f) = &config.on_thread_unpark {
            f();
        }
        core
    }

    /// Sleeps in the parker with the core in the context (so wakes from the driver, on this
    /// thread, reach the local queue). Returns whether it slept in the driver.
    fn park_timeout(&self, mut core: Box<Core>) -> (Box<Core>, bool) {
        let mut park = core.park.take().expect("worker parker missing");
        core.metrics.about_to_park(self.worker_metrics());
        *self.core.borrow_mut() = Some(core);
        let drove = park.park(&self.handle.common.driver);
        let mut core = self.core.borrow_mut().take().expect("worker core vanished while parked");
        core.metrics.unparked();
        core.park = Some(park);
        if core.should_notify_others() {
            self.handle.notify_parked();
        }
        (core, drove)
    }

    /// Fires due timers and dispatches ready I/O if the driver is free (busy workers, every
    /// `event_interval` ticks, and before a task that yielded runs again).
    fn poll_driver(&self, mut core: Box<Core>) -> Box<Core> {
        core.yield_countdown = 0;
        core.poll_driver_first = false;
        let mut park = core.park.take().expect("worker parker missing");
        *self.core.borrow_mut() = Some(core);
        park.poll_driver(&self.handle.common.driver);
        let mut core = self.core.borrow_mut().take().expect("worker core vanished in the driver");
        core.park = Some(park);
        if core.should_notify_others() {
            self.handle.notify_parked();
        }
        core
    }

    /// Spawns from this worker: the task goes on this worker's own queue.
    #[track_caller]
    pub(crate) fn spawn_local<F>(&self, future: F, id: Id) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // Rejected: per-worker "spawn credits" (Arc counts taken 64 at a time, returned by tasks freed here)
        // to skip this clone's shared write: no measurable gain on `spawn_inside` or `deflect`
        // (docs/notes/performance-figures.md, "Spawn credits").
        let (runnable, join) = crate::task::new_task(future, self.handle.clone(), id);
        self.schedule(runnable, Kind::Spawn);
        join
    }

    /// Queues a task on this worker if its core is here, else remotely.
    pub(super) fn schedule(&self, task: Runnable<Arc<Handle>>, kind: Kind) {
        let mut slot = self.core.borrow_mut();
        let Some(core) = slot.as_mut() else {
            drop(slot);
            if let Kind::Spawn = kind {
                self.handle.common.metrics.inc_remote_spawned();
            }
            self.handle.push_remote(task);
            return;
        };
        let inject = &self.shared().inject;
        core.metrics.inc_local_schedule();
        let overflowed;
        let notify = match kind {
            Kind::Wake => match core.lifo_slot.replace(task) {
                Ok(None) => {
                    overflowed = false;
                    false
                }
                // The displaced task, or (the monitor is emptying the slot) the woken one.
                Ok(Some(other)) | Err(other) => {
                    overflowed = core.run_queue.push_back_or_overflow(other, inject);
                    true
                }
            },
            // Remote work waits: the yielder goes behind it (see the module comment).
            Kind::Yield if !inject.is_empty() => {
                core.defer(task);
                overflowed = false;
                false
            }
            Kind::Spawn => {
                core.metrics.inc_spawned();
                overflowed = core.run_queue.push_back_or_overflow(task, inject);
                true
            }
            Kind::Yield => {
                overflowed = core.run_queue.push_back_or_overflow(task, inject);
                if core.yield_countdown == 0 {
                    core.yield_countdown = core.run_queue.len() as u32;
                }
                true
            }
        };
        if overflowed {
            core.metrics.inc_overflow();
        }
        // A parked core (park taken out) is this thread inside the driver: it will look at
        // its queue when the driver returns, and notify others then if needed.
        let notify = notify && core.park.is_some() && core.run_queue.len() > 1;
        drop(slot);
        if notify {
            self.handle.notify_parked_hint();
        }
    }
}

#[derive(Clone, Copy)]
pub(super) enum Kind {
    Spawn,
    Wake,
    Yield,
}

/// xorshift32: a cheap per-worker random start for stealing.
struct FastRand(u32);

impl FastRand {
    fn next_n(&mut self, n: u32) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        ((x as u64 * n as u64) >> 32) as u32
    }
}
