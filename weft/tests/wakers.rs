//! Wakers: Send + Sync, usable from any thread; no lost wake-ups under stress.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn public_types_are_send_and_sync() {
    assert_send_sync::<Waker>();
    assert_send_sync::<weft::task::JoinHandle<u32>>();
    assert_send_sync::<weft::task::AbortHandle>();
    assert_send_sync::<weft::task::JoinError>();
    assert_send_sync::<weft::runtime::Handle>();
    assert_send_sync::<weft::runtime::Runtime>();
    fn assert_send<T: Send>() {}
    assert_send::<weft::time::Sleep>();
    assert_send::<weft::task::JoinSet<u32>>();
}

/// A one-slot "channel": the producer thread sets the flag and wakes the stored waker.
#[derive(Default)]
struct Signal {
    ready: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

struct WaitSignal(Arc<Signal>);

impl Future for WaitSignal {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.ready.swap(false, SeqCst) {
            return Poll::Ready(());
        }
        *self.0.waker.lock().unwrap() = Some(cx.waker().clone());
        // Re-check after publishing the waker (the producer may have set it in between).
        if self.0.ready.swap(false, SeqCst) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Signal {
    fn fire(&self) {
        self.ready.store(true, SeqCst);
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }
}

/// `rounds` ping-pongs between a task and a plain OS thread; a lost wake-up hangs (the test
/// harness timeout would catch it), a double count fails the assertion.
fn ping_pong_with_thread(rt: &weft::runtime::Runtime, rounds: usize) {
    let ping = Arc::new(Signal::default());
    let pong = Arc::new(Signal::default());
    let count = Arc::new(AtomicUsize::new(0));
    let (p2, q2, c2) = (ping.clone(), pong.clone(), count.clone());
    let task = rt.spawn(async move {
        for _ in 0..rounds {
            WaitSignal(p2.clone()).await;
            c2.fetch_add(1, SeqCst);
            q2.fire();
        }
    });
    let thread = std::thread::spawn(move || {
        for _ in 0..rounds {
            ping.fire();
            // Spin-wait for the pong (no runtime here); a lost wake-up fails instead of hanging.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !pong.ready.swap(false, SeqCst) {
                assert!(std::time::Instant::now() < deadline, "lost wake-up: no pong in 30 s");
                std::hint::spin_loop();
            }
        }
    });
    thread.join().unwrap();
    rt.block_on(task).unwrap();
    assert_eq!(count.load(SeqCst), rounds);
}

#[test]
fn cross_thread_wake_stress_no_lost_wakeups_multi_thread() {
    let rt = support::mt(2);
    ping_pong_with_thread(&rt, 200_000);
}

#[test]
fn cross_thread_wake_stress_no_lost_wakeups_current_thread() {
    let rt = support::ct();
    // The current-thread runtime only runs tasks inside block_on, so drive it from here
    // while the OS thread pings.
    let ping = Arc::new(Signal::default());
    let pong = Arc::new(Signal::default());
    let rounds = 200_000;
    let (p2, q2) = (ping.clone(), pong.clone());
    let thread = std::thread::spawn(move || {
        for _ in 0..rounds {
            p2.fire();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !q2.ready.swap(false, SeqCst) {
                assert!(std::time::Instant::now() < deadline, "lost wake-up: no pong in 30 s");
                std::hint::spin_loop();
            }
        }
    });
    let n = rt.block_on(async move {
        let h = weft::spawn(async move {
            for _ in 0..rounds {
                WaitSignal(ping.clone()).await;
                pong.fire();
            }
            rounds
        });
        h.await.unwrap()
    });
    thread.join().unwrap();
    assert_eq!(n, rounds);
}

#[test]
fn million_wakes_from_many_threads_all_observed() {
    // 4 OS threads each wake one task 250k times; the task counts how often it was polled
    // after a wake. No wake may be lost: the final state must be observed.
    let rt = support::mt(2);
    let sig = Arc::new(Signal::default());
    let s2 = sig.clone();
    let waiter = rt.spawn(async move {
        let mut polls = 0usize;
        loop {
            WaitSignal(s2.clone()).await;
            polls += 1;
            if DONE.load(SeqCst) {
                break polls;
            }
        }
    });
    static DONE: AtomicBool = AtomicBool::new(false);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let s = sig.clone();
            std::thread::spawn(move || {
                for _ in 0..250_000 {
                    s.fire();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    DONE.store(true, SeqCst);
    sig.fire(); // the final wake must reach the task
    let polls = rt
        .block_on(async { weft::time::timeout(std::time::Duration::from_secs(30), waiter).await })
        .expect("lost wake-up: the final wake never reached the task")
        .unwrap();
    assert!(polls >= 1);
}

#[test]
fn waker_outlives_runtime_and_wake_is_noop() {
    let rt = support::mt(2);
    let stash: Arc<Mutex<Option<Waker>>> = Arc::default();
    let s = stash.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    rt.spawn(async move {
        std::future::poll_fn(|cx| {
            *s.lock().unwrap() = Some(cx.waker().clone());
            tx.send(()).ok();
            Poll::<()>::Pending
        })
        .await
    });
    rx.recv().unwrap();
    drop(rt);
    let w = stash.lock().unwrap().take().unwrap();
    let w2 = w.clone();
    w.wake_by_ref();
    w.wake();
    std::thread::spawn(move || w2.wake()).join().unwrap();
}
