//! What the two scheduler handles share: [`HandleCommon`], the fields every flavor's handle
//! starts with (the runtime's services, apart from how it queues tasks), and the one
//! implementation of [`Schedule`] for both, through the small [`Flavor`] trait that says
//! where a task goes when it is woken and which shard and worker a poll belongs to.
//!
//! Shaped this way so that a change to what tasks ask of their scheduler (a new `Schedule`
//! method, a metric) is written once; each flavor keeps only its queueing policy.

use crate::loom::sync::Arc;
use crate::runtime::blocking::BlockingPool;
use crate::runtime::driver;
use crate::runtime::metrics::SchedulerMetrics;
use crate::runtime::Config;
use crate::task::arena::TaskArena;
use crate::task::{OwnedTasks, Runnable, Schedule, Task, TaskRef};

/// The fields both scheduler handles start with (`S` is the handle's `Arc`, the tasks'
/// scheduler type).
pub(crate) struct HandleCommon<S: 'static> {
    pub(crate) driver: driver::Handle,
    pub(crate) blocking: BlockingPool,
    /// Every task that has gone idle at least once (`Schedule::bind`), for shutdown.
    pub(crate) owned: OwnedTasks<S>,
    /// Memory of this runtime's task cells (`task/arena.rs`), freed with the runtime.
    pub(crate) arena: Option<TaskArena>,
    pub(crate) config: Config,
    pub(crate) metrics: SchedulerMetrics,
}

impl<S: 'static> HandleCommon<S> {
    /// `owned_shards`: one per worker, plus one for polls off the workers where the flavor
    /// has such polls.
    pub(crate) fn new(
        driver: driver::Handle,
        blocking: BlockingPool,
        owned_shards: usize,
        num_workers: usize,
        config: Config,
    ) -> HandleCommon<S> {
        HandleCommon {
            driver,
            blocking,
            owned: OwnedTasks::new(owned_shards),
            arena: config.task_arena.then(TaskArena::new),
            metrics: SchedulerMetrics::new(num_workers, config.metrics),
            config,
        }
    }
}

/// What differs between the flavors' handles as tasks see them; `Schedule for Arc<H>` below
/// is written once in terms of it. (`me: &Arc<Self>` rather than `self: &Arc<Self>`: loom's
/// `Arc` is not a method receiver.)
pub(crate) trait Flavor: Sized + Send + Sync + 'static {
    fn common(&self) -> &HandleCommon<Arc<Self>>;

    /// Queues a woken task: `yielded` when it woke itself during its own poll (it then goes
    /// behind the tasks it yielded to).
    fn schedule_task(me: &Arc<Self>, task: Runnable<Arc<Self>>, yielded: bool);

    /// The owned-list shard a task polled on the calling thread joins.
    fn owned_shard(me: &Arc<Self>) -> usize;

    /// The worker whose schedule-latency histogram records a poll on the calling thread.
    fn metrics_worker(me: &Arc<Self>) -> usize;
}

impl<H: Flavor> Schedule for Arc<H> {
    #[inline]
    fn schedule(&self, task: Runnable<Self>) {
        H::schedule_task(self, task, false);
    }

    #[inline]
    fn yield_now(&self, task: Runnable<Self>) {
        H::schedule_task(self, task, true);
    }

    fn release(&self, task: TaskRef<'_>) -> Option<Task<Self>> {
        self.common().owned.remove(task)
    }

    fn bind(&self, task: Task<Self>) -> bool {
        self.common().owned.bind(task, H::owned_shard(self))
    }

    fn silence_panics(&self) -> bool {
        self.common().config.silence_task_panics
    }

    fn arena(&self) -> Option<&TaskArena> {
        // Loom models of the runtime leave the arena out (its lock would be modelled on every
        // spawn); `task/arena.rs` has its own model.
        self.common().arena.as_ref().filter(|_| !cfg!(loom))
    }

    fn time_polls(&self) -> bool {
        self.common().metrics.config.poll_time_histogram
    }

    fn time_schedules(&self) -> bool {
        self.common().metrics.config.schedule_latency_histogram
    }

    fn record_schedule_latency(&self, latency: std::time::Duration) {
        self.common().metrics.record_schedule_latency(H::metrics_worker(self), latency);
    }

    fn task_terminated(&self) {
        if !crate::runtime::metrics::worker::count_termination(Arc::as_ptr(self) as usize) {
            self.common().metrics.inc_remote_terminated();
        }
    }
}
