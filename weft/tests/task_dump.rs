//! The task dump's per-task statistics (`Handle::dump_tasks`): exact poll counts, poll time
//! only when polls are timed, the running state, and ages that only grow. Timing enters only
//! as lower bounds (a 20 ms `sleep` takes at least 20 ms, under valgrind too); every wait is a
//! property polled with a generous deadline.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{ct, flavors, mt};
use weft::runtime::{TaskInfo, TaskState};

/// Waits (up to a minute, for valgrind) until `cond` holds; panics with `what` otherwise.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "never became true: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn only(rt: &weft::runtime::Runtime) -> TaskInfo {
    let dump = rt.handle().dump_tasks();
    assert_eq!(dump.len(), 1, "{dump:?}");
    dump[0].clone()
}

#[test]
fn poll_count_is_exact_one_poll_per_message() {
    for (name, rt) in flavors() {
        let (tx, mut rx) = weft::sync::mpsc::unbounded_channel::<()>();
        let handled = Arc::new(AtomicUsize::new(0));
        let h = handled.clone();
        let task = rt.spawn(async move {
            while rx.recv().await.is_some() {
                h.fetch_add(1, SeqCst);
            }
        });
        // The current-thread runtime polls its tasks only inside `block_on`.
        let drive = |rt: &weft::runtime::Runtime, until: &dyn Fn() -> bool| {
            rt.block_on(async {
                while !until() {
                    weft::time::sleep(Duration::from_millis(1)).await;
                }
            })
        };
        for sent in 0..5u64 {
            if sent > 0 {
                tx.send(()).unwrap();
            }
            let idle_after = || {
                let d = rt.handle().dump_tasks();
                handled.load(SeqCst) as u64 == sent && d.len() == 1 && d[0].state == TaskState::Idle
            };
            if name == "current_thread" {
                drive(&rt, &idle_after);
            }
            eventually("the task handled the message and went idle", idle_after);
            // The first poll plus one per message: each wake-up finds a message, handles it
            // and parks on the next `recv` within the same poll.
            assert_eq!(only(&rt).poll_count, sent + 1, "{name}");
        }
        drop(tx);
        rt.block_on(task).unwrap();
    }
}

#[test]
fn poll_time_is_reported_only_when_polls_are_timed() {
    let timed = weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .enable_metrics_poll_time_histogram()
        .build()
        .unwrap();
    for (rt, is_timed) in [(timed, true), (mt(1), false)] {
        let (tx, mut rx) = weft::sync::mpsc::unbounded_channel::<()>();
        let task = rt.spawn(async move {
            // Three polls, each blocking its worker for at least 20 ms.
            for _ in 0..2 {
                std::thread::sleep(Duration::from_millis(20));
                rx.recv().await.unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
            rx.recv().await;
        });
        for polls in 1..=3u64 {
            eventually("idle after the poll", || {
                let d = rt.handle().dump_tasks();
                d.len() == 1 && d[0].state == TaskState::Idle && d[0].poll_count == polls
            });
            if polls < 3 {
                tx.send(()).unwrap();
            }
        }
        let t = only(&rt);
        if is_timed {
            let total = t.total_poll_time.expect("timed runtime reports poll time");
            let max = t.max_poll_time.expect("timed runtime reports the longest poll");
            assert!(total >= Duration::from_millis(60), "{t:?}");
            assert!(max >= Duration::from_millis(20) && max <= total, "{t:?}");
        } else {
            assert_eq!((t.total_poll_time, t.max_poll_time), (None, None), "{t:?}");
        }
        drop(tx);
        rt.block_on(task).unwrap();
    }
}

#[test]
fn a_task_blocked_in_its_poll_is_running_with_its_spawn_location() {
    let rt = mt(2);
    let (entered_tx, entered_rx) = std::sync::mpsc::channel::<()>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let line = line!() + 1;
    let task = rt.spawn(async move {
        // Go idle once (joining the owned list), then block inside the second poll.
        weft::task::yield_now().await;
        entered_tx.send(()).unwrap();
        release_rx.recv().unwrap();
    });
    entered_rx.recv().unwrap();
    let t = only(&rt);
    assert_eq!(t.state, TaskState::Running, "{t:?}");
    assert_eq!(t.poll_count, 2, "{t:?}");
    assert_eq!((t.spawn_location.file(), t.spawn_location.line()), (file!(), line), "{t:?}");
    release_tx.send(()).unwrap();
    rt.block_on(task).unwrap();
    eventually("the finished task leaves the dump", || rt.handle().dump_tasks().is_empty());
}

#[test]
fn age_grows_at_least_as_fast_as_the_clock() {
    let rt = ct();
    let (tx, rx) = weft::sync::oneshot::channel::<()>();
    let task = rt.spawn(async move {
        let _ = rx.await;
    });
    rt.block_on(async {
        while rt.handle().dump_tasks().is_empty() {
            weft::task::yield_now().await;
        }
    });
    let first = only(&rt).age;
    std::thread::sleep(Duration::from_millis(50));
    let second = only(&rt).age;
    // Ages come from the kernel's coarse clock (one tick: 4 ms at HZ=250, 10 ms at HZ=100),
    // so the two readings may differ by up to a tick less than the time slept.
    assert!(second + Duration::from_millis(10) >= first + Duration::from_millis(50), "{first:?} then {second:?}");
    tx.send(()).unwrap();
    rt.block_on(task).unwrap();
}
