//! The multi-thread scheduler: N workers, each with a local queue, stealing from each other.
//!
//! * `worker` — the run loop, LIFO slot, parking and shutdown of one worker.
//! * `lifo` — the LIFO slot itself, which the monitor can empty while its worker is stuck.
//! * `queue` — the bounded steal-half local queue.
//! * `inject` — the global FIFO for work from outside the workers.
//! * `idle` — searching/sleeping accounting that wakes at most the workers needed.
//! * `handoff` — runtime threads, and the core hand-off behind `block_in_place`.
//! * `monitor` — the thread that notices workers stuck in one poll; `compensate` — what it
//!   does about them (see "Blocked workers" in the scheduler essay).
//!
//! Spawning from a worker pushes the task on the worker's own queue: no lock at all. The only
//! shared write is the increment of the scheduler handle's `Arc` count (each task holds a
//! clone of `Arc<Handle>`; the handle is 128-byte aligned so that count has its own cache
//! line). The task joins the owned-task list lazily, the first time it goes idle, in the
//! *poller's* shard (`Schedule::bind`): a task that completes in its first poll never takes a
//! shard lock. Spawning from outside (`block_on`, other threads) pushes to the injection queue
//! and wakes one sleeping worker if nobody is searching.
//!
//! Architecture Invariant: a task's `Runnable` is in at most one place — a LIFO slot, a
//! local queue, the injection queue, or the hands of the thread about to run it.

mod compensate;
pub(crate) mod handoff;
mod idle;
mod inject;
mod lifo;
pub(crate) mod monitor;
pub(crate) mod queue;
mod worker;

pub use monitor::LongPoll;

#[cfg(all(test, loom))]
mod loom_lifo;
#[cfg(all(test, loom))]
mod loom_queue;

use std::future::Future;

use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicBool, Ordering::*};
use crate::loom::sync::{Arc, Mutex};
use crate::runtime::blocking::BlockingPool;
use crate::runtime::driver;
use crate::runtime::park::{Parker, SharedDriver, Unparker};
use crate::runtime::scheduler::common::{Flavor, HandleCommon};
use crate::runtime::Config;
use crate::task::{Id, JoinHandle, Runnable};

use worker::Kind;
pub(crate) use worker::{Context, Core};

/// Aligned to 128 bytes so that the `Arc` reference counts (written on every spawn and task
/// free, from every worker) sit on their own cache lines, apart from the fields workers read
/// on every tick.
#[repr(align(128))]
pub(crate) struct Handle {
    pub(crate) common: HandleCommon<Arc<Handle>>,
    /// Long-poll detection (one `PollSlot` per worker, written around every poll).
    pub(crate) monitor: monitor::Monitor,
    /// How runtime threads are started, and the ones started after `build`.
    pub(crate) threads: handoff::ThreadSpawn,
    /// Hand-off slots and spare threads (`block_in_place`).
    spares: handoff::Spares,
    shared: Shared,
}

struct Shared {
    remotes: Box<[Remote]>,
    inject: inject::Inject<Arc<Handle>>,
    idle: idle::Idle,
    is_shutdown: AtomicBool,
    /// Cores handed back at shutdown; the last one to arrive finishes the shutdown. (Cores
    /// stay boxed everywhere: they move between threads and in and out of the worker context
    /// as one pointer.)
    #[allow(clippy::vec_box)]
    shutdown_cores: Mutex<Vec<Box<Core>>>,
    driver: Arc<SharedDriver>,
}

struct Remote {
    steal: queue::Steal<Arc<Handle>>,
    /// The worker's LIFO slot (also in its `Core`), for the monitor to empty while it is stuck.
    lifo: Arc<lifo::LifoSlot<Arc<Handle>>>,
    unpark: Unparker,
}

/// Builds the handle and one core per worker (to be moved onto the worker threads).
#[allow(clippy::vec_box)]
pub(crate) fn create(
    num_workers: usize,
    driver: driver::Driver,
    driver_handle: driver::Handle,
    blocking: BlockingPool,
    config: Config,
    threads: handoff::ThreadSpawn,
    keep_alive: std::time::Duration,
) -> (Arc<Handle>, Vec<Box<Core>>) {
    let shared_driver = Arc::new(SharedDriver::new(driver));
    let mut remotes = Vec::with_capacity(num_workers);
    let mut cores = Vec::with_capacity(num_workers);
    for i in 0..num_workers {
        let (steal, local) = queue::local();
        let park = Parker::new(shared_driver.clone());
        let lifo = Arc::new(lifo::LifoSlot::new());
        remotes.push(Remote { steal, lifo: lifo.clone(), unpark: park.unparker() });
        let seed = 0x9E37_79B9u32.wrapping_mul(i as u32 + 1);
        cores.push(Core::new(local, lifo, park, seed, config.metrics.poll_time_histogram));
    }
    let handle = Arc::new(Handle {
        monitor: monitor::Monitor::new(num_workers, config.monitor),
        threads,
        spares: handoff::Spares::new(num_workers, keep_alive),
        // One owned-list shard per worker plus one for tasks polled off the workers.
        common: HandleCommon::new(driver_handle, blocking, num_workers + 1, num_workers, config),
        shared: Shared {
            remotes: remotes.into_boxed_slice(),
            inject: inject::Inject::new(),
            idle: idle::Idle::new(num_workers),
            is_shutdown: AtomicBool::new(false),
            shutdown_cores: Mutex::new(Vec::with_capacity(num_workers)),
            driver: shared_driver,
        },
    });
    (handle, cores)
}

/// Runs one worker on the current thread until the runtime shuts down; a thread whose core
/// left it (`block_in_place`) then serves as a spare (`handoff.rs`).
pub(crate) fn run_worker(handle: Arc<Handle>, index: usize, core: Box<Core>) {
    worker::run(handle.clone(), index, core);
    handoff::Spares::spare_loop(&handle);
}

/// Starts the blocked-worker monitor thread, unless it is turned off.
pub(crate) fn start_monitor(handle: &Arc<Handle>) -> std::io::Result<()> {
    if cfg!(loom) || !handle.monitor.enabled() {
        return Ok(());
    }
    let h = handle.clone();
    handle.threads.spawn_monitor(move || monitor::run(h))
}

impl Handle {
    pub(crate) fn num_workers(&self) -> usize {
        self.shared.remotes.len()
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.shared.is_shutdown.load(Acquire)
    }

    /// Spawns from a thread that is not one of this runtime's workers.
    #[track_caller]
    pub(crate) fn spawn_remote<F>(me: &Arc<Handle>, future: F, id: Id) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (runnable, join) = crate::task::new_task(future, me.clone(), id);
        me.common.metrics.inc_remote_spawned();
        me.push_remote(runnable);
        join
    }

    fn push_remote(&self, task: Runnable<Arc<Handle>>) {
        self.common.metrics.inc_remote_schedule();
        self.shared.inject.push(task);
        self.notify_parked();
    }

    pub(crate) fn global_queue_depth(&self) -> usize {
        self.shared.inject.len()
    }

    pub(crate) fn worker_local_queue_depth(&self, worker: usize) -> usize {
        self.shared.remotes[worker].steal.len()
    }

    /// Wakes one sleeping worker if work is available and nobody is searching for it.
    fn notify_parked(&self) {
        if let Some(index) = self.shared.idle.worker_to_notify() {
            self.shared.remotes[index].unpark.unpark(&self.common.driver);
        }
    }

    /// Unparks every worker but `me` (a parked one loops once through its park; see the
    /// task arena's trim in `worker.rs`).
    pub(crate) fn unpark_others(&self, me: usize) {
        for (i, remote) in self.shared.remotes.iter().enumerate() {
            if i != me {
                remote.unpark.unpark(&self.common.driver);
            }
        }
    }

    /// Whether nobody sleeps in the driver (a hint for the monitor's lazy hand-over).
    pub(crate) fn driver_unattended(&self) -> bool {
        !self.shared.remotes.iter().any(|r| r.unpark.is_in_driver())
    }

    /// As `notify_parked`, for work queued on an awake worker: that worker will run the task
    /// itself if nobody comes, so this is an optimisation, not a correctness requirement.
    fn notify_parked_hint(&self) {
        if self.shared.idle.may_want_wakeup() {
            self.notify_parked();
        }
    }

    /// Work that a parking worker must not sleep through (see `Context::park`).
    fn has_pending_work(&self) -> bool {
        let shared = &self.shared;
        !shared.inject.is_empty()
            || (shared.idle.num_searching() == 0 && shared.remotes.iter().any(|r| r.steal.len() > 1))
    }

    /// The index of the worker running on the calling thread, if it is one of ours.
    fn current_worker(&self) -> Option<usize> {
        crate::runtime::context::with_scheduler(|cx| match cx {
            Some(crate::runtime::scheduler::Context::MultiThread(cx)) if std::ptr::eq(&*cx.handle, self) => {
                Some(cx.index)
            }
            _ => None,
        })
    }

    /// Starts shutdown: closes the injection queue and wakes every worker.
    pub(crate) fn shutdown(&self) {
        if !self.shared.inject.close() {
            return;
        }
        self.shared.is_shutdown.store(true, Release);
        for remote in self.shared.remotes.iter() {
            remote.unpark.unpark(&self.common.driver);
        }
        self.monitor.shutdown();
        self.spares.shutdown();
    }

    /// A worker hands its core back; the last one drains the queues and stops the driver.
    fn shutdown_core(&self, core: Box<Core>) {
        let mut cores = {
            let mut returned = lock(&self.shared.shutdown_cores);
            returned.push(core);
            if returned.len() != self.num_workers() {
                return;
            }
            // Release the lock before running task destructors below.
            std::mem::take(&mut *returned)
        };
        // Queued tasks: bound ones were cancelled through the owned list already (their
        // Runnable just goes away); never-polled ones are cancelled here.
        for core in cores.iter_mut() {
            core.drain();
        }
        while let Some(task) = self.shared.inject.pop() {
            task.shutdown();
        }
        self.common.owned.close_and_shutdown_all();
        if let Some(mut driver) = self.shared.driver.take() {
            driver.shutdown(&self.common.driver);
        }
        drop(cores);
    }
}

impl Flavor for Handle {
    fn common(&self) -> &HandleCommon<Arc<Handle>> {
        &self.common
    }

    fn schedule_task(me: &Arc<Self>, task: Runnable<Arc<Handle>>, yielded: bool) {
        let kind = if yielded { Kind::Yield } else { Kind::Wake };
        crate::runtime::context::with_scheduler(|cx| {
            if let Some(crate::runtime::scheduler::Context::MultiThread(cx)) = cx {
                if Arc::ptr_eq(&cx.handle, me) {
                    cx.schedule(task, kind);
                    return;
                }
            }
            me.push_remote(task);
        })
    }

    /// The poller's own shard when it is one of our workers, else the shared last one.
    fn owned_shard(me: &Arc<Self>) -> usize {
        me.current_worker().unwrap_or(me.num_workers())
    }

    /// The polling worker's own histogram; a poll off the workers counts on worker 0's.
    fn metrics_worker(me: &Arc<Self>) -> usize {
        me.current_worker().unwrap_or(0)
    }
}
