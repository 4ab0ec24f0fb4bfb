//! `Builder`: configures a runtime (flavor, threads, scheduler knobs, drivers).

use std::fmt;
use std::io;
use std::sync::Arc as StdArc;
use std::time::Duration;

use super::env_config::EnvConfig;

use super::{driver::Driver, scheduler, Config, Runtime};
use crate::loom::sync::{Arc, Condvar, Mutex};

pub(crate) type Callback = StdArc<dyn Fn() + Send + Sync>;
type NameFn = StdArc<dyn Fn() -> String + Send + Sync>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    CurrentThread,
    MultiThread,
}

/// Builds a [`Runtime`]. Mirrors `tokio::runtime::Builder`.
pub struct Builder {
    kind: Kind,
    worker_threads: Option<usize>,
    thread_name: NameFn,
    thread_stack_size: Option<usize>,
    on_thread_start: Option<Callback>,
    on_thread_stop: Option<Callback>,
    on_thread_park: Option<Callback>,
    on_thread_unpark: Option<Callback>,
    global_queue_interval: Option<u32>,
    event_interval: Option<u32>,
    enable_time: bool,
    enable_io: bool,
    start_paused: bool,
    silence_task_panics: bool,
    max_blocking_threads: Option<usize>,
    thread_keep_alive: Option<Duration>,
    metrics: super::metrics::MetricsConfig,
    long_poll_threshold: Option<Duration>,
    warn_on_long_polls: bool,
    compensate_blocked_workers: Option<bool>,
    task_arena: Option<bool>,
    name: Option<String>,
    io_events_per_tick: usize,
    io_events_per_busy_tick: Option<usize>,
}

/// Default ticks between checks of the injection queue (a prime, so it does not beat in step
/// with `event_interval`).
const DEFAULT_GLOBAL_QUEUE_INTERVAL: u32 = 31;
/// Default ticks between non-blocking polls of the driver.
const DEFAULT_EVENT_INTERVAL: u32 = 61;

impl Builder {
    /// A work-stealing runtime with one worker per CPU core by default.
    pub fn new_multi_thread() -> Builder {
        Builder::new(Kind::MultiThread)
    }

    /// A runtime that runs every task on the thread calling `block_on`.
    pub fn new_current_thread() -> Builder {
        Builder::new(Kind::CurrentThread)
    }

    fn new(kind: Kind) -> Builder {
        Builder {
            kind,
            worker_threads: None,
            thread_name: StdArc::new(|| "weft-worker".to_string()),
            thread_stack_size: None,
            on_thread_start: None,
            on_thread_stop: None,
            on_thread_park: None,
            on_thread_unpark: None,
            global_queue_interval: None,
            event_interval: None,
            enable_time: false,
            enable_io: false,
            start_paused: false,
            silence_task_panics: false,
            max_blocking_threads: None,
            thread_keep_alive: None,
            metrics: super::metrics::MetricsConfig::from_env(),
            long_poll_threshold: None,
            warn_on_long_polls: true,
            compensate_blocked_workers: None,
            task_arena: None,
            name: None,
            io_events_per_tick: super::io::EVENTS_CAPACITY,
            io_events_per_busy_tick: None,
        }
    }

    /// Number of worker threads (multi-thread flavor). Default: the `WEFT_WORKER_THREADS`
    /// environment variable, else the number of CPU cores. Panics if `n` is 0.
    #[track_caller]
    pub fn worker_threads(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "worker_threads must be greater than 0");
        self.worker_threads = Some(n);
        self
    }

    pub fn thread_name(&mut self, name: impl Into<String>) -> &mut Self {
        let name = name.into();
        self.thread_name = StdArc::new(move || name.clone());
        self
    }

    pub fn thread_name_fn<F: Fn() -> String + Send + Sync + 'static>(&mut self, f: F) -> &mut Self {
        self.thread_name = StdArc::new(f);
        self
    }

    pub fn thread_stack_size(&mut self, bytes: usize) -> &mut Self {
        self.thread_stack_size = Some(bytes);
        self
    }

    /// Runs `f` on each worker thread when it starts.
    pub fn on_thread_start<F: Fn() + Send + Sync + 'static>(&mut self, f: F) -> &mut Self {
        self.on_thread_start = Some(StdArc::new(f));
        self
    }

    /// Runs `f` on each worker thread before it exits.
    /// Runs `f` on a worker thread (or the `block_on` thread of a current-thread runtime) just
    /// before it goes idle and sleeps waiting for work, timers or I/O.
    pub fn on_thread_park<F: Fn() + Send + Sync + 'static>(&mut self, f: F) -> &mut Self {
        self.on_thread_park = Some(StdArc::new(f));
        self
    }

    /// Runs `f` on the same thread just after it wakes from the sleep `on_thread_park` announced.
    pub fn on_thread_unpark<F: Fn() + Send + Sync + 'static>(&mut self, f: F) -> &mut Self {
        self.on_thread_unpark = Some(StdArc::new(f));
        self
    }

    pub fn on_thread_stop<F: Fn() + Send + Sync + 'static>(&mut self, f: F) -> &mut Self {
        self.on_thread_stop = Some(StdArc::new(f));
        self
    }

    /// Ticks between checks of the global (injection) queue. Panics if 0.
    #[track_caller]
    pub fn global_queue_interval(&mut self, n: u32) -> &mut Self {
        assert!(n > 0, "global_queue_interval must be greater than 0");
        self.global_queue_interval = Some(n);
        self
    }

    /// Ticks between non-blocking polls of the drivers (timers, I/O). Panics if 0.
    #[track_caller]
    pub fn event_interval(&mut self, n: u32) -> &mut Self {
        assert!(n > 0, "event_interval must be greater than 0");
        self.event_interval = Some(n);
        self
    }

    /// Most threads the blocking pool (`spawn_blocking`) may run at once. Default: 8 × the CPU
    /// cores, clamped to 16..=128, or `WEFT_MAX_BLOCKING_THREADS`. Below the cap the pool sizes
    /// itself (up to the cores on demand, more only while threads block; see
    /// `runtime/blocking.rs`), so most programs need not set this. Panics if 0.
    #[track_caller]
    pub fn max_blocking_threads(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "max_blocking_threads must be greater than 0");
        self.max_blocking_threads = Some(n);
        self
    }

    /// How long an idle blocking-pool thread waits for work before exiting. Default 10 s.
    pub fn thread_keep_alive(&mut self, d: Duration) -> &mut Self {
        self.thread_keep_alive = Some(d);
        self
    }

    /// weft only: a poll that keeps a worker busy longer than this is a *long poll* (default
    /// 10 ms, or `WEFT_LONG_POLL_THRESHOLD_MS`; `Duration::ZERO` turns detection and
    /// compensation off). A monitor thread per multi-thread runtime notices it, counts it in
    /// `RuntimeMetrics::long_poll_count`, keeps it in `recent_long_polls` (task id, spawn
    /// location, worker, duration) and prints a rate-limited warning line naming the spawn
    /// location. No effect on the current-thread flavor. tokio has no equivalent.
    pub fn long_poll_threshold(&mut self, threshold: Duration) -> &mut Self {
        self.long_poll_threshold = Some(threshold);
        self
    }

    /// weft only: whether the long-poll monitor prints its warning line to stderr (at most
    /// one per second per runtime). Default true; the metrics are recorded either way.
    pub fn warn_on_long_polls(&mut self, warn: bool) -> &mut Self {
        self.warn_on_long_polls = warn;
        self
    }

    /// weft only: when a worker is stuck in one poll past `long_poll_threshold` and work
    /// waits, move its queued tasks where other workers can take them and, if none is free,
    /// run a temporary thread in its place until its poll returns (at most `worker_threads`
    /// of them). Default on (or `WEFT_COMPENSATE`). tokio deliberately does not do this; the
    /// trade-offs are in the scheduler essay and README.md, "Blocking".
    pub fn compensate_blocked_workers(&mut self, enable: bool) -> &mut Self {
        self.compensate_blocked_workers = Some(enable);
        self
    }

    /// weft only: whether task cells, and the `mpsc` and `oneshot` channels made on the
    /// runtime's threads, come from the runtime's own arena (size-class slabs in chunks of up
    /// to 2 MiB, advised as transparent huge pages, freed with the runtime and the last
    /// channel made in it; `task/arena.rs`) rather than the global allocator. Default on (or `WEFT_TASK_ARENA`).
    /// Turn it off to have heap profilers or memory checkers that watch `malloc` (valgrind,
    /// heaptrack, a custom `#[global_allocator]`) see every task cell and channel, at the cost
    /// measured in README.md, "Task memory".
    pub fn task_arena(&mut self, enable: bool) -> &mut Self {
        self.task_arena = Some(enable);
        self
    }

    /// Enables every driver (timers and I/O).
    pub fn enable_all(&mut self) -> &mut Self {
        self.enable_time = true;
        self.enable_io = true;
        self
    }

    pub fn enable_time(&mut self) -> &mut Self {
        self.enable_time = true;
        self
    }

    /// Enables the I/O driver (mio/epoll), needed by `weft::net`.
    pub fn enable_io(&mut self) -> &mut Self {
        self.enable_io = true;
        self
    }

    /// When true, a panic inside a task is not printed by the process panic hook (it still
    /// reaches the task's `JoinHandle` as a `JoinError`). Default false: panics print, as
    /// users expect.
    pub fn silence_task_panics(&mut self, silence: bool) -> &mut Self {
        self.silence_task_panics = silence;
        if silence {
            crate::task::panic_hook::install();
        }
        self
    }

    /// Turns on the per-worker poll-time histogram (`RuntimeMetrics::poll_time_histogram_*`)
    /// and exact per-poll mean poll times. Off by default, as in tokio: it reads the clock
    /// twice per poll (the cost is in README.md, "Metrics"). The `WEFT_METRICS_POLL_TIME_HISTOGRAM=1`
    /// environment variable turns it on for every runtime built afterwards.
    pub fn enable_metrics_poll_time_histogram(&mut self) -> &mut Self {
        self.metrics.poll_time_histogram = true;
        self
    }

    /// weft only: turns on the per-worker schedule-latency histogram
    /// (`RuntimeMetrics::schedule_latency_histogram_*`): the time from a task's wake-up to the
    /// start of its poll. Off by default: it reads the clock at every wake and every poll (the
    /// cost is in README.md, "Metrics"). `WEFT_METRICS_SCHEDULE_LATENCY_HISTOGRAM=1` turns it
    /// on for every runtime built afterwards. (tokio has no such histogram.)
    pub fn enable_metrics_schedule_latency_histogram(&mut self) -> &mut Self {
        self.metrics.schedule_latency_histogram = true;
        self
    }

    /// weft only: turns the blocking-pool queue-latency histogram (submit → start of a
    /// `spawn_blocking` closure) on or off. Default on (one clock read per blocking spawn).
    pub fn metrics_blocking_queue_latency_histogram(&mut self, enable: bool) -> &mut Self {
        self.metrics.blocking_queue_latency_histogram = enable;
        self
    }

    /// Starts the runtime with its clock paused (see `time::pause`): time then moves only by
    /// `time::advance` or by auto-advance when the runtime is idle. Needs the `test-util`
    /// feature, as in tokio. Building a multi-thread runtime with it panics (tokio's rule).
    #[cfg(feature = "test-util")]
    pub fn start_paused(&mut self, start_paused: bool) -> &mut Self {
        self.start_paused = start_paused;
        self
    }

    /// Names the runtime (`Handle::name`). Panics on an empty or all-whitespace name.
    #[track_caller]
    pub fn name(&mut self, val: impl Into<String>) -> &mut Self {
        let val = val.into();
        assert!(!val.trim().is_empty(), "runtime name shouldn't be empty");
        self.name = Some(val);
        self
    }

    /// How many I/O events one turn of the driver takes at most (default 1024). Events beyond
    /// it stay ready in the kernel for the next turn. Panics on 0.
    #[track_caller]
    pub fn max_io_events_per_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(capacity > 0, "max_io_events_per_tick must be non-zero");
        self.io_events_per_tick = capacity;
        self
    }

    /// How many I/O events a worker takes when it polls the driver while it still has tasks
    /// to run (default: the same as `max_io_events_per_tick`). A small batch keeps a busy
    /// worker from waking more tasks than its queue holds. Panics on 0.
    #[track_caller]
    pub fn max_io_events_per_busy_tick(&mut self, capacity: usize) -> &mut Self {
        assert!(capacity > 0, "max_io_events_per_busy_tick must be non-zero");
        self.io_events_per_busy_tick = Some(capacity);
        self
    }

    /// Builds the runtime, starting its worker threads.
    ///
    /// Knobs not set on the builder come from the `WEFT_*` environment variables (README.md,
    /// "Configuration"); a malformed one fails here with `ErrorKind::InvalidInput` naming it.
    pub fn build(&mut self) -> io::Result<Runtime> {
        let env = EnvConfig::from_env()?;
        self.build_with_env(env)
    }

    fn build_with_env(&mut self, env: EnvConfig) -> io::Result<Runtime> {
        super::foreign_tokio::install();
        let config = Config {
            global_queue_interval: self
                .global_queue_interval
                .or(env.global_queue_interval)
                .unwrap_or(DEFAULT_GLOBAL_QUEUE_INTERVAL),
            event_interval: self.event_interval.or(env.event_interval).unwrap_or(DEFAULT_EVENT_INTERVAL),
            silence_task_panics: self.silence_task_panics,
            metrics: self.metrics,
            on_thread_park: self.on_thread_park.clone().map(super::ThreadHook),
            on_thread_unpark: self.on_thread_unpark.clone().map(super::ThreadHook),
            monitor: scheduler::multi_thread::monitor::MonitorConfig {
                threshold: self
                    .long_poll_threshold
                    .or(env.long_poll_threshold)
                    .unwrap_or(scheduler::multi_thread::monitor::DEFAULT_THRESHOLD),
                warn: self.warn_on_long_polls,
                compensate: self.compensate_blocked_workers.or(env.compensate).unwrap_or(true),
            },
            name: self.name.clone(),
            task_arena: self.task_arena.or(env.task_arena).unwrap_or(true),
        };
        let max_blocking =
            self.max_blocking_threads.or(env.max_blocking_threads).unwrap_or_else(super::blocking::default_max_threads);
        let keep_alive =
            self.thread_keep_alive.or(env.blocking_keep_alive).unwrap_or(super::blocking::DEFAULT_KEEP_ALIVE);
        let blocking = super::blocking::BlockingPool::new(max_blocking, keep_alive);
        let (mut driver, driver_handle) =
            Driver::new(self.enable_time, self.enable_io, matches!(self.kind, Kind::CurrentThread), self.start_paused)?;
        driver.set_io_event_limits(self.io_events_per_tick, self.io_events_per_busy_tick);
        match self.kind {
            Kind::CurrentThread => {
                let handle = scheduler::current_thread::create(driver, driver_handle, blocking, config);
                Ok(Runtime::from_parts(scheduler::Handle::CurrentThread(handle), None))
            }
            Kind::MultiThread => {
                let n = self.worker_threads.or(env.worker_threads).unwrap_or_else(default_worker_threads);
                self.build_multi_thread(n, driver, driver_handle, blocking, config, keep_alive)
            }
        }
    }

    /// Builds a [`LocalRuntime`](super::LocalRuntime): a current-thread runtime that runs
    /// `!Send` tasks. Panics on a multi-thread builder, as tokio's does.
    pub fn build_local(&mut self, _options: super::LocalOptions) -> io::Result<super::LocalRuntime> {
        match self.kind {
            Kind::CurrentThread => Ok(super::LocalRuntime::from_runtime(self.build()?)),
            Kind::MultiThread => panic!("multi_thread is not supported for LocalRuntime"),
        }
    }

    fn build_multi_thread(
        &self,
        n: usize,
        driver: Driver,
        driver_handle: super::driver::Handle,
        blocking: super::blocking::BlockingPool,
        config: Config,
        keep_alive: Duration,
    ) -> io::Result<Runtime> {
        let alive = Arc::new((Mutex::new(0), Condvar::new()));
        let threads = scheduler::multi_thread::handoff::ThreadSpawn {
            name: self.thread_name.clone(),
            stack_size: self.thread_stack_size,
            on_start: self.on_thread_start.clone(),
            on_stop: self.on_thread_stop.clone(),
            alive: alive.clone(),
            threads: Mutex::new(Vec::new()),
        };
        let (handle, cores) =
            scheduler::multi_thread::create(n, driver, driver_handle, blocking, config, threads, keep_alive);
        let mut threads = Vec::with_capacity(n);
        for (index, core) in cores.into_iter().enumerate() {
            let h = handle.clone();
            match handle.threads.spawn(move || scheduler::multi_thread::run_worker(h, index, core)) {
                Ok(t) => threads.push(t),
                Err(e) => {
                    // Shut down the workers that did start; the unstarted cores are dropped.
                    handle.shutdown();
                    return Err(e);
                }
            }
        }
        let runtime = Runtime::from_parts(scheduler::Handle::MultiThread(handle.clone()), Some((threads, alive)));
        // On failure the runtime is dropped here, which shuts the started workers down.
        scheduler::multi_thread::start_monitor(&handle)?;
        Ok(runtime)
    }
}

fn default_worker_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("kind", &self.kind)
            .field("worker_threads", &self.worker_threads)
            .field("global_queue_interval", &self.global_queue_interval)
            .field("event_interval", &self.event_interval)
            .field("enable_time", &self.enable_time)
            .field("enable_io", &self.enable_io)
            .field("max_blocking_threads", &self.max_blocking_threads)
            .finish()
    }
}
