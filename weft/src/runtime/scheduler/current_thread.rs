//! The current-thread scheduler: every task runs on the thread inside `block_on`.
//!
//! `block_on` takes the `Core` (the local run queue and the driver) and alternates between
//! polling the `block_on` future (when its waker fired), running queued tasks, and parking in
//! the driver when there is nothing to do. Tasks spawned or woken on the same thread go to the
//! local `VecDeque` with no synchronisation; from other threads they go to the injection
//! queue (a mutex) and unpark the driver. Every `global_queue_interval` ticks the injection
//! queue is served first; every `event_interval` ticks the driver is polled without blocking.
//! A task that yields while the injection queue holds work waits in `Core::deferred` until the
//! local and injection queues are empty (as on the multi-thread workers, see the essay in
//! `multi_thread/worker.rs`): tasks that keep yielding would otherwise keep the local queue
//! non-empty and let remote work in one task per `global_queue_interval` ticks. The deferred
//! list costs a few instructions per yield (docs/notes/performance-figures.md, "Deferred
//! yields"). As on the workers, the
//! driver is polled before the first task that yielded since its last poll runs again
//! (`Core::yield_countdown`; one poll per round of the queue), so a yield lets ready I/O in.
//! When the driver poll before a yielded task wakes the `block_on` future, the future runs
//! first (the task goes back to the front of the queue); when the future woke itself
//! (`yield_now`), the driver is polled before it runs again. So a neighbour's yield loop
//! delays it by one round, and its own yield lets ready I/O in, as tokio's `yield_now` does.
//!
//! If another thread's `block_on` holds the core, this `block_on` polls its own future on its
//! own thread (`ParkThread::block_on`, the crate's one block-on loop) and retries taking the
//! core every millisecond (tasks keep running on the other thread meanwhile).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use crate::loom::sync::{Arc, Mutex};
use crate::runtime::blocking::BlockingPool;
use crate::runtime::driver::{self, Driver};
use crate::runtime::metrics::worker::MetricsBatch;
use crate::runtime::park::ParkThread;
use crate::runtime::scheduler::common::{Flavor, HandleCommon};
use crate::runtime::{context, Config};
use crate::task::coop::{BudgetGuard, BUDGET};
use crate::task::{Id, JoinHandle, Runnable};
use crate::util::wake::{self, Wake};

/// Aligned to 128 bytes: see `multi_thread::Handle`.
#[repr(align(128))]
pub(crate) struct Handle {
    pub(crate) common: HandleCommon<Arc<Handle>>,
    /// `None` once shut down.
    inject: Mutex<Option<VecDeque<Runnable<Arc<Handle>>>>>,
    inject_len: AtomicUsize,
    /// Length of the core's local queue, published with the metrics.
    local_len: AtomicUsize,
    /// The `block_on` future was woken.
    woken: AtomicBool,
    core: Mutex<Option<Box<Core>>>,
    is_shutdown: AtomicBool,
    /// The runtime is a `LocalRuntime`'s: `spawn_local` under its handle on another thread
    /// panics saying so (its local tasks live on the thread that created it).
    pub(crate) is_local_runtime: AtomicBool,
}

pub(crate) struct Core {
    tasks: VecDeque<Runnable<Arc<Handle>>>,
    /// Tasks that yielded while remote work waited (see the module comment).
    deferred: Vec<Runnable<Arc<Handle>>>,
    /// Local-queue pops until the first task that yielded since the driver was last polled
    /// comes up (0: none waits); then `poll_driver_first` (`multi_thread/worker.rs` says why).
    yield_countdown: usize,
    poll_driver_first: bool,
    tick: u32,
    driver: Option<Driver>,
    metrics: MetricsBatch,
}

impl Core {
    /// Out of line, off `schedule`'s hot path (see `multi_thread/worker.rs` `Core::defer`).
    #[cold]
    #[inline(never)]
    fn defer(&mut self, task: Runnable<Arc<Handle>>) {
        self.deferred.push(task);
    }

    /// The local and injection queues are empty: returns the first deferred task and moves
    /// the others to the local queue; the driver is polled before it runs.
    fn requeue_deferred(&mut self) -> Option<Runnable<Arc<Handle>>> {
        // Checked first: building and dropping an empty `Drain` is not free, and this runs once
        // per turn of `block_on` that finds the queues empty (`weft-lab actors --filter =ask_1t`).
        if self.deferred.is_empty() {
            return None;
        }
        let mut deferred = self.deferred.drain(..);
        let first = deferred.next()?;
        self.tasks.extend(deferred);
        self.poll_driver_first = true;
        Some(first)
    }

    fn pop_local(&mut self) -> Option<Runnable<Arc<Handle>>> {
        let task = self.tasks.pop_front()?;
        if self.yield_countdown != 0 {
            self.yield_countdown -= 1;
            self.poll_driver_first = self.yield_countdown == 0;
        }
        Some(task)
    }

    /// Cancels the queued tasks and stops the driver (shutdown).
    fn shutdown(&mut self, driver_handle: &driver::Handle) {
        while let Some(task) = self.tasks.pop_front() {
            task.shutdown();
        }
        for task in self.deferred.drain(..) {
            task.shutdown();
        }
        if let Some(mut driver) = self.driver.take() {
            driver.shutdown(driver_handle);
        }
    }
}

pub(crate) struct Context {
    pub(crate) handle: Arc<Handle>,
    core: RefCell<Option<Box<Core>>>,
}

pub(crate) fn create(
    driver: Driver,
    driver_handle: driver::Handle,
    blocking: BlockingPool,
    config: Config,
) -> Arc<Handle> {
    let metrics = MetricsBatch::new(config.metrics.poll_time_histogram);
    Arc::new(Handle {
        common: HandleCommon::new(driver_handle, blocking, 1, 1, config),
        inject: Mutex::new(Some(VecDeque::new())),
        inject_len: AtomicUsize::new(0),
        local_len: AtomicUsize::new(0),
        woken: AtomicBool::new(false),
        core: Mutex::new(Some(Box::new(Core {
            tasks: VecDeque::with_capacity(64),
            deferred: Vec::new(),
            yield_countdown: 0,
            poll_driver_first: false,
            tick: 0,
            driver: Some(driver),
            metrics,
        }))),
        is_shutdown: AtomicBool::new(false),
        is_local_runtime: AtomicBool::new(false),
    })
}

impl Handle {
    #[track_caller]
    pub(crate) fn spawn<F>(me: &Arc<Handle>, future: F, id: Id) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (runnable, join) = crate::task::new_task(future, me.clone(), id);
        // One context lookup both counts the spawn and queues the task.
        let remote = context::with_scheduler(|cx| match cx {
            Some(crate::runtime::scheduler::Context::CurrentThread(cx)) if Arc::ptr_eq(&cx.handle, me) => {
                cx.spawn_local(runnable).err()
            }
            _ => Some(runnable),
        });
        if let Some(task) = remote {
            me.common.metrics.inc_remote_spawned();
            me.push_remote(task);
        }
        join
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.is_shutdown.load(Acquire)
    }

    pub(crate) fn global_queue_depth(&self) -> usize {
        self.inject_len.load(Acquire)
    }

    /// The local queue's length as last published (the queue itself is owned by the thread
    /// in `block_on`).
    pub(crate) fn local_queue_depth(&self) -> usize {
        self.local_len.load(Relaxed)
    }

    fn push_remote(&self, task: Runnable<Arc<Handle>>) {
        self.common.metrics.inc_remote_schedule();
        let mut inject = lock(&self.inject);
        match inject.as_mut() {
            Some(q) => {
                q.push_back(task);
                self.inject_len.store(q.len(), Release);
                drop(inject);
                self.common.driver.unpark();
            }
            None => {
                drop(inject);
                task.refuse();
            }
        }
    }

    fn pop_remote(&self) -> Option<Runnable<Arc<Handle>>> {
        if self.inject_len.load(Acquire) == 0 {
            return None;
        }
        let mut inject = lock(&self.inject);
        let q = inject.as_mut()?;
        let task = q.pop_front();
        self.inject_len.store(q.len(), Release);
        task
    }

    /// Runs `future` to completion on this thread, driving the runtime's tasks meanwhile.
    #[track_caller]
    pub(crate) fn block_on<F: Future>(me: &Arc<Handle>, future: F) -> F::Output {
        let _runtime = context::enter_runtime("Runtime::block_on");
        let _enter = context::enter(crate::runtime::scheduler::Handle::CurrentThread(me.clone()));
        let mut future = pin!(future);
        let mut park = None;
        loop {
            let core = lock(&me.core).take();
            if let Some(core) = core {
                return Handle::drive(me, core, future);
            }
            // Another thread drives the tasks: poll our own future here until it is ready or
            // the core becomes free (checked every millisecond and on every wake-up).
            let park = park.get_or_insert_with(ParkThread::new);
            let mut core_free = || lock(&me.core).is_some();
            if let Some(v) = park.block_on(future.as_mut(), Some((Duration::from_millis(1), &mut core_free))) {
                return v;
            }
        }
    }

    fn drive<F: Future>(me: &Arc<Self>, core: Box<Core>, mut future: std::pin::Pin<&mut F>) -> F::Output {
        let this = me;
        let cx = crate::runtime::scheduler::Context::CurrentThread(Context {
            handle: this.clone(),
            core: RefCell::new(None),
        });
        // SAFETY: `cx` outlives the guard (declared before it).
        let _sched = unsafe { context::SchedulerGuard::enter(&cx) };
        let crate::runtime::scheduler::Context::CurrentThread(cx) = &cx else { unreachable!() };
        // Hand the core back (for the next block_on) even if the future panics.
        let mut guard = CoreGuard { handle: this, core: Some(core) };
        let waker = wake::waker(Arc::new(BlockOnWaker(this.clone())));
        let mut task_cx = TaskContext::from_waker(&waker);
        this.woken.store(true, Release);
        let gqi = this.common.config.global_queue_interval;
        if let Some(core) = guard.core.as_mut() {
            core.metrics.start(Arc::as_ptr(this) as usize);
        }
        // The future woke itself during its last poll (`yield_now`): as for a task that yields,
        // the driver is polled before it runs again, so the yield lets ready I/O in (tokio's
        // `yield_now` defers the same way). A wake from another task (an answered `ask`) is
        // not a yield and polls the future again at once.
        let mut yielded = false;
        'outer: loop {
            let mut core = guard.core.take().expect("current-thread core missing");
            if this.woken.swap(false, AcqRel) {
                if yielded {
                    core = cx.park(core, Some(Duration::ZERO));
                }
                let (c, res) = cx.enter(core, || {
                    let _budget = BudgetGuard::new(Some(BUDGET));
                    future.as_mut().poll(&mut task_cx)
                });
                core = c;
                if let Poll::Ready(v) = res {
                    guard.core = Some(core);
                    return v;
                }
                yielded = this.woken.load(Acquire);
            }
            for _ in 0..this.common.config.event_interval {
                core.tick = core.tick.wrapping_add(1);
                let task = if core.tick.is_multiple_of(gqi) {
                    this.pop_remote().or_else(|| core.pop_local()).or_else(|| core.requeue_deferred())
                } else {
                    core.pop_local().or_else(|| this.pop_remote()).or_else(|| core.requeue_deferred())
                };
                let Some(task) = task else {
                    let woken = this.woken.load(Acquire);
                    // Woken with nothing queued (an `ask` answered by a task on this thread):
                    // poll the future again without an `epoll_wait(0)`; the driver is still
                    // polled every `event_interval` ticks, so a self-waking future cannot
                    // starve timers or I/O.
                    if woken && !core.tick.is_multiple_of(this.common.config.event_interval) {
                        guard.core = Some(core);
                        continue 'outer;
                    }
                    let timeout = if woken { Some(Duration::ZERO) } else { None };
                    core = cx.park(core, timeout);
                    guard.core = Some(core);
                    continue 'outer;
                };
                if core.poll_driver_first {
                    core = cx.park(core, Some(Duration::ZERO));
                    // That poll woke the `block_on` future: it runs before this task (which
                    // goes back to the front of the queue), as it would have had the event
                    // come before the task was popped.
                    if this.woken.load(Relaxed) {
                        core.tasks.push_front(task);
                        guard.core = Some(core);
                        continue 'outer;
                    }
                }
                core.metrics.start_poll();
                core = cx.enter(core, || task.run()).0;
                core.metrics.end_poll();
            }
            core.metrics.maintenance(&this.common.metrics.workers[0]);
            this.local_len.store(core.tasks.len(), Relaxed);
            core = cx.park(core, Some(Duration::ZERO));
            guard.core = Some(core);
        }
    }

    /// Shuts the scheduler down: cancels every task, drops queued references, stops timers.
    pub(crate) fn shutdown(me: &Arc<Self>) {
        let this = me;
        if this.is_shutdown.swap(true, AcqRel) {
            return;
        }
        let _enter = context::enter(crate::runtime::scheduler::Handle::CurrentThread(this.clone()));
        this.common.owned.close_and_shutdown_all();
        // Queued tasks that were never polled are not in the owned list: cancelling their
        // `Runnable`s is what completes their `JoinHandle`s (dropping them would leave the
        // handles pending forever). Bound ones were cancelled just above; theirs is a no-op.
        let remote = lock(&this.inject).take();
        for task in remote.into_iter().flatten() {
            task.shutdown();
        }
        let core = lock(&this.core).take();
        if let Some(mut core) = core {
            core.shutdown(&this.common.driver);
        }
        // A `block_on` on another thread may still hold the core; it finds the scheduler
        // shut down and the driver is stopped when that core comes back (`CoreGuard`).
    }
}

impl Context {
    /// Runs `f` with the core available to spawns/wakes from this thread.
    fn enter<R>(&self, core: Box<Core>, f: impl FnOnce() -> R) -> (Box<Core>, R) {
        *self.core.borrow_mut() = Some(core);
        let ret = f();
        let core = self.core.borrow_mut().take().expect("current-thread core vanished during a poll");
        (core, ret)
    }

    fn park(&self, mut core: Box<Core>, timeout: Option<Duration>) -> Box<Core> {
        core.yield_countdown = 0;
        core.poll_driver_first = false;
        let Some(mut driver) = core.driver.take() else { return core };
        let handle = &self.handle;
        let timeout =
            if !core.tasks.is_empty() || handle.inject_len.load(Acquire) != 0 { Some(Duration::ZERO) } else { timeout };
        // A zero timeout is a maintenance poll, not a park (as on the multi-thread workers).
        let parks = timeout != Some(Duration::ZERO);
        if parks {
            // Idle: a burst's task memory goes back now if enough of it is free.
            if let Some(arena) = &handle.common.arena {
                arena.on_idle(false);
            }
            core.metrics.about_to_park(&handle.common.metrics.workers[0]);
            handle.local_len.store(core.tasks.len(), Relaxed);
        }
        let (mut core, ()) = self.enter(core, || {
            let mut timeout = timeout;
            // Hooks run with the core in the context, so they may spawn.
            if let (true, Some(f)) = (parks, &handle.common.config.on_thread_park) {
                f();
                // The hook may have made work: spawned a task, or woken the `block_on`
                // future (a same-thread wake only sets `woken`, it does not unpark the
                // driver). Then poll the driver without sleeping instead of parking.
                let queued = self.core.borrow().as_ref().is_some_and(|c| !c.tasks.is_empty());
                if queued || handle.woken.load(Acquire) || handle.inject_len.load(Acquire) != 0 {
                    timeout = Some(Duration::ZERO);
                }
            }
            driver.park_timeout(&handle.common.driver, timeout);
            if let (true, Some(f)) = (parks, &handle.common.config.on_thread_unpark) {
                f();
            }
        });
        if parks {
            core.metrics.unparked();
        }
        core.driver = Some(driver);
        core
    }

    /// Queues a task spawned on this thread on the local queue (counting the spawn), or
    /// gives it back if the core is not here.
    fn spawn_local(&self, task: Runnable<Arc<Handle>>) -> Result<(), Runnable<Arc<Handle>>> {
        match self.core.borrow_mut().as_mut() {
            Some(core) => {
                core.metrics.inc_spawned();
                core.metrics.inc_local_schedule();
                core.tasks.push_back(task);
                Ok(())
            }
            None => Err(task),
        }
    }

    fn schedule(&self, task: Runnable<Arc<Handle>>, yielded: bool) -> Result<(), Runnable<Arc<Handle>>> {
        match self.core.borrow_mut().as_mut() {
            Some(core) => {
                core.metrics.inc_local_schedule();
                if yielded && self.handle.inject_len.load(Relaxed) > 0 {
                    core.defer(task);
                } else {
                    core.tasks.push_back(task);
                    if yielded && core.yield_countdown == 0 {
                        core.yield_countdown = core.tasks.len();
                    }
                }
                Ok(())
            }
            None => Err(task),
        }
    }
}

struct CoreGuard<'a> {
    handle: &'a Arc<Handle>,
    core: Option<Box<Core>>,
}

impl Drop for CoreGuard<'_> {
    fn drop(&mut self) {
        let Some(mut core) = self.core.take() else { return };
        // `block_on` returns (or unwinds): publish the final numbers of this stretch.
        core.metrics.exit(&self.handle.common.metrics.workers[0]);
        self.handle.local_len.store(core.tasks.len(), Relaxed);
        if self.handle.is_shutdown() {
            core.shutdown(&self.handle.common.driver);
            return;
        }
        *lock(&self.handle.core) = Some(core);
    }
}

struct BlockOnWaker(Arc<Handle>);

impl Wake for BlockOnWaker {
    fn wake_by_ref(arc: &Arc<Self>) {
        arc.0.woken.store(true, Release);
        // A wake from the thread that is driving this scheduler (a task it polls, or a timer
        // it fires) needs no signal: `drive` reads `woken` before it parks again. Only another
        // thread must wake the driver (an eventfd write when I/O is enabled).
        if !arc.0.is_driving_thread() {
            arc.0.common.driver.unpark();
        }
    }
}

impl Handle {
    /// True on the thread inside `drive` for this handle (the scheduler context is entered
    /// there for the whole of `drive`, parks included).
    /// (`&self` rather than `self: &Arc<Self>`: loom's `Arc` is not a method receiver.)
    fn is_driving_thread(&self) -> bool {
        context::with_scheduler(
            |cx| matches!(cx, Some(crate::runtime::scheduler::Context::CurrentThread(cx)) if std::ptr::eq(&*cx.handle, self)),
        )
    }
}

impl Flavor for Handle {
    fn common(&self) -> &HandleCommon<Arc<Handle>> {
        &self.common
    }

    fn schedule_task(me: &Arc<Self>, task: Runnable<Arc<Self>>, yielded: bool) {
        let task = context::with_scheduler(|cx| match cx {
            Some(crate::runtime::scheduler::Context::CurrentThread(cx)) if Arc::ptr_eq(&cx.handle, me) => {
                cx.schedule(task, yielded).err()
            }
            _ => Some(task),
        });
        if let Some(task) = task {
            me.push_remote(task);
        }
    }

    /// One shard: tasks are polled only on the thread in `block_on` (and at shutdown).
    fn owned_shard(_: &Arc<Self>) -> usize {
        0
    }

    fn metrics_worker(_: &Arc<Self>) -> usize {
        0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::future::{poll_fn, Future};
    use std::sync::atomic::Ordering::Relaxed;
    use std::task::Poll;

    /// Round trips between the `block_on` future and a task on the same thread (the shape
    /// of an actor `ask`): every wake is local, so none may write the driver's eventfd.
    #[test]
    fn same_thread_wakes_do_not_signal_the_driver() {
        let rt = crate::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        const ROUNDS: usize = 1_000;
        let answered = rt.block_on(async {
            let mut answered = 0;
            for i in 0..ROUNDS {
                let (tx, rx) = crate::sync::oneshot::channel();
                crate::spawn(async move {
                    let _ = tx.send(i);
                });
                answered += usize::from(rx.await == Ok(i));
            }
            // One more wake from a task after the future has parked on it.
            let mut yielded = false;
            poll_fn(|cx| {
                if yielded {
                    return Poll::Ready(());
                }
                yielded = true;
                let waker = cx.waker().clone();
                crate::spawn(async move { waker.wake() });
                Poll::Pending
            })
            .await;
            answered
        });
        assert_eq!(answered, ROUNDS);
        let crate::runtime::scheduler::Handle::CurrentThread(h) = &rt.handle().inner else {
            panic!("current-thread runtime expected")
        };
        let waker = &h.common.driver.io().expect("I/O driver enabled").waker;
        assert_eq!(waker.writes.load(Relaxed), 0, "a same-thread wake wrote the driver's eventfd");
        // A wake from another thread still reaches the driver.
        rt.block_on(async {
            let mut woken: Option<std::thread::JoinHandle<()>> = None;
            poll_fn(|cx| match woken.take() {
                Some(t) => {
                    t.join().expect("the waking thread does not panic");
                    Poll::Ready(())
                }
                None => {
                    let waker = cx.waker().clone();
                    woken = Some(std::thread::spawn(move || waker.wake()));
                    Poll::Pending
                }
            })
            .await
        });
        assert!(waker.writes.load(Relaxed) >= 1, "a wake from another thread must signal the driver");
    }

    /// A `block_on` future that wakes itself forever, with no task queued, still lets the
    /// driver fire its timers (the driver is polled every `event_interval` ticks).
    #[test]
    fn self_waking_block_on_future_does_not_starve_timers() {
        let rt = crate::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let spins = rt.block_on(async {
            let mut sleep = std::pin::pin!(crate::time::sleep(std::time::Duration::from_millis(5)));
            let mut spins = 0u64;
            poll_fn(|cx| {
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(());
                }
                spins += 1;
                cx.waker().wake_by_ref();
                Poll::Pending
            })
            .await;
            spins
        });
        assert!(spins > 0);
    }
}
