//! Fairness and cooperative budget: busy tasks cannot starve tasks, timers or wake-ups.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn yield_loop_does_not_starve_tasks_or_timers() {
    for (name, rt) in support::flavors() {
        let stop = Arc::new(AtomicBool::new(false));
        let spins = Arc::new(AtomicUsize::new(0));
        rt.block_on(async {
            // One hog per worker, each yielding in a loop.
            for _ in 0..2 {
                let (stop, spins) = (stop.clone(), spins.clone());
                weft::spawn(async move {
                    while !stop.load(SeqCst) {
                        spins.fetch_add(1, SeqCst);
                        weft::task::yield_now().await;
                    }
                });
            }
            // A timer and a fresh task must still get through.
            let t = weft::time::timeout(Duration::from_secs(10), weft::time::sleep(Duration::from_millis(20))).await;
            assert!(t.is_ok(), "{name}: timer starved by yield loop");
            let v = weft::time::timeout(Duration::from_secs(10), weft::spawn(async { 11 })).await;
            assert_eq!(v.expect("task starved").unwrap(), 11, "{name}");
            stop.store(true, SeqCst);
        });
        assert!(spins.load(SeqCst) > 0, "{name}");
    }
}

/// Yielding tasks wait until the local queue and the injection queue are empty when remote
/// work is waiting (they are deferred), so work spawned from outside is not held back by
/// tasks that keep yielding. Four yielders sit in the local queue while 1,000 tasks are
/// spawned from another thread (the runtime's thread is held meanwhile, so all 1,000 are in
/// the injection queue when the yielders start). Deferred: the injection queue is served
/// whenever the local queue drains, a few dozen yields in all. Yields re-queued at the back
/// of the local queue would keep it non-empty, and the injection queue would give one task
/// per `global_queue_interval` (31) ticks: ~30,000 yields (both flavors).
#[test]
fn yielding_tasks_do_not_hold_back_remote_spawns() {
    const REMOTE: usize = 1_000;
    let one_worker =
        weft::runtime::Builder::new_multi_thread().worker_threads(1).compensate_blocked_workers(false).build().unwrap();
    let current = weft::runtime::Builder::new_current_thread().build().unwrap();
    for (name, rt) in [("multi-thread, 1 worker", one_worker), ("current-thread", current)] {
        let ran = Arc::new(AtomicUsize::new(0));
        let yields = Arc::new(AtomicUsize::new(0));
        let handle = rt.handle().clone();
        let (ran2, yields2) = (ran.clone(), yields.clone());
        // Runs on the runtime's one thread: spawns the yielders there (its local queue), then
        // holds the thread until every remote spawn (from another thread) has been queued.
        let body = async move {
            let yielders: Vec<_> = (0..4)
                .map(|_| {
                    let (ran, yields) = (ran2.clone(), yields2.clone());
                    weft::spawn(async move {
                        while ran.load(SeqCst) < REMOTE {
                            yields.fetch_add(1, SeqCst);
                            weft::task::yield_now().await;
                        }
                    })
                })
                .collect();
            let ran3 = ran2.clone();
            std::thread::spawn(move || {
                for _ in 0..REMOTE {
                    let ran = ran3.clone();
                    drop(handle.spawn(async move {
                        ran.fetch_add(1, SeqCst);
                    }));
                }
            })
            .join()
            .unwrap();
            for y in yielders {
                y.await.unwrap();
            }
        };
        rt.block_on(async { rt.spawn(body).await.unwrap() });
        assert_eq!(ran.load(SeqCst), REMOTE, "{name}");
        let yields = yields.load(SeqCst);
        assert!(yields < 2_000, "{name}: {yields} yields before 1,000 remote spawns ran (deferral needs a few dozen)");
    }
}

#[test]
fn coop_budget_makes_ready_loops_yield() {
    // A task that awaits always-ready JoinHandles in a loop must still let a neighbour run on
    // a single-threaded runtime.
    let rt = support::ct();
    let neighbour_ran = Arc::new(AtomicBool::new(false));
    let n2 = neighbour_ran.clone();
    let observed = rt.block_on(async move {
        let done: Vec<_> = (0..1000).map(|i| weft::spawn(async move { i })).collect();
        // Let all of them finish first.
        weft::task::yield_now().await;
        weft::spawn(async move { n2.store(true, SeqCst) });
        let mut saw_neighbour_mid_loop = false;
        for (i, h) in done.into_iter().enumerate() {
            assert_eq!(h.await.unwrap(), i);
            if i < 999 && neighbour_ran.load(SeqCst) {
                saw_neighbour_mid_loop = true;
            }
        }
        saw_neighbour_mid_loop
    });
    assert!(observed, "a loop over ready JoinHandles never yielded (no coop budget)");
}

#[test]
fn consume_budget_yields_in_cpu_loops() {
    let rt = support::ct();
    let other = Arc::new(AtomicBool::new(false));
    let o2 = other.clone();
    let seen = rt.block_on(async move {
        weft::spawn(async move { o2.store(true, SeqCst) });
        for _ in 0..10_000 {
            weft::task::consume_budget().await;
            if other.load(SeqCst) {
                return true;
            }
        }
        false
    });
    assert!(seen);
}

#[test]
fn ping_pong_pair_cannot_monopolise_a_worker() {
    // Two tasks waking each other forever (LIFO-slot candidates) on one worker; a third task
    // must still run: the LIFO slot is capped.
    let rt = support::mt(1);
    let stop = Arc::new(AtomicBool::new(false));
    let result = rt.block_on(async {
        let (notify_a, notify_b) = spawn_ping_pong_pair(&stop);
        let r = weft::time::timeout(Duration::from_secs(10), weft::spawn(async { 5 })).await;
        stop.store(true, SeqCst);
        notify_a.notify();
        notify_b.notify();
        r
    });
    assert_eq!(result.expect("third task starved by a ping-pong pair").unwrap(), 5);
}

/// A task that yields while remote work waits is deferred; it must still run again when the
/// worker never goes idle. Here a ping-pong pair keeps the only worker's local queue
/// non-empty forever and a plain thread keeps the injection queue non-empty, so the yielder
/// is deferred at every yield: before deferred tasks aged back into the queue it starved
/// for good (tokio's `rt_common::ping_pong_saturation` hung the same way).
#[test]
fn a_deferred_yielder_runs_while_the_worker_never_idles() {
    let rt = support::mt(1);
    let stop = Arc::new(AtomicBool::new(false));
    let spammer = {
        let (handle, stop) = (rt.handle().clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(SeqCst) {
                for _ in 0..64 {
                    drop(handle.spawn(async {}));
                }
                std::thread::yield_now();
            }
        })
    };
    let result = rt.block_on(async {
        let (notify_a, notify_b) = spawn_ping_pong_pair(&stop);
        let yielder = weft::spawn(async {
            for _ in 0..5 {
                weft::task::yield_now().await;
            }
            7
        });
        let r = weft::time::timeout(Duration::from_secs(20), yielder).await;
        stop.store(true, SeqCst);
        notify_a.notify();
        notify_b.notify();
        r
    });
    spammer.join().unwrap();
    assert_eq!(result.expect("a deferred yielder starved").unwrap(), 7);
}

/// Spawns two tasks that wake each other until `stop` is set, and starts them; returns
/// their notifies (notify both after setting `stop` to let them finish).
fn spawn_ping_pong_pair(stop: &Arc<AtomicBool>) -> (Arc<weft_test_notify::Notify>, Arc<weft_test_notify::Notify>) {
    let notify_a = Arc::new(weft_test_notify::Notify::default());
    let notify_b = Arc::new(weft_test_notify::Notify::default());
    for (me, other) in [(notify_a.clone(), notify_b.clone()), (notify_b.clone(), notify_a.clone())] {
        let stop = stop.clone();
        weft::spawn(async move {
            while !stop.load(SeqCst) {
                other.notify();
                me.wait().await;
            }
            other.notify();
        });
    }
    notify_a.notify();
    (notify_a, notify_b)
}

/// A minimal level-triggered notify for the tests above (weft::sync arrives later).
mod weft_test_notify {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Mutex;
    use std::task::{Poll, Waker};

    #[derive(Default)]
    pub struct Notify {
        flag: AtomicBool,
        waker: Mutex<Option<Waker>>,
    }

    impl Notify {
        pub fn notify(&self) {
            self.flag.store(true, SeqCst);
            if let Some(w) = self.waker.lock().unwrap().take() {
                w.wake();
            }
        }
        pub async fn wait(&self) {
            std::future::poll_fn(|cx| {
                if self.flag.swap(false, SeqCst) {
                    return Poll::Ready(());
                }
                *self.waker.lock().unwrap() = Some(cx.waker().clone());
                if self.flag.swap(false, SeqCst) {
                    return Poll::Ready(());
                }
                Poll::Pending
            })
            .await
        }
    }
}

#[test]
fn idle_runtime_uses_almost_no_cpu() {
    // Only this runtime's threads are counted (`/proc/self/task/*/stat` whose name is ours):
    // the other tests of this binary run in parallel and burn CPU in the same process.
    const NAME: &str = "idle-cpu-probe";
    fn cpu_time() -> (Duration, usize) {
        let (mut ticks, mut threads) = (0u64, 0);
        for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
            let (head, tail) = stat.rsplit_once(')').unwrap();
            if !head.ends_with(&format!("({NAME}")) {
                continue;
            }
            let fields: Vec<&str> = tail.split_whitespace().collect();
            // utime, stime are fields 14 and 15 (1-based) of the whole line: 12 and 13 here.
            ticks += fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
            threads += 1;
        }
        (Duration::from_millis(ticks * 10), threads)
    }
    let rt =
        weft::runtime::Builder::new_multi_thread().worker_threads(2).thread_name(NAME).enable_all().build().unwrap();
    rt.block_on(async {
        // Wake everybody once, then go idle.
        let hs: Vec<_> = (0..100).map(|_| weft::spawn(async {})).collect();
        for h in hs {
            h.await.unwrap();
        }
    });
    // A worker names itself when it first runs: wait until both did (else the probe measures nothing).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while cpu_time().1 < 2 {
        assert!(std::time::Instant::now() < deadline, "the workers never named themselves {NAME}");
        std::thread::sleep(Duration::from_millis(1));
    }
    let before = cpu_time().0;
    std::thread::sleep(Duration::from_millis(1000));
    let (after, threads) = cpu_time();
    assert_eq!(threads, 2, "both workers still alive");
    let used = after - before;
    drop(rt);
    // Two idle workers for one second: a spinning runtime would use ~2 s.
    assert!(used < Duration::from_millis(150), "idle runtime burned {used:?} of CPU in 1 s");
}

/// Blocks the calling worker until released (or 60 s pass), after announcing that it blocks.
/// Returns whether it was released, i.e. whether the caller saw its timer fire *during* the block.
fn block_worker_until_released(started: &AtomicBool, release: std::sync::mpsc::Receiver<()>) -> bool {
    started.store(true, SeqCst);
    release.recv_timeout(Duration::from_secs(60)).is_ok()
}

/// Spawns a blocker (built by `make_blocker`, which ends up blocking a worker until released)
/// onto a runtime whose two workers are idle, then checks that a 10 ms timer registered from
/// outside fires *while the worker is still blocked*: the other worker must be serving the
/// driver. Decided by order, not by elapsed time: the blocker is released only after the timer
/// fired, so a stalled timer shows up as the blocker timing out (60 s), never as a flaky bound.
fn assert_timers_not_stalled_by<F>(make_blocker: fn(Arc<AtomicBool>, std::sync::mpsc::Receiver<()>) -> F)
where
    F: std::future::Future<Output = bool> + Send + 'static,
{
    let rt = support::mt(2);
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(20)); // let both workers park
        let started = Arc::new(AtomicBool::new(false));
        let (release, rx) = std::sync::mpsc::channel();
        let blocker = rt.spawn(make_blocker(started.clone(), rx));
        while !started.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        rt.block_on(async { weft::time::sleep(Duration::from_millis(10)).await });
        release.send(()).unwrap();
        assert!(rt.block_on(blocker).unwrap(), "timer stalled behind a blocking poll until the poll ended");
    }
}

#[test]
fn timers_fire_while_a_woken_worker_runs_a_blocking_task() {
    // Whichever idle worker is woken for the blocker (possibly the driver owner).
    assert_timers_not_stalled_by(|started, release| async move { block_worker_until_released(&started, release) });
}

#[test]
fn timers_fire_while_a_timer_woken_task_blocks_its_worker() {
    // The driver owner is woken by a timer, so the woken task runs on *that* worker and then
    // blocks it (without the driver hand-off, timers stall for the whole block).
    assert_timers_not_stalled_by(|started, release| async move {
        weft::time::sleep(Duration::from_millis(5)).await;
        block_worker_until_released(&started, release)
    });
}

/// A yield lets ready I/O in before the yielder runs again (tokio's `yield_defers_until_park`):
/// a task that connects a blocking client, then yields until its own `accept` has completed,
/// sees the accept within a few yields on every flavour, even with one worker and no other
/// task (so no park and no `event_interval` maintenance comes between the yields).
#[test]
fn a_yield_lets_ready_io_in_before_the_yielder_runs_again() {
    let flavors = [
        ("current_thread", weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()),
        ("multi_thread(1)", weft::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()),
    ];
    for (name, rt) in flavors {
        let yields = rt.block_on(async {
            weft::spawn(async {
                let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let addr = listener.local_addr().unwrap();
                let accepted = AtomicBool::new(false);
                let yields = AtomicUsize::new(0);
                weft::join!(
                    async {
                        let _client = std::net::TcpStream::connect(addr).unwrap();
                        while !accepted.load(SeqCst) && yields.load(SeqCst) < 1_000 {
                            weft::task::yield_now().await;
                            yields.fetch_add(1, SeqCst);
                        }
                    },
                    async {
                        listener.accept().await.unwrap();
                        accepted.store(true, SeqCst);
                    }
                );
                yields.load(SeqCst)
            })
            .await
            .unwrap()
        });
        // The first yield's driver poll sees the connection; two allow for the kernel
        // completing the handshake just after it.
        assert!(yields <= 2, "{name}: the accept completed only after {yields} yields");
    }
}
