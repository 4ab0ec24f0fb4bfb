//! `broadcast`'s per-value claims, as tokio counts them: a value is dropped as soon as every
//! receiver subscribed when it was sent has received it, skipped it or been dropped, and
//! `Sender::len` counts the values still waiting for some receiver.

mod support;

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use weft::sync::broadcast::{self, error::RecvError, error::TryRecvError};

/// Live values (originals and clones) of the token.
fn live(token: &Arc<()>) -> usize {
    Arc::strong_count(token) - 1
}

#[test]
fn value_dropped_once_every_receiver_has_read_it() {
    let token = Arc::new(());
    let (tx, mut a) = broadcast::channel(4);
    let mut b = tx.subscribe();
    for _ in 0..3 {
        tx.send(token.clone()).unwrap();
    }
    assert_eq!((live(&token), tx.len(), tx.is_empty()), (3, 3, false));
    for _ in 0..3 {
        drop(a.try_recv().unwrap());
    }
    // `a` is done, `b` still has to see all three.
    assert_eq!((live(&token), tx.len(), a.len(), b.len()), (3, 3, 0, 3));
    drop(b.try_recv().unwrap());
    assert_eq!((live(&token), tx.len(), b.len()), (2, 2, 2));
    drop(b.try_recv().unwrap());
    drop(b.try_recv().unwrap());
    assert_eq!((live(&token), tx.len(), tx.is_empty()), (0, 0, true));
    assert_eq!(b.try_recv(), Err(TryRecvError::Empty));
    // Sending again fills the consumed slots; `len` counts only the new values.
    tx.send(token.clone()).unwrap();
    assert_eq!((live(&token), tx.len()), (1, 1));
}

#[test]
fn dropped_receiver_gives_back_what_it_had_not_read() {
    let token = Arc::new(());
    let (tx, mut a) = broadcast::channel(8);
    let b = tx.subscribe();
    for _ in 0..5 {
        tx.send(token.clone()).unwrap();
    }
    drop(a.try_recv().unwrap());
    drop(a.try_recv().unwrap());
    assert_eq!((live(&token), tx.len()), (5, 5));
    // `b` read nothing: its claims go, so the two values `a` read go with them.
    drop(b);
    assert_eq!((live(&token), tx.len()), (3, 3));
    drop(a);
    assert_eq!((live(&token), tx.len(), tx.is_empty()), (0, 0, true));
    assert!(tx.send(token.clone()).is_err());
    assert_eq!(live(&token), 0);
}

#[test]
fn later_subscribers_hold_no_claim_on_earlier_values() {
    let token = Arc::new(());
    let (tx, mut a) = broadcast::channel(4);
    tx.send(token.clone()).unwrap();
    let mut b = tx.subscribe();
    let c = a.resubscribe();
    assert_eq!((b.len(), c.len(), tx.len()), (0, 0, 1));
    drop(a.try_recv().unwrap());
    assert_eq!((live(&token), tx.len()), (0, 0));
    assert_eq!(b.try_recv(), Err(TryRecvError::Empty));
    drop(c);
}

#[test]
fn lagged_receiver_keeps_claims_only_on_values_still_held() {
    let token = Arc::new(());
    let (tx, mut a) = broadcast::channel(2);
    let mut b = tx.subscribe();
    for _ in 0..4 {
        tx.send(token.clone()).unwrap(); // the first two are overwritten (and dropped)
    }
    assert_eq!((live(&token), tx.len(), a.len(), b.len()), (2, 2, 4, 4));
    assert!(matches!(b.try_recv(), Err(TryRecvError::Lagged(2))));
    drop(b.try_recv().unwrap());
    drop(b.try_recv().unwrap());
    assert_eq!((live(&token), tx.len()), (2, 2));
    assert!(matches!(a.try_recv(), Err(TryRecvError::Lagged(2))));
    assert_eq!(a.len(), 2);
    drop(a.try_recv().unwrap());
    assert_eq!((live(&token), tx.len()), (1, 1));
    drop(a.try_recv().unwrap());
    assert_eq!((live(&token), tx.len()), (0, 0));
}

#[test]
fn dropped_lagged_receiver_gives_back_the_values_still_held() {
    let token = Arc::new(());
    let (tx, a) = broadcast::channel(2);
    let mut b = tx.subscribe();
    for _ in 0..5 {
        tx.send(token.clone()).unwrap();
    }
    assert!(matches!(b.try_recv(), Err(TryRecvError::Lagged(3))));
    drop(b.try_recv().unwrap());
    drop(b.try_recv().unwrap());
    assert_eq!(live(&token), 2);
    drop(a); // a lap behind: its claims on the two held values go
    assert_eq!((live(&token), tx.len()), (0, 0));
}

#[derive(Debug)]
struct PanicsOnClone(usize, Arc<AtomicUsize>);

impl Clone for PanicsOnClone {
    fn clone(&self) -> Self {
        assert_ne!(self.0, 0, "clone of a poisoned value");
        PanicsOnClone(self.0, self.1.clone())
    }
}

impl Drop for PanicsOnClone {
    fn drop(&mut self) {
        self.1.fetch_add(1, SeqCst);
    }
}

#[test]
fn panicking_clone_skips_the_value_and_gives_back_the_claim() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (tx, mut a) = broadcast::channel(4);
    let mut b = tx.subscribe();
    tx.send(PanicsOnClone(0, drops.clone())).unwrap();
    tx.send(PanicsOnClone(1, drops.clone())).unwrap();
    let res = panic::catch_unwind(AssertUnwindSafe(|| a.try_recv()));
    assert!(res.is_err());
    assert_eq!((drops.load(SeqCst), tx.len()), (0, 2)); // `b` still claims the first value
    assert_eq!(a.try_recv().map(|v| v.0), Ok(1));
    assert_eq!(drops.load(SeqCst), 1); // the clone `a` received
    let res = panic::catch_unwind(AssertUnwindSafe(|| b.try_recv()));
    assert!(res.is_err());
    assert_eq!((drops.load(SeqCst), tx.len()), (2, 1)); // the first value's last claim went
                                                        // The channel still works after the panics (its locks are not left poisoned for good).
    assert_eq!(b.try_recv().map(|v| v.0), Ok(1));
    assert_eq!((drops.load(SeqCst), tx.len()), (4, 0));
}

/// A value whose destructor sends on its own channel: dropping it under a slot lock or the
/// tail mutex would deadlock.
#[derive(Clone)]
struct SendsOnDrop(Option<broadcast::Sender<SendsOnDrop>>, u32);

impl Drop for SendsOnDrop {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(SendsOnDrop(None, self.1 + 1));
        }
    }
}

fn within_seconds(secs: u64, f: impl FnOnce() + Send + 'static) {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let th = std::thread::spawn(move || {
        f();
        let _ = done_tx.send(());
    });
    done_rx.recv_timeout(Duration::from_secs(secs)).expect("deadlocked: a value was dropped under a lock");
    th.join().unwrap();
}

#[test]
fn last_claim_drops_the_value_outside_the_locks() {
    within_seconds(20, || {
        let (tx, mut a) = broadcast::channel(2);
        let b = tx.subscribe();
        tx.send(SendsOnDrop(Some(tx.clone()), 0)).unwrap();
        let mut got = a.try_recv().unwrap();
        got.0 = None; // the clone carries a sender too; only the original resends
        drop(got);
        drop(b); // the original's last claim: it sends value 1
        assert_eq!(a.try_recv().map(|mut v| (v.0.take().is_none(), v.1)), Ok((true, 1)));
        tx.send(SendsOnDrop(Some(tx.clone()), 10)).unwrap();
        let mut got = a.try_recv().unwrap(); // the read drops the original: it sends value 11
        got.0 = None;
        assert_eq!(a.try_recv().map(|mut v| (v.0.take().is_none(), v.1)), Ok((true, 11)));
    });
}

#[test]
fn sender_closed_wakes_after_the_last_receiver_gave_its_claims_back() {
    struct Check(broadcast::Sender<Arc<()>>, Arc<()>, AtomicBool);
    impl std::task::Wake for Check {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            assert_eq!((self.0.receiver_count(), self.0.len(), live(&self.1)), (0, 0, 0));
            assert!(self.0.is_empty());
            self.2.store(true, SeqCst);
        }
    }
    let token = Arc::new(());
    let (tx, rx) = broadcast::channel(2);
    tx.send(token.clone()).unwrap();
    let check = Arc::new(Check(tx.clone(), token, AtomicBool::new(false)));
    let waker = std::task::Waker::from(check.clone());
    let mut cx = std::task::Context::from_waker(&waker);
    let mut closed = std::pin::pin!(tx.closed());
    assert!(closed.as_mut().poll(&mut cx).is_pending());
    drop(rx);
    assert!(check.2.load(SeqCst));
    assert!(closed.as_mut().poll(&mut cx).is_ready());
}

#[test]
fn cross_thread_readers_and_drops_release_every_value() {
    const N: usize = 5_000;
    let token = Arc::new(());
    let rt = support::mt(4);
    rt.block_on(async {
        weft::time::timeout(Duration::from_secs(30), async {
            let (tx, _) = broadcast::channel::<Arc<()>>(64);
            let receivers: Vec<_> = (0..6)
                .map(|i| {
                    let mut rx = tx.subscribe();
                    weft::spawn(async move {
                        let mut n = 0usize;
                        loop {
                            match rx.recv().await {
                                Ok(v) => drop(v),
                                Err(RecvError::Lagged(_)) => {}
                                Err(RecvError::Closed) => return,
                            }
                            n += 1;
                            // Odd receivers quit early, with values still queued for them.
                            if i % 2 == 1 && n == 100 * i {
                                return;
                            }
                        }
                    })
                })
                .collect();
            let sender = {
                let token = token.clone();
                std::thread::spawn(move || {
                    for _ in 0..N {
                        if tx.send(token.clone()).is_err() {
                            break;
                        }
                        if tx.len() == 64 {
                            std::thread::yield_now();
                        }
                    }
                })
            };
            for r in receivers {
                r.await.unwrap();
            }
            sender.join().unwrap();
        })
        .await
        .expect("broadcast stress hung");
    });
    assert_eq!(live(&token), 0);
}
