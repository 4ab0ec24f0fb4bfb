//! Behaviour of `oneshot`, `broadcast` and `watch`.

mod support;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use support::{mt, DropCounter};
use weft::sync::{broadcast, oneshot, watch};

fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn oneshot_send_recv_close_and_errors() {
    support::ct().block_on(async {
        let (tx, rx) = oneshot::channel();
        tx.send(1).unwrap();
        assert_eq!(rx.await, Ok(1));

        let (tx, rx) = oneshot::channel::<u8>();
        drop(tx);
        assert!(rx.await.is_err());

        let (tx, mut rx) = oneshot::channel();
        assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        rx.close();
        assert_eq!(tx.send(5), Err(5), "a closed receiver hands the value back");

        let (mut tx, rx) = oneshot::channel::<u8>();
        {
            let mut closed = pin!(tx.closed());
            assert!(poll_once(closed.as_mut()).is_pending());
            drop(rx);
            assert!(poll_once(closed.as_mut()).is_ready());
        }
        assert!(tx.is_closed());
    });
}

#[test]
fn oneshot_drops_the_value_exactly_once() {
    let counter = DropCounter::new();
    {
        let (tx, rx) = oneshot::channel();
        tx.send(counter.token()).ok().unwrap();
        drop(rx); // value never received: dropped with the channel
        let (tx, mut rx) = oneshot::channel();
        tx.send(counter.token()).ok().unwrap();
        drop(rx.try_recv().unwrap());
        let (tx, rx) = oneshot::channel();
        drop(rx);
        let back = tx.send(counter.token()).unwrap_err();
        drop(back);
    }
    assert_eq!(counter.count(), 3);
}

#[test]
fn oneshot_cross_thread_stress() {
    let rt = mt(4);
    rt.block_on(async {
        weft::time::timeout(Duration::from_secs(30), async {
            let mut handles = Vec::new();
            for i in 0..20_000u64 {
                let (tx, rx) = oneshot::channel();
                handles.push(weft::spawn(async move { rx.await.unwrap() }));
                if i % 2 == 0 {
                    weft::spawn(async move { tx.send(i).unwrap() });
                } else {
                    std::thread::spawn(move || tx.send(i).unwrap());
                }
            }
            let (mut sum, mut count) = (0u64, 0u64);
            for h in handles {
                sum += h.await.unwrap();
                count += 1;
            }
            assert_eq!((count, sum), (20_000, 20_000 * 19_999 / 2));
        })
        .await
        .expect("oneshot stress hung: a wake-up was lost");
    });
}

#[test]
fn broadcast_delivers_to_every_receiver_and_reports_lag() {
    support::ct().block_on(async {
        let (tx, mut a) = broadcast::channel(2);
        let mut b = tx.subscribe();
        assert_eq!(tx.send(1).unwrap(), 2);
        assert_eq!(a.recv().await, Ok(1));
        tx.send(2).unwrap();
        tx.send(3).unwrap();
        tx.send(4).unwrap(); // b has not read 1..4: it lags
        assert_eq!(b.recv().await, Err(broadcast::error::RecvError::Lagged(2)));
        assert_eq!(b.recv().await, Ok(3));
        assert_eq!(b.recv().await, Ok(4));
        assert_eq!(b.try_recv(), Err(broadcast::error::TryRecvError::Empty));
        drop(tx);
        assert_eq!(b.recv().await, Err(broadcast::error::RecvError::Closed));
        assert_eq!(a.recv().await, Err(broadcast::error::RecvError::Lagged(1)));
        assert_eq!(a.recv().await, Ok(3));
    });
}

#[test]
fn broadcast_send_without_receivers_fails_and_values_drop_once() {
    let counter = DropCounter::new();
    {
        let (tx, rx) = broadcast::channel::<std::sync::Arc<()>>(4);
        let token = std::sync::Arc::new(());
        drop(rx);
        assert!(tx.send(token.clone()).is_err());
        let mut rx = tx.subscribe();
        for _ in 0..10 {
            tx.send(token.clone()).unwrap(); // overwrites: old values dropped
        }
        assert_eq!(std::sync::Arc::strong_count(&token), 1 + 4);
        assert!(matches!(rx.try_recv(), Err(broadcast::error::TryRecvError::Lagged(6))));
        drop((tx, rx));
        assert_eq!(std::sync::Arc::strong_count(&token), 1);
    }
    let _ = counter;
}

#[test]
fn broadcast_cross_thread_stress() {
    let rt = mt(4);
    rt.block_on(async {
        weft::time::timeout(Duration::from_secs(30), async {
            const N: u64 = 20_000;
            let (tx, _) = broadcast::channel::<u64>(N as usize);
            let receivers: Vec<_> = (0..8)
                .map(|_| {
                    let mut rx = tx.subscribe();
                    weft::spawn(async move {
                        let (mut sum, mut count) = (0u64, 0u64);
                        while let Ok(v) = rx.recv().await {
                            sum += v;
                            count += 1;
                        }
                        (sum, count)
                    })
                })
                .collect();
            std::thread::spawn(move || {
                for i in 0..N {
                    tx.send(i).unwrap();
                }
            });
            for r in receivers {
                assert_eq!(r.await.unwrap(), (N * (N - 1) / 2, N));
            }
        })
        .await
        .expect("broadcast stress hung: a wake-up was lost");
    });
}

#[test]
fn watch_changed_borrow_and_close() {
    support::ct().block_on(async {
        let (tx, mut rx) = watch::channel(0);
        assert!(!rx.has_changed().unwrap());
        tx.send(1).unwrap();
        assert!(rx.borrow().has_changed());
        rx.changed().await.unwrap();
        assert_eq!(*rx.borrow_and_update(), 1);
        tx.send_modify(|v| *v += 1);
        assert!(!tx.send_if_modified(|_| false));
        assert_eq!(tx.send_replace(10), 2);
        rx.changed().await.unwrap();
        assert_eq!(*rx.borrow(), 10, "only the latest value is seen");
        let mut rx2 = rx.clone();
        assert_eq!(tx.receiver_count(), 2);
        drop(tx);
        assert!(rx.changed().await.is_err());
        assert!(rx2.changed().await.is_err());
        let (tx, rx) = watch::channel(0);
        drop(rx);
        assert_eq!(tx.send(3).unwrap_err().0, 3);
        tx.closed().await;
    });
}

#[test]
fn watch_cross_thread_stress_sees_the_final_value() {
    let rt = mt(4);
    rt.block_on(async {
        weft::time::timeout(Duration::from_secs(30), async {
            let (tx, rx) = watch::channel(0u64);
            let watchers: Vec<_> = (0..4)
                .map(|_| {
                    let mut rx = rx.clone();
                    weft::spawn(async move {
                        let mut last = 0;
                        while rx.changed().await.is_ok() {
                            let v = *rx.borrow_and_update();
                            assert!(v >= last, "values went backwards");
                            last = v;
                        }
                        *rx.borrow()
                    })
                })
                .collect();
            std::thread::spawn(move || {
                for i in 1..=10_000 {
                    tx.send(i).unwrap();
                }
            });
            for w in watchers {
                assert_eq!(w.await.unwrap(), 10_000);
            }
        })
        .await
        .expect("watch stress hung: a wake-up was lost");
    });
}

/// The oneshot handles' auto traits do not depend on the value type beyond `Send` (as
/// tokio's): `Unpin` even for a value that is not, unwind-safe even for one that is not.
#[test]
fn oneshot_handles_are_unpin_and_unwind_safe_for_any_value() {
    use std::panic::{RefUnwindSafe, UnwindSafe};
    fn traits<T: Unpin + Send + Sync + UnwindSafe + RefUnwindSafe>() {}
    type Odd = (std::marker::PhantomPinned, std::cell::Cell<u8>);
    traits::<weft::sync::oneshot::Sender<Odd>>();
    traits::<weft::sync::oneshot::Receiver<Odd>>();
}
