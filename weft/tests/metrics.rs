//! Runtime metrics: counter semantics with exact numbers, for both flavors, and the values
//! after shutdown. No test depends on timing: values are read after the runtime was dropped
//! (every worker published on exit) or awaited as properties with a generous deadline.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{ct, flavors, mt};

/// Waits (up to a minute, for valgrind) until `cond` holds; panics with `what` otherwise.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "never became true: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn spawned_tasks_count_counts_remote_and_local_spawns_exactly() {
    for (name, rt) in flavors() {
        let metrics = rt.handle().metrics();
        const REMOTE: usize = 7;
        const LOCAL: usize = 13;
        let joins: Vec<_> = (0..REMOTE).map(|i| rt.spawn(async move { i })).collect();
        // Spawned from outside any worker: each one went through the global queue.
        assert_eq!(metrics.remote_schedule_count(), REMOTE as u64, "{name}");
        rt.block_on(async {
            for j in joins {
                j.await.unwrap();
            }
            let outer = weft::spawn(async {
                let inner: Vec<_> = (0..LOCAL).map(|i| weft::spawn(async move { i })).collect();
                for j in inner {
                    j.await.unwrap();
                }
            });
            outer.await.unwrap();
        });
        drop(rt);
        // The outer task spawned from inside the runtime on the current-thread flavor (the
        // block_on thread holds the core) is local; on the multi-thread flavor `block_on` is
        // not a worker, so it is remote.
        let outer_remote = if name == "multi_thread" { 1 } else { 0 };
        assert_eq!(metrics.spawned_tasks_count(), (REMOTE + 1 + LOCAL) as u64, "{name}");
        assert_eq!(metrics.remote_schedule_count(), (REMOTE + outer_remote) as u64, "{name}");
        assert_eq!(metrics.num_alive_tasks(), 0, "{name}: every task terminated");
    }
}

#[test]
fn num_alive_tasks_follows_spawns_and_terminations() {
    for (name, rt) in flavors() {
        let metrics = rt.handle().metrics();
        let (tx, rx) = weft::sync::watch::channel(false);
        let started = Arc::new(AtomicUsize::new(0));
        let joins: Vec<_> = (0..5)
            .map(|_| {
                let mut rx = rx.clone();
                let started = started.clone();
                rt.spawn(async move {
                    started.fetch_add(1, SeqCst);
                    while !*rx.borrow_and_update() {
                        rx.changed().await.unwrap();
                    }
                })
            })
            .collect();
        assert_eq!(metrics.num_alive_tasks(), 5, "{name}");
        rt.block_on(async {
            while started.load(SeqCst) < 5 {
                weft::task::yield_now().await;
            }
            tx.send(true).unwrap();
            for j in joins {
                j.await.unwrap();
            }
        });
        eventually("all tasks counted as terminated", || metrics.num_alive_tasks() == 0);
        drop(rt);
        assert_eq!(metrics.num_alive_tasks(), 0, "{name}");
    }
}

#[test]
fn poll_count_is_exact_on_the_current_thread_flavor() {
    let rt = ct();
    let metrics = rt.handle().metrics();
    const N: usize = 10;
    rt.block_on(async {
        let joins: Vec<_> = (0..N).map(|_| weft::spawn(async { weft::task::yield_now().await })).collect();
        for j in joins {
            j.await.unwrap();
        }
    });
    // Each task: one poll that yields, one that completes. The block_on future is no task.
    assert_eq!(metrics.worker_poll_count(0), 2 * N as u64);
    // Spawns and yields from the block_on thread go to the local queue.
    assert_eq!(metrics.worker_local_schedule_count(0), 2 * N as u64);
    assert_eq!(metrics.num_workers(), 1);
    assert_eq!(metrics.worker_steal_count(0), 0);
    assert_eq!(metrics.worker_overflow_count(0), 0);
}

#[test]
fn a_steal_counts_on_the_thief() {
    let rt = mt(2);
    let metrics = rt.handle().metrics();
    const N: usize = 10;
    rt.block_on(async {
        weft::spawn(async {
            let ran = Arc::new(AtomicUsize::new(0));
            for _ in 0..N {
                let ran = ran.clone();
                weft::spawn(async move {
                    ran.fetch_add(1, SeqCst);
                });
            }
            // Hold this worker: the only way the tasks on its queue can run is a steal.
            let deadline = Instant::now() + Duration::from_secs(60);
            while ran.load(SeqCst) < N {
                assert!(Instant::now() < deadline, "the idle worker never stole the queued tasks");
                std::thread::yield_now();
            }
        })
        .await
        .unwrap();
    });
    drop(rt);
    let mut steals: Vec<u64> = (0..2).map(|w| metrics.worker_steal_count(w)).collect();
    steals.sort();
    assert_eq!(steals, vec![0, N as u64], "every task was stolen by the one idle worker");
    let thief = (0..2).find(|&w| metrics.worker_steal_count(w) > 0).unwrap();
    let ops = metrics.worker_steal_operations(thief);
    assert!((1..=N as u64).contains(&ops), "steal operations {ops}");
    assert_eq!(metrics.worker_steal_operations(1 - thief), 0);
}

#[test]
fn local_queue_overflow_is_counted_exactly() {
    // One worker: nobody steals, so the queue (256 slots) overflows at the 257th push and
    // then every 129 pushes (half the queue moves to the global queue each time).
    let rt = mt(1);
    let metrics = rt.handle().metrics();
    rt.block_on(async {
        weft::spawn(async {
            let joins: Vec<_> = (0..1000).map(|_| weft::spawn(async {})).collect();
            for j in joins {
                j.await.unwrap();
            }
        })
        .await
        .unwrap();
    });
    drop(rt);
    assert_eq!(metrics.worker_overflow_count(0), 6);
    assert_eq!(metrics.spawned_tasks_count(), 1001);
    assert!(metrics.worker_local_schedule_count(0) >= 1000);
}

#[test]
fn budget_forced_yields_are_counted() {
    for (name, rt) in flavors() {
        let metrics = rt.handle().metrics();
        rt.block_on(async {
            weft::spawn(async {
                let (tx, mut rx) = weft::sync::mpsc::unbounded_channel();
                for i in 0..300 {
                    tx.send(i).unwrap();
                }
                // 300 ready receives: the budget (128) runs out twice.
                for _ in 0..300 {
                    rx.recv().await.unwrap();
                }
            })
            .await
            .unwrap();
        });
        drop(rt);
        assert_eq!(metrics.budget_forced_yield_count(), 2, "{name}");
    }
}

#[test]
fn park_and_unpark_pair_up_after_shutdown() {
    for (name, rt) in flavors() {
        let metrics = rt.handle().metrics();
        rt.block_on(async {
            for _ in 0..3 {
                weft::spawn(weft::time::sleep(Duration::from_millis(2))).await.unwrap();
            }
        });
        drop(rt);
        let parks: u64 = (0..metrics.num_workers()).map(|w| metrics.worker_park_count(w)).sum();
        assert!(parks >= 1, "{name}: waiting for timers parks");
        for w in 0..metrics.num_workers() {
            let pu = metrics.worker_park_unpark_count(w);
            assert_eq!(pu, 2 * metrics.worker_park_count(w), "{name} worker {w}: every park was followed by an unpark");
            assert!(metrics.worker_noop_count(w) <= metrics.worker_park_count(w));
        }
    }
}

#[test]
fn busy_duration_and_mean_poll_time_cover_a_slow_poll() {
    for (name, rt) in flavors() {
        let metrics = rt.handle().metrics();
        rt.block_on(async {
            weft::spawn(async { std::thread::sleep(Duration::from_millis(20)) }).await.unwrap();
        });
        drop(rt);
        let busy: Duration = (0..metrics.num_workers()).map(|w| metrics.worker_total_busy_duration(w)).sum();
        assert!(busy >= Duration::from_millis(20), "{name}: busy {busy:?}");
        let slowest = (0..metrics.num_workers()).map(|w| metrics.worker_mean_poll_time(w)).max().unwrap();
        assert!(slowest >= Duration::from_millis(1), "{name}: mean poll time {slowest:?}");
    }
}

#[test]
fn poll_time_histogram_buckets_every_poll() {
    let rt =
        weft::runtime::Builder::new_current_thread().enable_all().enable_metrics_poll_time_histogram().build().unwrap();
    let metrics = rt.handle().metrics();
    assert!(metrics.poll_time_histogram_enabled());
    rt.block_on(async {
        weft::spawn(async { std::thread::sleep(Duration::from_millis(5)) }).await.unwrap();
        for _ in 0..9 {
            weft::spawn(async {}).await.unwrap();
        }
    });
    drop(rt);
    let n = metrics.poll_time_histogram_num_buckets();
    let counts: Vec<u64> = (0..n).map(|b| metrics.poll_time_histogram_bucket_count(0, b)).collect();
    assert_eq!(counts.iter().sum::<u64>(), 10, "one sample per poll");
    // The 5 ms poll is in a bucket starting at or above 4 ms (buckets are 25% wide).
    let slow = (0..n).filter(|&b| counts[b] > 0).max().unwrap();
    assert!(metrics.poll_time_histogram_bucket_range(slow).end > Duration::from_millis(5));
    assert!(metrics.poll_time_histogram_bucket_range(slow).start >= Duration::from_millis(4));
    assert!(metrics.worker_mean_poll_time(0) > Duration::ZERO);

    // Off by default: no samples.
    let rt = ct();
    let metrics = rt.handle().metrics();
    rt.block_on(async { weft::spawn(async {}).await.unwrap() });
    assert!(!metrics.poll_time_histogram_enabled() || std::env::var("WEFT_METRICS_POLL_TIME_HISTOGRAM").is_ok());
}

#[test]
fn blocking_pool_gauges_and_queue_latency() {
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(1).max_blocking_threads(1).build().unwrap();
    let metrics = rt.handle().metrics();
    let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = Arc::new(std::sync::Mutex::new(release_rx));
    let _enter = rt.enter();
    let joins: Vec<_> = (0..3)
        .map(|_| {
            let (started, release) = (started_tx.clone(), release_rx.clone());
            weft::task::spawn_blocking(move || {
                started.send(()).unwrap();
                release.lock().unwrap().recv().unwrap();
            })
        })
        .collect();
    started_rx.recv().unwrap();
    // One thread (the maximum) runs the first closure; the other two wait in the queue.
    assert_eq!(metrics.num_blocking_threads(), 1);
    assert_eq!(metrics.num_idle_blocking_threads(), 0);
    assert_eq!(metrics.blocking_queue_depth(), 2);
    for _ in 0..3 {
        release_tx.send(()).unwrap();
    }
    rt.block_on(async {
        for j in joins {
            j.await.unwrap();
        }
    });
    assert_eq!(metrics.blocking_queue_depth(), 0);
    assert!(metrics.blocking_queue_latency_histogram_enabled());
    let samples: u64 = (0..metrics.poll_time_histogram_num_buckets())
        .map(|b| metrics.blocking_queue_latency_histogram_bucket_count(b))
        .sum();
    assert_eq!(samples, 3, "one queue-latency sample per closure");
}

#[test]
fn io_driver_counts_registrations_and_readiness() {
    let rt = mt(1);
    let metrics = rt.handle().metrics();
    rt.block_on(async {
        use weft::io::{AsyncReadExt, AsyncWriteExt};
        let listener = weft::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = weft::spawn(async move {
            let mut s = weft::net::TcpStream::connect(addr).await.unwrap();
            s.write_all(b"ping").await.unwrap();
        });
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4];
        conn.read_exact(&mut buf).await.unwrap();
        client.await.unwrap();
    });
    // Listener, client socket, accepted socket — all dropped by now.
    assert_eq!(metrics.io_driver_fd_registered_count(), 3);
    assert_eq!(metrics.io_driver_fd_deregistered_count(), 3);
    assert!(metrics.io_driver_ready_count() >= 1);
}

#[test]
fn timers_live_and_fired() {
    let rt = ct();
    let metrics = rt.handle().metrics();
    rt.block_on(async {
        let sleepers: Vec<_> = (0..3).map(|_| weft::spawn(weft::time::sleep(Duration::from_secs(3600)))).collect();
        // Let each sleeper register its timer.
        weft::task::yield_now().await;
        weft::task::yield_now().await;
        assert_eq!(metrics.num_live_timers(), 3);
        for s in &sleepers {
            s.abort();
        }
        for s in sleepers {
            assert!(s.await.unwrap_err().is_cancelled());
        }
        assert_eq!(metrics.num_live_timers(), 0);
        weft::time::sleep(Duration::from_millis(1)).await;
    });
    assert_eq!(metrics.timers_fired_count(), 1);
    assert_eq!(metrics.num_live_timers(), 0);
}

#[test]
fn worker_index_out_of_range_panics_with_a_clear_message() {
    let rt = ct();
    let metrics = rt.handle().metrics();
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| metrics.worker_poll_count(1))).unwrap_err();
    let msg = err.downcast_ref::<String>().unwrap();
    assert!(msg.contains("worker index 1 out of range"), "{msg}");
}

#[test]
fn runtime_metrics_is_send_sync_clone() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug + 'static>() {}
    check::<weft::runtime::RuntimeMetrics>();
}

#[test]
fn dump_tasks_lists_idle_tasks_with_their_spawn_location() {
    for (name, rt) in flavors() {
        let (tx, rx) = weft::sync::watch::channel(false);
        let started = Arc::new(AtomicUsize::new(0));
        let waiter = |mut rx: weft::sync::watch::Receiver<bool>, started: Arc<AtomicUsize>| async move {
            started.fetch_add(1, SeqCst);
            while !*rx.borrow_and_update() {
                rx.changed().await.unwrap();
            }
        };
        let outside_line = line!() + 1;
        let a = rt.spawn(waiter(rx.clone(), started.clone()));
        let (inside_line, b) = rt.block_on(async {
            let line = line!() + 1;
            let b = weft::spawn(waiter(rx.clone(), started.clone()));
            while started.load(SeqCst) < 2 {
                weft::task::yield_now().await;
            }
            (line, b)
        });
        // Both went idle waiting on the channel; wait until no poll is in progress.
        eventually("both tasks idle", || {
            let d = rt.handle().dump_tasks();
            d.len() == 2 && d.iter().all(|t| t.state == weft::runtime::TaskState::Idle)
        });
        let dump = rt.handle().dump_tasks();
        let mut lines: Vec<u32> = dump.iter().map(|t| t.spawn_location.line()).collect();
        lines.sort();
        assert_eq!(lines, vec![outside_line, inside_line], "{name}: {dump:?}");
        assert!(dump.iter().all(|t| t.spawn_location.file().ends_with("metrics.rs")), "{name}: {dump:?}");
        let mut ids: Vec<_> = dump.iter().map(|t| t.id).collect();
        ids.sort();
        let mut want = vec![a.id(), b.id()];
        want.sort();
        assert_eq!(ids, want, "{name}");
        tx.send(true).unwrap();
        rt.block_on(async {
            a.await.unwrap();
            b.await.unwrap();
        });
        eventually("completed tasks leave the dump", || rt.handle().dump_tasks().is_empty());
    }
}
