//! `block_in_place`, the long-poll monitor and compensation for blocked workers.
//!
//! No assertion depends on how long anything takes: every wait is for an event (a channel
//! message, a flag, a metric becoming non-zero) under a generous deadline that only turns a
//! hang into a failure.

mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

use support::{long_poll_builder, wait_until, DEADLINE};
use weft::runtime::{Builder, Runtime};
use weft::task::block_in_place;

/// Counts runtime threads through the start/stop hooks.
#[derive(Clone, Default)]
struct ThreadCount {
    started: Arc<AtomicUsize>,
    stopped: Arc<AtomicUsize>,
}

impl ThreadCount {
    fn install(&self, b: &mut Builder) {
        let (s, t) = (self.started.clone(), self.stopped.clone());
        b.on_thread_start(move || {
            s.fetch_add(1, SeqCst);
        });
        b.on_thread_stop(move || {
            t.fetch_add(1, SeqCst);
        });
    }

    fn alive(&self) -> usize {
        self.started.load(SeqCst) - self.stopped.load(SeqCst)
    }
}

fn mt(workers: usize) -> Runtime {
    Builder::new_multi_thread().worker_threads(workers).enable_all().warn_on_long_polls(false).build().unwrap()
}

#[test]
fn block_in_place_lets_the_workers_other_tasks_run() {
    // One worker: the task blocking on the channel can only be released by a task queued
    // on the same worker, which runs only if the core was handed to another thread.
    let rt = mt(1);
    let out = rt.block_on(async {
        let (tx, rx) = mpsc::channel::<u32>();
        let blocker = weft::spawn(async move { block_in_place(move || rx.recv_timeout(DEADLINE).expect("released")) });
        weft::spawn(async move { tx.send(7).unwrap() }).await.unwrap();
        blocker.await.unwrap()
    });
    assert_eq!(out, 7);
}

#[test]
fn block_in_place_nested_runs_both_closures() {
    let rt = mt(1);
    let out = rt.block_on(async {
        let (tx, rx) = mpsc::channel::<u32>();
        let blocker = weft::spawn(async move {
            block_in_place(move || block_in_place(move || rx.recv_timeout(DEADLINE).expect("released")) + 1)
        });
        weft::spawn(async move { tx.send(1).unwrap() }).await.unwrap();
        blocker.await.unwrap()
    });
    assert_eq!(out, 2);
}

#[test]
fn block_in_place_many_times_from_many_tasks() {
    let rt = mt(2);
    let total = rt.block_on(async {
        let handles: Vec<_> = (0..64u64)
            .map(|i| {
                weft::spawn(async move {
                    let mut sum = 0;
                    for j in 0..8 {
                        sum += block_in_place(|| i * j);
                        weft::task::yield_now().await;
                    }
                    sum
                })
            })
            .collect();
        let mut total = 0;
        for h in handles {
            total += h.await.unwrap();
        }
        total
    });
    assert_eq!(total, (0..64u64).sum::<u64>() * (0..8u64).sum::<u64>());
}

#[test]
fn block_in_place_outside_a_runtime_and_in_multi_thread_block_on() {
    assert_eq!(block_in_place(|| 3), 3);
    let rt = mt(2);
    let inner = rt.block_on(async {
        // Marked outside the runtime meanwhile: another runtime may be driven here.
        block_in_place(|| {
            let inner = Builder::new_current_thread().build().unwrap();
            inner.block_on(async { 5 })
        })
    });
    assert_eq!(inner, 5);
}

#[test]
fn block_in_place_on_current_thread_panics() {
    let rt = Builder::new_current_thread().build().unwrap();
    let err = catch_unwind(AssertUnwindSafe(|| rt.block_on(async { block_in_place(|| ()) }))).unwrap_err();
    let msg = err.downcast_ref::<String>().expect("formatted panic message");
    assert!(msg.contains("can call blocking only when running on the multi-threaded runtime"), "{msg}");
    assert!(msg.contains("spawn_blocking"), "{msg}");
}

#[test]
fn block_in_place_inside_local_set_panics() {
    let rt = mt(2);
    let err = catch_unwind(AssertUnwindSafe(|| {
        rt.block_on(async {
            let local = weft::task::LocalSet::new();
            local.run_until(async { block_in_place(|| ()) }).await
        })
    }))
    .unwrap_err();
    let msg = err.downcast_ref::<String>().expect("formatted panic message");
    assert!(msg.contains("can call blocking only when running on the multi-threaded runtime"), "{msg}");
    assert!(msg.contains("LocalSet"), "{msg}");
}

#[test]
fn runtime_drop_waits_for_a_task_inside_block_in_place_and_joins_every_thread() {
    let count = ThreadCount::default();
    let mut b = Builder::new_multi_thread();
    b.worker_threads(2).enable_all().warn_on_long_polls(false);
    count.install(&mut b);
    let rt = b.build().unwrap();
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let finished = Arc::new(AtomicBool::new(false));
    let f = finished.clone();
    rt.spawn(async move {
        block_in_place(move || {
            started_tx.send(()).unwrap();
            release_rx.recv_timeout(DEADLINE).expect("released");
            f.store(true, SeqCst);
        });
    });
    started_rx.recv_timeout(DEADLINE).unwrap();
    // Shutdown starts while the closure blocks; the core it gave away shuts down meanwhile.
    let dropper = std::thread::spawn(move || drop(rt));
    release_tx.send(()).unwrap();
    dropper.join().unwrap();
    assert!(finished.load(SeqCst));
    assert!(count.started.load(SeqCst) >= 3, "two workers and at least one spare thread");
    assert_eq!(count.alive(), 0, "every runtime thread stopped before drop returned");
}

#[test]
fn block_in_place_in_a_destructor_during_shutdown() {
    struct BlocksOnDrop(Arc<AtomicUsize>);
    impl Drop for BlocksOnDrop {
        fn drop(&mut self) {
            block_in_place(|| self.0.fetch_add(1, SeqCst));
        }
    }
    let ran = Arc::new(AtomicUsize::new(0));
    let rt = mt(2);
    for _ in 0..4 {
        let guard = BlocksOnDrop(ran.clone());
        rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
    }
    rt.block_on(weft::task::yield_now());
    drop(rt);
    assert_eq!(ran.load(SeqCst), 4);
}

#[test]
fn monitor_names_the_spawn_location_of_a_blocking_poll() {
    let rt = long_poll_builder().build().unwrap();
    let metrics = rt.handle().metrics();
    let line = line!() + 1;
    let id = support::run_one_long_poll(&rt);
    wait_until("long poll recorded", || !metrics.recent_long_polls().is_empty());
    let polls = metrics.recent_long_polls();
    assert_eq!(polls.len(), 1, "{polls:?}");
    let poll = &polls[0];
    assert_eq!(poll.task_id, id);
    assert_eq!(poll.spawn_location.file(), file!());
    assert_eq!(poll.spawn_location.line(), line);
    assert!(poll.worker < 2);
    assert!(poll.duration >= Duration::from_millis(10), "{poll:?}");
    assert_eq!(metrics.long_poll_count(), 1);
    let text = poll.to_string();
    assert!(text.starts_with(&format!("task {id} spawned at {}:{line}:", file!())), "{text}");
    assert!(text.contains("blocked worker") && text.ends_with(" ms"), "{text}");
}

#[test]
fn monitor_reports_nothing_for_a_task_that_yields_regularly() {
    // Each poll sleeps 1 ms; the threshold is a thousand times that.
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .long_poll_threshold(Duration::from_secs(1))
        .build()
        .unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                weft::spawn(async {
                    for _ in 0..100 {
                        std::thread::sleep(Duration::from_millis(1));
                        weft::task::yield_now().await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let metrics = rt.handle().metrics();
    assert_eq!(metrics.long_poll_count(), 0, "{:?}", metrics.recent_long_polls());
    assert_eq!(metrics.compensating_threads_started_count(), 0);
}

/// Both workers block until released; a timer spawned meanwhile must fire *before* the
/// release (the release waits for it), which only a compensating thread can make happen.
#[test]
fn compensation_keeps_timers_firing_while_every_worker_blocks_and_retires_after() {
    let count = ThreadCount::default();
    let mut b = long_poll_builder();
    count.install(&mut b);
    let rt = b.build().unwrap();
    let baseline = 2; // the workers (the monitor runs no user code and skips the hooks)
    wait_until("workers started", || count.started.load(SeqCst) == baseline);
    let barrier = Arc::new(Barrier::new(3));
    let release = Arc::new(AtomicBool::new(false));
    let blockers: Vec<_> = (0..2)
        .map(|_| {
            let (barrier, release) = (barrier.clone(), release.clone());
            rt.spawn(async move {
                barrier.wait();
                wait_until("released", || release.load(SeqCst));
            })
        })
        .collect();
    barrier.wait(); // both workers are now inside a blocking poll
                    // Stuck workers publish nothing: any poll counted from here on is a stand-in's.
    let polls = || {
        let m = rt.handle().metrics();
        (0..m.num_workers()).map(|w| m.worker_poll_count(w)).sum::<u64>()
    };
    let before = polls();
    let (fired_tx, fired_rx) = mpsc::channel();
    rt.spawn(async move {
        weft::time::sleep(Duration::from_millis(20)).await;
        fired_tx.send(()).unwrap();
    });
    fired_rx.recv_timeout(DEADLINE).expect("the timer fired while both workers were blocked");
    // The timer task's two polls (register, complete) ran on the stand-in and count for the
    // worker it stood in for.
    wait_until("the stand-in's polls counted", || polls() >= before + 2);
    let metrics = rt.handle().metrics();
    assert!(metrics.compensating_threads_started_count() >= 1);
    assert!(count.alive() > baseline, "a compensating thread is running");
    release.store(true, SeqCst);
    for b in blockers {
        rt.block_on(b).unwrap();
    }
    wait_until("compensating threads retired", || count.alive() == baseline);
    drop(rt);
    assert_eq!(count.alive(), 0);
}

/// A future that notes whether its inner future ever returned `Pending` (its waker is then
/// registered, so the next wake is a real one).
struct NotePending<F>(F, Arc<AtomicBool>);

impl<F: std::future::Future + Unpin> std::future::Future for NotePending<F> {
    type Output = F::Output;
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        let poll = std::pin::Pin::new(&mut self.0).poll(cx);
        if poll.is_pending() {
            self.1.store(true, SeqCst);
        }
        poll
    }
}

/// A task wakes another, which goes to its worker's LIFO slot, and then blocks its thread
/// until the woken task has run. Only the monitor taking the stuck worker's LIFO slot lets
/// it run (to the other worker, or to a stand-in when there is none); without it, the pair
/// deadlocks until the blocking poll gives up.
fn a_task_woken_just_before_its_waker_blocks_still_runs(workers: usize) {
    let rt = long_poll_builder().worker_threads(workers).build().unwrap();
    for round in 0..3 {
        let (wake_tx, wake_rx) = weft::sync::oneshot::channel::<()>();
        let (ran_tx, ran_rx) = mpsc::channel::<()>();
        let waiting = Arc::new(AtomicBool::new(false));
        let woken = rt.spawn(NotePending(wake_rx, waiting.clone()));
        wait_until("the woken task waits", || waiting.load(SeqCst));
        let woken = rt.spawn(async move {
            woken.await.unwrap().unwrap();
            ran_tx.send(()).unwrap();
        });
        let waker = rt.spawn(async move {
            wake_tx.send(()).unwrap();
            // Blocks this worker until the woken task has run elsewhere (the deadline only
            // turns a deadlock into a failure).
            ran_rx.recv_timeout(Duration::from_secs(20)).is_ok()
        });
        let ran = rt.block_on(waker).unwrap();
        assert!(ran, "round {round}: the woken task did not run while its waker blocked ({workers} workers)");
        rt.block_on(woken).unwrap();
    }
}

#[test]
fn a_task_woken_just_before_its_waker_blocks_runs_on_the_other_worker() {
    a_task_woken_just_before_its_waker_blocks_still_runs(2);
}

#[test]
fn a_task_woken_just_before_its_only_worker_blocks_runs_on_a_stand_in() {
    a_task_woken_just_before_its_waker_blocks_still_runs(1);
}

#[test]
fn without_compensation_no_thread_is_started() {
    let rt = long_poll_builder().compensate_blocked_workers(false).build().unwrap();
    let m = rt.handle().metrics();
    let m2 = m.clone();
    let barrier = Arc::new(Barrier::new(3));
    let blockers: Vec<_> = (0..2)
        .map(|_| {
            let (barrier, m) = (barrier.clone(), m2.clone());
            rt.spawn(async move {
                barrier.wait();
                wait_until("both polls noticed", || m.long_poll_count() >= 2);
            })
        })
        .collect();
    barrier.wait();
    for b in blockers {
        rt.block_on(b).unwrap();
    }
    assert_eq!(m.compensating_threads_started_count(), 0);
}

/// tokio's semantics: closures queued before shutdown still run on the pool's threads, even
/// one whose thread was started an instant before (tokio's
/// `spawn_blocking_started_before_shutdown_continues`) and ones waiting behind a busy thread.
#[test]
fn closures_queued_before_shutdown_still_run() {
    let rt = Builder::new_current_thread().max_blocking_threads(1).build().unwrap();
    let handles: Vec<_> = (0..3u64)
        .map(|i| {
            rt.spawn_blocking(move || {
                std::thread::sleep(Duration::from_millis(30));
                i * 10
            })
        })
        .collect();
    rt.shutdown_timeout(Duration::from_secs(60));
    let other = Builder::new_current_thread().build().unwrap();
    let answers: Vec<u64> = handles.into_iter().map(|h| other.block_on(h).expect("ran, not cancelled")).collect();
    assert_eq!(answers, [0, 10, 20]);
}

/// A spawn after shutdown is still refused on the spot.
#[test]
fn spawn_blocking_after_shutdown_is_cancelled() {
    let rt = Builder::new_current_thread().build().unwrap();
    let handle = rt.handle().clone();
    rt.shutdown_timeout(Duration::from_secs(60));
    let h = handle.spawn_blocking(|| 1);
    let other = Builder::new_current_thread().build().unwrap();
    assert!(other.block_on(h).unwrap_err().is_cancelled());
}
