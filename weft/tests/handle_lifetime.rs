//! The multi-thread scheduler's shared handle lives exactly as long as something needs it:
//! tasks spawned on workers and from outside, freed on a worker, on a plain thread, or by a
//! waker after the runtime is gone, each hold it until freed, and once all are gone it is
//! freed (with it the I/O driver's epoll fd and eventfd, which is what this test observes).
//! A reference taken and never given back leaks those fds; one given back twice frees the
//! handle under live tasks (valgrind reports both). Its own test binary (one test), because
//! `/proc/self/fd` counts the whole process.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Poll, Waker};

use weft::runtime::Builder;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Parks once, handing its waker out, then completes on the next poll.
async fn park_once(out: std::sync::mpsc::Sender<Waker>) {
    let mut parked = false;
    std::future::poll_fn(|cx| {
        if parked {
            return Poll::Ready(());
        }
        parked = true;
        out.send(cx.waker().clone()).unwrap();
        Poll::Pending
    })
    .await
}

#[test]
fn scheduler_handle_is_freed_whoever_frees_the_last_task() {
    // Warm-up runtime: lazily created process-wide fds are not leaks.
    drop(Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap());
    let before = open_fds();
    for round in 0..3 {
        let rt = Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let (waker_tx, waker_rx) = std::sync::mpsc::channel();
        let outside = rt.block_on({
            let ran = ran.clone();
            async move {
                // 50 parents spawned from outside the workers, each spawning 40 children on its
                // worker: half joined there, half handed out to be freed elsewhere.
                let parents: Vec<_> = (0..50)
                    .map(|_| {
                        let ran = ran.clone();
                        weft::spawn(async move {
                            let mut kept = Vec::new();
                            for i in 0..40 {
                                let ran = ran.clone();
                                let h = weft::spawn(async move {
                                    ran.fetch_add(1, SeqCst);
                                    i
                                });
                                if i % 2 == 0 {
                                    assert_eq!(h.await.unwrap(), i);
                                } else {
                                    kept.push(h);
                                }
                            }
                            kept
                        })
                    })
                    .collect();
                let mut outside = Vec::new();
                for p in parents {
                    outside.extend(p.await.unwrap());
                }
                // The handed-out children are not joined: wait until every one has run, so
                // the plain thread below frees *completed* tasks (and the count is exact).
                while ran.load(SeqCst) < 50 * 40 {
                    weft::task::yield_now().await;
                }
                // Tasks whose wakers outlive the runtime (freed after it is dropped).
                for _ in 0..10 {
                    drop(weft::spawn(park_once(waker_tx.clone())));
                }
                outside
            }
        });
        let wakers: Vec<Waker> = (0..10).map(|_| waker_rx.recv().unwrap()).collect();
        assert_eq!(ran.load(SeqCst), 50 * 40, "round {round}");
        // Completed children, freed on a plain thread by dropping their handles there.
        std::thread::spawn(move || drop(outside)).join().unwrap();
        drop(rt);
        // A wake after shutdown reaches a closed scheduler; the last waker frees the task.
        for w in wakers {
            w.wake();
        }
        assert_eq!(open_fds(), before, "round {round}: the scheduler handle (and its driver fds) was freed");
    }
}
