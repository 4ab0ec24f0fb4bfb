//! Panics, abort, detach, JoinSet, ids: exact outcomes and counts.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use support::{DropCounter, PendingForever};
use weft::task::{JoinSet, LocalSet};

#[test]
fn panicking_task_returns_join_error_with_payload_and_worker_survives() {
    for (name, rt) in support::flavors() {
        rt.block_on(async {
            for i in 0..200u32 {
                let err = weft::spawn(async move {
                    if i < 1000 {
                        std::panic::panic_any(i);
                    }
                })
                .await
                .expect_err(name);
                assert!(err.is_panic() && !err.is_cancelled());
                assert_eq!(*err.into_panic().downcast::<u32>().unwrap(), i);
            }
            // The workers are still alive and running tasks.
            assert_eq!(weft::spawn(async { 1 + 1 }).await.unwrap(), 2);
        });
    }
}

#[test]
fn silenced_panics_still_reach_the_join_handle() {
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).silence_task_panics(true).build().unwrap();
    let n = rt.block_on(async {
        let hs: Vec<_> = (0..100).map(|_| weft::spawn(async { panic!("quiet") })).collect();
        let mut n = 0;
        for h in hs {
            n += h.await.unwrap_err().is_panic() as usize;
        }
        n
    });
    assert_eq!(n, 100);
}

#[test]
fn abort_idle_task_drops_future_once_and_reports_cancelled() {
    for (name, rt) in support::flavors() {
        let drops = DropCounter::new();
        let polls = Arc::new(AtomicUsize::new(0));
        let fut = PendingForever { polls: polls.clone(), _token: drops.token() };
        rt.block_on(async {
            let h = weft::spawn(fut);
            // Let it run once and go idle.
            while polls.load(SeqCst) == 0 {
                weft::task::yield_now().await;
            }
            h.abort();
            h.abort(); // idempotent
            let err = h.await.expect_err(name);
            assert!(err.is_cancelled(), "{name}");
        });
        assert_eq!(drops.count(), 1, "{name}");
        assert_eq!(polls.load(SeqCst), 1, "{name}: aborted task must not be polled again");
    }
}

#[test]
fn abort_before_first_poll_never_polls() {
    let rt = support::ct();
    let drops = DropCounter::new();
    let polls = Arc::new(AtomicUsize::new(0));
    let fut = PendingForever { polls: polls.clone(), _token: drops.token() };
    rt.block_on(async {
        let h = weft::spawn(fut);
        h.abort_handle().abort();
        assert!(h.await.unwrap_err().is_cancelled());
    });
    assert_eq!(polls.load(SeqCst), 0);
    assert_eq!(drops.count(), 1);
}

#[test]
fn abort_from_inside_running_task_cancels_at_next_yield() {
    let rt = support::mt(2);
    let drops = DropCounter::new();
    let token = drops.token();
    let (tx, rx) = std::sync::mpsc::channel::<weft::task::AbortHandle>();
    let res = rt.block_on(async move {
        let h = weft::spawn(async move {
            let _t = token;
            let me: weft::task::AbortHandle = rx.recv().unwrap();
            me.abort();
            loop {
                weft::task::yield_now().await;
            }
        });
        tx.send(h.abort_handle()).unwrap();
        h.await
    });
    assert!(res.unwrap_err().is_cancelled());
    assert_eq!(drops.count(), 1);
}

#[test]
fn abort_completed_task_keeps_output() {
    let rt = support::ct();
    rt.block_on(async {
        let h = weft::spawn(async { 9 });
        while !h.is_finished() {
            weft::task::yield_now().await;
        }
        h.abort();
        assert_eq!(h.await.unwrap(), 9);
    });
}

#[test]
fn dropping_join_handle_detaches_task() {
    for (name, rt) in support::flavors() {
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        rt.block_on(async move {
            let (tx, rx) = weft::sync::oneshot::channel();
            drop(weft::spawn(async move {
                weft::time::sleep(Duration::from_millis(5)).await;
                d.fetch_add(1, SeqCst);
                tx.send(()).unwrap();
            }));
            // The detached task reports back itself (no guess at how long it needs).
            weft::time::timeout(Duration::from_secs(60), rx).await.expect("detached task never finished").unwrap();
        });
        assert_eq!(done.load(SeqCst), 1, "{name}: detached task ran to completion");
    }
}

#[test]
fn output_of_detached_task_is_dropped_exactly_once() {
    let rt = support::mt(2);
    let drops = DropCounter::new();
    let d = drops.clone();
    rt.block_on(async move {
        let hs: Vec<_> = (0..1000)
            .map(|_| {
                let t = d.token();
                weft::spawn(async move { t })
            })
            .collect();
        // Drop half the handles (detach) and join the other half.
        let mut joined = Vec::new();
        for (i, h) in hs.into_iter().enumerate() {
            if i % 2 == 0 {
                drop(h)
            } else {
                joined.push(h)
            }
        }
        for h in joined {
            drop(h.await.unwrap());
        }
    });
    drop(rt);
    assert_eq!(drops.count(), 1000);
}

#[test]
fn task_ids_are_unique_and_visible_inside() {
    let rt = support::mt(2);
    let ids = rt.block_on(async {
        let hs: Vec<_> = (0..1000).map(|_| weft::spawn(async { weft::task::id() })).collect();
        let mut ids = Vec::new();
        for h in hs {
            let expected = h.id();
            let got = h.await.unwrap();
            assert_eq!(expected, got);
            ids.push(got);
        }
        ids
    });
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len());
    assert!(weft::task::try_id().is_none());
}

#[test]
fn join_set_returns_in_completion_order_and_aborts_on_drop() {
    let rt = support::mt(2);
    rt.block_on(async {
        // Completion is driven explicitly (one release per join) rather than by sleeps of
        // different lengths: under valgrind or a loaded CI box two sleeps 10 ms apart can
        // finish in the same scheduler tick, which made the order a race, not a property.
        let mut set = JoinSet::new();
        let mut release = std::collections::HashMap::new();
        for tag in [30u64, 10, 20] {
            let (tx, rx) = weft::sync::oneshot::channel::<()>();
            release.insert(tag, tx);
            set.spawn(async move {
                rx.await.unwrap();
                tag
            });
        }
        assert_eq!(set.len(), 3);
        let mut order = Vec::new();
        for tag in [10u64, 20, 30] {
            release.remove(&tag).unwrap().send(()).unwrap();
            order.push(set.join_next().await.unwrap().unwrap());
        }
        assert_eq!(order, vec![10, 20, 30]);
        assert!(set.join_next().await.is_none());
        assert!(set.is_empty());
    });
    let drops = DropCounter::new();
    let polls = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let mut set = JoinSet::new();
        for _ in 0..10 {
            set.spawn(PendingForever { polls: polls.clone(), _token: drops.token() });
        }
        while polls.load(SeqCst) < 10 {
            weft::task::yield_now().await;
        }
        drop(set);
        // Aborted tasks are dropped by the workers shortly after (deadline generous for valgrind).
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while drops.count() != 10 && std::time::Instant::now() < deadline {
            weft::time::sleep(Duration::from_millis(1)).await;
        }
    });
    assert_eq!(drops.count(), 10);
}

#[test]
fn join_set_many_tasks_and_join_all() {
    let rt = support::mt(2);
    let total: u64 = rt.block_on(async {
        let mut set = JoinSet::new();
        for i in 0..10_000u64 {
            set.spawn(async move { i });
        }
        set.join_all().await.into_iter().sum()
    });
    assert_eq!(total, 10_000 * 9_999 / 2);
}

#[test]
fn join_set_shutdown_cancels_everything() {
    let rt = support::ct();
    rt.block_on(async {
        let mut set = JoinSet::new();
        for _ in 0..5 {
            set.spawn(std::future::pending::<()>());
        }
        set.shutdown().await;
        assert!(set.is_empty());
        assert!(set.try_join_next().is_none());
    });
}

#[test]
fn local_set_runs_non_send_tasks() {
    use std::rc::Rc;
    for (name, rt) in support::flavors() {
        let local = LocalSet::new();
        let out = local.block_on(&rt, async {
            let shared = Rc::new(std::cell::Cell::new(0));
            let mut hs = Vec::new();
            for i in 1..=100 {
                let s = shared.clone();
                hs.push(weft::task::spawn_local(async move {
                    weft::task::yield_now().await;
                    s.set(s.get() + i);
                }));
            }
            for h in hs {
                h.await.unwrap();
            }
            // A timer woken from the driver still reaches a local task.
            let s = shared.clone();
            weft::task::spawn_local(async move {
                weft::time::sleep(Duration::from_millis(2)).await;
                s.set(s.get() + 1);
            })
            .await
            .unwrap();
            shared.get()
        });
        assert_eq!(out, 5051, "{name}");
    }
}

#[test]
fn spawn_local_outside_local_set_panics_with_guidance() {
    let rt = support::ct();
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async {
            drop(weft::task::spawn_local(async {}));
        })
    }));
    let payload = res.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("LocalSet"), "{msg}");
}

#[test]
fn awaiting_local_set_runs_all_its_tasks() {
    let rt = support::ct();
    let count = std::rc::Rc::new(std::cell::Cell::new(0));
    let local = LocalSet::new();
    for _ in 0..10 {
        let c = count.clone();
        local.spawn_local(async move {
            weft::task::yield_now().await;
            c.set(c.get() + 1);
        });
    }
    rt.block_on(local);
    assert_eq!(count.get(), 10);
}

#[weft::test]
async fn macro_test_defaults_to_current_thread() {
    let h = weft::runtime::Handle::current();
    assert_eq!(h.runtime_flavor(), weft::runtime::RuntimeFlavor::CurrentThread);
}

#[weft::test(flavor = "multi_thread", worker_threads = 3)]
async fn macro_test_multi_thread() {
    let h = weft::runtime::Handle::current();
    assert_eq!(h.runtime_flavor(), weft::runtime::RuntimeFlavor::MultiThread);
    assert_eq!(h.num_workers(), 3);
    assert_eq!(weft::spawn(async { 3 }).await.unwrap(), 3);
}

/// Records `task::try_id()` when dropped.
struct RecordsIdOnDrop(Arc<std::sync::Mutex<Vec<Option<weft::task::Id>>>>);

impl Drop for RecordsIdOnDrop {
    fn drop(&mut self) {
        self.0.lock().unwrap().push(weft::task::try_id());
    }
}

/// A task's future and output are dropped with the task's id current, on every path: the
/// future at completion and at abort, the output by the task (handle gone first) or by the
/// `JoinHandle` (dropped after completion). tokio's `task_id` tests check the same.
#[test]
fn futures_and_outputs_are_dropped_with_their_task_id_current() {
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        // Future dropped at completion.
        let guard = RecordsIdOnDrop(seen.clone());
        let h = weft::spawn(async move {
            let _keep = &guard;
        });
        let completed_id = h.id();
        h.await.unwrap();
        // Future dropped at abort.
        let guard = RecordsIdOnDrop(seen.clone());
        let h = weft::spawn(async move {
            let _keep = &guard;
            std::future::pending::<()>().await
        });
        let aborted_id = h.id();
        weft::task::yield_now().await;
        h.abort();
        assert!(h.await.unwrap_err().is_cancelled());
        // Output dropped by the task: its handle was dropped before it completed.
        let (tx, rx) = weft::sync::oneshot::channel::<()>();
        let out = RecordsIdOnDrop(seen.clone());
        let h = weft::spawn(async move {
            let _ = rx.await;
            out
        });
        let detached_id = h.id();
        drop(h);
        tx.send(()).unwrap();
        // Output dropped by the JoinHandle, after completion.
        let out = RecordsIdOnDrop(seen.clone());
        let h = weft::spawn(async move { out });
        let joined_id = h.id();
        while !h.is_finished() {
            weft::task::yield_now().await;
        }
        for _ in 0..10 {
            weft::task::yield_now().await; // let the detached task finish too
        }
        drop(h);
        let got = seen.lock().unwrap().clone();
        assert_eq!(got, vec![Some(completed_id), Some(aborted_id), Some(detached_id), Some(joined_id)]);
    });
}

/// A `LocalSet` kept in a `thread_local!` is dropped while its thread exits, possibly after
/// weft's own thread-locals: it must cancel its tasks without touching them (this aborted the
/// process: "thread local panicked on drop"; tokio's `localset_in_thread_local`).
#[test]
fn a_local_set_in_a_thread_local_is_dropped_at_thread_exit() {
    thread_local! {
        static SET: LocalSet = LocalSet::new();
    }
    let drops = DropCounter::new();
    let token = drops.token();
    std::thread::spawn(move || {
        let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        SET.with(|set| {
            set.spawn_local(async {});
            rt.block_on(set.run_until(async {}));
            set.spawn_local(async move {
                let _token = token;
                std::future::pending::<()>().await
            });
        });
    })
    .join()
    .expect("the thread exited cleanly");
    assert_eq!(drops.count(), 1, "the pending task's future was dropped at thread exit");
}

/// `AbortHandle::wake` polls an idle task again (here one that registered no waker at all),
/// on both flavors, and does nothing to a completed task.
#[test]
fn abort_handle_wake_repolls_an_idle_task_and_ignores_a_finished_one() {
    for rt in [support::ct(), support::mt(2)] {
        rt.block_on(async {
            let polls = Arc::new(AtomicUsize::new(0));
            let p = polls.clone();
            // Pending twice without registering its waker: only `wake` can bring it back.
            let h = weft::spawn(std::future::poll_fn(move |_| {
                if p.fetch_add(1, SeqCst) < 2 {
                    std::task::Poll::Pending
                } else {
                    std::task::Poll::Ready(7)
                }
            }));
            let abort = h.abort_handle();
            for want in 1..=2 {
                while polls.load(SeqCst) < want {
                    weft::task::yield_now().await;
                }
                // Still idle after yielding: nothing else wakes it.
                for _ in 0..10 {
                    weft::task::yield_now().await;
                }
                assert_eq!(polls.load(SeqCst), want, "polled without a wake");
                abort.wake();
            }
            assert_eq!(h.await.unwrap(), 7);
            assert_eq!(polls.load(SeqCst), 3);
            abort.wake();
            assert!(abort.is_finished());
        });
    }
}
