//! Shutdown cancels every task and drops every future exactly once, with no leak.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use support::{DropCounter, PendingForever};

/// Spawns, for one runtime: pending-forever tasks (never woken), sleeping tasks, a task
/// stuck mid-poll during shutdown (multi-thread only), aborted and detached tasks, and tasks
/// holding their waker in a place outside the runtime. Returns (expected drops, counter).
fn populate(
    rt: &weft::runtime::Runtime,
    mid_poll: bool,
) -> (usize, DropCounter, Arc<std::sync::Mutex<Vec<std::task::Waker>>>) {
    let drops = DropCounter::new();
    let stash: Arc<std::sync::Mutex<Vec<std::task::Waker>>> = Arc::default();
    let polls = Arc::new(AtomicUsize::new(0));
    let mut expected = 0;
    rt.block_on(async {
        // Spawned, pending forever, JoinHandle kept then dropped (detached).
        for _ in 0..100 {
            drop(weft::spawn(PendingForever { polls: polls.clone(), _token: drops.token() }));
            expected += 1;
        }
        // Sleeping for an hour.
        for _ in 0..100 {
            let t = drops.token();
            drop(weft::spawn(async move {
                let _t = t;
                weft::time::sleep(Duration::from_secs(3600)).await;
            }));
            expected += 1;
        }
        // Aborted (dropped by the abort, before shutdown).
        for _ in 0..50 {
            let t = drops.token();
            let h = weft::spawn(async move {
                let _t = t;
                std::future::pending::<()>().await;
            });
            h.abort();
            expected += 1;
        }
        // Waker stashed outside the runtime: the waker keeps the task's memory alive, but the
        // future must still be dropped at shutdown.
        for _ in 0..50 {
            let t = drops.token();
            let s = stash.clone();
            drop(weft::spawn(async move {
                let _t = t;
                std::future::poll_fn(|cx| {
                    s.lock().unwrap().push(cx.waker().clone());
                    std::task::Poll::<()>::Pending
                })
                .await;
            }));
            expected += 1;
        }
        // Let every task be polled once.
        while polls.load(SeqCst) < 100 || stash.lock().unwrap().len() < 50 {
            weft::task::yield_now().await;
        }
        if mid_poll {
            // A task blocked inside poll while shutdown starts.
            let started = Arc::new(Barrier::new(2));
            let s2 = started.clone();
            let t = drops.token();
            drop(weft::spawn(async move {
                let _t = t;
                s2.wait();
                std::thread::sleep(Duration::from_millis(100));
                weft::task::yield_now().await;
                unreachable!("the runtime shut down during the blocking poll");
            }));
            expected += 1;
            started.wait();
        }
    });
    (expected, drops, stash)
}

#[test]
fn drop_multi_thread_drops_every_future_once() {
    let rt = support::mt(2);
    let (expected, drops, stash) = populate(&rt, true);
    drop(rt);
    assert_eq!(drops.count(), expected);
    // Waking tasks of a dropped runtime is a no-op (and not UB).
    for w in stash.lock().unwrap().drain(..) {
        w.wake();
    }
    assert_eq!(drops.count(), expected);
}

#[test]
fn drop_current_thread_drops_every_future_once() {
    let rt = support::ct();
    let (expected, drops, stash) = populate(&rt, false);
    drop(rt);
    assert_eq!(drops.count(), expected);
    let wakers: Vec<_> = stash.lock().unwrap().drain(..).collect();
    std::thread::spawn(move || wakers.into_iter().for_each(|w| w.wake())).join().unwrap();
    assert_eq!(drops.count(), expected);
}

#[test]
fn shutdown_timeout_drops_every_future_once() {
    let rt = support::mt(2);
    let (expected, drops, _stash) = populate(&rt, true);
    rt.shutdown_timeout(Duration::from_secs(10));
    assert_eq!(drops.count(), expected);
}

#[test]
fn shutdown_background_drops_every_future_eventually() {
    let rt = support::mt(2);
    let (expected, drops, _stash) = populate(&rt, false);
    rt.shutdown_background();
    let deadline = std::time::Instant::now() + Duration::from_secs(60); // valgrind-generous
    while drops.count() != expected && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(drops.count(), expected);
}

#[test]
fn local_set_drop_drops_its_tasks_on_its_thread() {
    let rt = support::ct();
    let drops = DropCounter::new();
    let local = weft::task::LocalSet::new();
    let owner = std::thread::current().id();
    struct CheckThread(std::thread::ThreadId, #[allow(dead_code)] support::DropToken);
    impl Drop for CheckThread {
        fn drop(&mut self) {
            assert_eq!(std::thread::current().id(), self.0, "!Send future dropped on another thread");
        }
    }
    local.block_on(&rt, async {
        for _ in 0..20 {
            let guard = CheckThread(owner, drops.token());
            weft::task::spawn_local(async move {
                let _g = guard;
                weft::time::sleep(Duration::from_secs(3600)).await;
            });
        }
        weft::task::yield_now().await;
    });
    assert_eq!(drops.count(), 0);
    drop(local);
    assert_eq!(drops.count(), 20);
    drop(rt);
}

#[test]
fn spawn_during_shutdown_is_cancelled_not_leaked() {
    let rt = support::mt(2);
    let drops = DropCounter::new();
    let d = drops.clone();
    struct SpawnOnDrop(DropCounter);
    impl Drop for SpawnOnDrop {
        fn drop(&mut self) {
            let t = self.0.token();
            // The runtime is shutting down: this task must be dropped, not leaked or run.
            drop(weft::spawn(async move {
                let _t = t;
                std::future::pending::<()>().await;
            }));
        }
    }
    rt.block_on(async move {
        let g = SpawnOnDrop(d);
        drop(weft::spawn(async move {
            let _g = g;
            std::future::pending::<()>().await;
        }));
        weft::task::yield_now().await;
    });
    drop(rt);
    assert_eq!(drops.count(), 1);
}

/// Dropping an idle runtime returns within a generous bound (no wall-clock threshold that a
/// slow machine could miss) and leaves no thread behind: every worker, and the multi-thread
/// runtime's monitor, is gone from `/proc/self/task` afterwards.
///
/// `/proc/self/task` lists every thread of the process, and the other tests of this binary run
/// runtimes in parallel; so the test re-runs itself alone in a child process
/// (`WEFT_SHUTDOWN_TEST_ALONE`), where the count is this test's own.
#[test]
fn runtime_drop_without_tasks_is_quick_and_clean() {
    const NAME: &str = "runtime_drop_without_tasks_is_quick_and_clean";
    const ALONE: &str = "WEFT_SHUTDOWN_TEST_ALONE";
    const BOUND: Duration = Duration::from_secs(5);
    if std::env::var_os(ALONE).is_none() {
        let exe = std::env::current_exe().expect("the test binary's path");
        let out = std::process::Command::new(exe)
            .args([NAME, "--exact", "--test-threads=1", "--nocapture"])
            .env(ALONE, "1")
            .output()
            .expect("re-run this test in a child process");
        let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "the test failed in its child process:\n{log}");
        assert!(log.contains("1 passed"), "the child process did not run the test:\n{log}");
        return;
    }
    let threads = || std::fs::read_dir("/proc/self/task").expect("/proc/self/task").count();
    let before = threads();
    for _ in 0..25 {
        // (flavor, worker threads it starts: the fewest threads it adds while alive)
        for (flavor, workers) in [("current_thread", 0), ("multi_thread", 2)] {
            let rt = if workers == 0 { support::ct() } else { support::mt(workers) };
            rt.block_on(async {});
            assert!(threads() >= before + workers, "{flavor}: the runtime's threads are not counted");
            let start = Instant::now();
            drop(rt);
            let took = start.elapsed();
            assert!(took < BOUND, "{flavor}: dropping an idle runtime took {took:?}");
            // `drop` joined the threads; the kernel may list a joined thread a moment longer
            // (it wakes the joiner before it releases the task), so wait, within the same bound.
            let deadline = Instant::now() + BOUND;
            while threads() > before {
                let left = threads() - before;
                assert!(Instant::now() < deadline, "{flavor}: {left} threads left behind after drop");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

#[test]
fn never_polled_queued_tasks_are_cancelled_at_shutdown() {
    // Current-thread: tasks spawned from outside block_on are never polled.
    let rt = support::ct();
    let drops = DropCounter::new();
    for _ in 0..1000 {
        let t = drops.token();
        drop(rt.spawn(async move {
            let _t = t;
            unreachable!("never polled");
        }));
    }
    drop(rt);
    assert_eq!(drops.count(), 1000);

    // Multi-thread: the worker is blocked while the queue fills up, then shutdown starts, and
    // only then is the worker let go. Without compensation, so that no spare thread runs the
    // queue in the blocked worker's place (under valgrind the 1,000 spawns outlast the
    // long-poll threshold, and a fixed 50 ms block can let every task run first). One
    // worker: with two, both blockers could land in one worker's queue, and with no
    // compensation the second would never run (a hang).
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .compensate_blocked_workers(false)
        .enable_all()
        .build()
        .unwrap();
    let drops = DropCounter::new();
    let started = Arc::new(Barrier::new(2));
    let release = Arc::new(Barrier::new(2));
    let (s, r) = (started.clone(), release.clone());
    drop(rt.spawn(async move {
        s.wait();
        r.wait();
    }));
    started.wait();
    let handles: Vec<_> = (0..1000)
        .map(|_| {
            let t = drops.token();
            rt.spawn(async move {
                let _t = t;
            })
        })
        .collect();
    // Released from another thread once the drop, which waits for the worker, has begun
    // shutting down: from then on a spawn is refused at once (the injection queue is closed),
    // where before it is queued behind the others.
    let handle = rt.handle().clone();
    let releaser = std::thread::spawn(move || {
        while !handle.spawn(async {}).is_finished() {
            std::thread::sleep(Duration::from_millis(1));
        }
        release.wait();
    });
    drop(rt);
    releaser.join().unwrap();
    assert_eq!(drops.count(), 1000);
    let mut cancelled = 0;
    for h in handles {
        // Either ran before shutdown reached it, or was cancelled: never both, never neither.
        let rt2 = support::ct();
        match rt2.block_on(h) {
            Ok(()) => {}
            Err(e) => {
                assert!(e.is_cancelled());
                cancelled += 1;
            }
        }
    }
    assert!(cancelled > 0, "the queued tasks should not all have run while the workers were blocked");
}

#[test]
fn spawn_after_shutdown_is_cancelled_on_the_spot() {
    let rt = support::mt(2);
    let handle = rt.handle().clone();
    drop(rt);
    let drops = DropCounter::new();
    let t = drops.token();
    let h = handle.spawn(async move {
        let _t = t;
    });
    assert_eq!(drops.count(), 1, "refused spawn drops its future immediately");
    assert!(support::ct().block_on(h).unwrap_err().is_cancelled());
}

/// A task queued on a runtime that is dropped before it ever runs is cancelled: its
/// `JoinHandle`, awaited elsewhere, says so (tokio's `task_join_set::runtime_gone`).
#[test]
fn never_polled_tasks_of_a_dropped_runtime_complete_their_join_handles_as_cancelled() {
    let ct = || weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mt = || weft::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mut handles = Vec::new();
    // Spawned from outside onto a current-thread runtime: sits in its remote queue.
    let rt = ct();
    handles.push(rt.handle().spawn(async { 1 }));
    drop(rt);
    // Spawned by the block_on future: sits in the core's local queue when block_on returns.
    let rt = ct();
    let join = rt.block_on(async { Some(weft::spawn(async { 2 })) });
    handles.push(join.expect("spawned"));
    drop(rt);
    // The multi-thread flavor, spawned from outside.
    let rt = mt();
    handles.push(rt.handle().spawn(async { 3 }));
    drop(rt);
    ct().block_on(async {
        for (i, h) in handles.into_iter().enumerate() {
            match weft::time::timeout(Duration::from_secs(60), h).await {
                Ok(Ok(3)) if i == 2 => {} // the multi-thread worker may have run it first
                Ok(Err(e)) => assert!(e.is_cancelled(), "handle {i}: {e}"),
                Ok(Ok(v)) => panic!("handle {i}: the task ran ({v}) on a runtime that was dropped"),
                Err(_) => panic!("handle {i}: the JoinHandle never completed"),
            }
        }
    });
}

/// `shutdown_timeout(Duration::MAX)` means "wait as long as it takes", not an overflow panic
/// (tokio's `shutdown_timeout_max`).
#[test]
fn shutdown_timeout_of_duration_max_waits_without_overflowing() {
    let mt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    mt.spawn_blocking(|| std::thread::sleep(std::time::Duration::from_millis(20)));
    mt.shutdown_timeout(std::time::Duration::MAX);
    let ct = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    ct.shutdown_timeout(std::time::Duration::MAX);
}
