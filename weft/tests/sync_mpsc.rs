//! Behaviour of `weft::sync::mpsc`: closing, capacity, permits, cancel safety, drops, coop,
//! any-executor use, and a cross-thread stress test per flavor.

mod support;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use support::{flavors, mt, DropCounter};
use weft::sync::mpsc::{self, error::*};

fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn recv_returns_none_after_all_senders_drop_and_queue_drains() {
    for (name, rt) in flavors() {
        rt.block_on(async {
            let (tx, mut rx) = mpsc::channel(4);
            let tx2 = tx.clone();
            tx.send(1).await.unwrap();
            tx2.send(2).await.unwrap();
            drop((tx, tx2));
            assert_eq!(rx.recv().await, Some(1), "{name}");
            assert_eq!(rx.recv().await, Some(2), "{name}");
            assert_eq!(rx.recv().await, None, "{name}");
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        });
    }
}

#[test]
fn send_after_receiver_drop_returns_the_value_and_closed_resolves() {
    support::ct().block_on(async {
        let (tx, rx) = mpsc::channel::<String>(4);
        let closed = weft::spawn({
            let tx = tx.clone();
            async move { tx.closed().await }
        });
        drop(rx);
        closed.await.unwrap();
        assert!(tx.is_closed());
        assert_eq!(tx.send("v".into()).await.unwrap_err().0, "v");
        assert!(matches!(tx.try_send("w".into()), Err(TrySendError::Closed(w)) if w == "w"));
        let (utx, urx) = mpsc::unbounded_channel::<u8>();
        drop(urx);
        assert_eq!(utx.send(9).unwrap_err().0, 9);
        utx.closed().await;
    });
}

#[test]
fn receiver_close_lets_queued_messages_drain() {
    support::ct().block_on(async {
        let (tx, mut rx) = mpsc::channel(4);
        tx.send(1).await.unwrap();
        rx.close();
        assert!(tx.send(2).await.is_err());
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(rx.recv().await, None);
    });
}

#[test]
fn capacity_permits_and_try_send_full() {
    support::ct().block_on(async {
        let (tx, mut rx) = mpsc::channel::<u32>(2);
        assert_eq!((tx.capacity(), tx.max_capacity()), (2, 2));
        let permit = tx.reserve().await.unwrap();
        assert_eq!(tx.capacity(), 1);
        tx.try_send(1).unwrap();
        assert!(matches!(tx.try_send(2), Err(TrySendError::Full(2))));
        assert!(matches!(tx.try_reserve(), Err(TrySendError::Full(()))));
        drop(permit); // returned unused
        assert_eq!(tx.capacity(), 1);
        let owned = tx.clone().reserve_owned().await.unwrap();
        let tx_back = owned.send(2);
        assert!(tx_back.same_channel(&tx));
        assert_eq!(rx.len(), 2);
        assert_eq!(rx.recv().await, Some(1));
        assert_eq!(tx.capacity(), 1);
        assert_eq!(rx.recv().await, Some(2));
        let many = tx.reserve_many(2).await.unwrap();
        assert_eq!(tx.capacity(), 0);
        for (i, p) in many.enumerate() {
            p.send(10 + i as u32);
        }
        let mut buf = Vec::new();
        assert_eq!(rx.recv_many(&mut buf, 8).await, 2);
        assert_eq!(buf, [10, 11]);
        assert_eq!(rx.recv_many(&mut buf, 0).await, 0);
        assert!(rx.is_empty());
    });
}

#[test]
fn send_timeout_times_out_and_returns_the_value() {
    support::ct().block_on(async {
        let (tx, _rx) = mpsc::channel::<&str>(1);
        tx.send("a").await.unwrap();
        let err = tx.send_timeout("b", Duration::from_millis(5)).await.unwrap_err();
        assert!(matches!(err, SendTimeoutError::Timeout("b")));
        assert_eq!(err.to_string(), "timed out waiting on send operation");
    });
}

#[test]
fn cancelled_send_loses_no_capacity_and_keeps_fifo() {
    support::ct().block_on(async {
        let (tx, mut rx) = mpsc::channel::<u32>(1);
        tx.send(0).await.unwrap();
        {
            let mut first = pin!(tx.send(1));
            assert!(poll_once(first.as_mut()).is_pending()); // queued for capacity
        } // cancelled
        let mut second = pin!(tx.send(2));
        assert!(poll_once(second.as_mut()).is_pending());
        assert_eq!(rx.recv().await, Some(0)); // frees a slot: goes to `second`
        assert!(poll_once(second.as_mut()).is_ready());
        assert_eq!(rx.recv().await, Some(2));
        assert_eq!(tx.capacity(), 1, "the cancelled send kept no capacity");
    });
}

#[test]
fn weak_sender_does_not_keep_channel_open() {
    support::ct().block_on(async {
        let (tx, mut rx) = mpsc::channel::<u8>(1);
        let weak = tx.downgrade();
        let tx2 = weak.upgrade().unwrap();
        drop((tx, tx2));
        assert!(weak.upgrade().is_none());
        assert_eq!(rx.recv().await, None);
        let (utx, mut urx) = mpsc::unbounded_channel::<u8>();
        let uweak = utx.downgrade();
        drop(utx);
        assert!(uweak.upgrade().is_none());
        assert_eq!(urx.recv().await, None);
    });
}

#[test]
fn every_value_is_dropped_exactly_once() {
    let counter = DropCounter::new();
    {
        let (tx, mut rx) = mpsc::channel(64);
        for _ in 0..50 {
            tx.try_send(counter.token()).unwrap();
        }
        drop(rx.try_recv().unwrap()); // delivered and dropped by the user
        drop(rx); // 49 still queued: dropped by the receiver
        assert!(tx.try_send(counter.token()).is_err()); // returned in the error, dropped
    }
    assert_eq!(counter.count(), 51);
    let counter = DropCounter::new();
    {
        let (tx, rx) = mpsc::unbounded_channel();
        for _ in 0..100 {
            tx.send(counter.token()).unwrap(); // crosses several blocks
        }
        drop(tx);
        drop(rx);
    }
    assert_eq!(counter.count(), 100);
}

#[test]
fn receive_loop_over_full_channel_still_yields() {
    // A receiver that never finds the channel empty must still hand the worker back.
    let rt = support::ct();
    rt.block_on(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        for i in 0..10_000u32 {
            tx.send(i).unwrap();
        }
        let ticked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let t = ticked.clone();
        weft::spawn(async move { t.store(true, std::sync::atomic::Ordering::SeqCst) });
        let consumer = weft::spawn(async move {
            let mut seen_tick_at = None;
            for i in 0..10_000u32 {
                rx.recv().await.unwrap();
                if seen_tick_at.is_none() && ticked.load(std::sync::atomic::Ordering::SeqCst) {
                    seen_tick_at = Some(i);
                }
            }
            seen_tick_at
        });
        let at = consumer.await.unwrap().expect("the other task never ran during the loop");
        assert!(at < 10_000);
    });
}

#[test]
fn works_without_a_weft_runtime() {
    let (tx, mut rx) = mpsc::channel(2);
    let th = std::thread::spawn(move || {
        for i in 0..100u64 {
            tx.blocking_send(i).unwrap();
        }
    });
    let mut sum = 0;
    while let Some(v) = futures::executor::block_on(rx.recv()) {
        sum += v;
    }
    th.join().unwrap();
    assert_eq!(sum, 4950);
}

#[test]
fn errors_display_and_hand_values_back() {
    assert_eq!(SendError(5).to_string(), "channel closed");
    assert_eq!(TrySendError::Full(1).into_inner(), 1);
    assert_eq!(TrySendError::Closed(1).to_string(), "channel closed");
    assert_eq!(TryRecvError::Empty.to_string(), "receiving on an empty channel");
    fn is_error<E: std::error::Error>(_: &E) {}
    is_error(&SendError(()));
    is_error(&SendTimeoutError::Closed(()));
}

#[test]
fn send_and_sync_promises() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<mpsc::Sender<u8>>();
    send_sync::<mpsc::Receiver<u8>>();
    send_sync::<mpsc::UnboundedSender<u8>>();
    send_sync::<mpsc::Permit<'static, u8>>();
    send_sync::<mpsc::OwnedPermit<u8>>();
    fn send_future<F: Future + Send>(_: F) {}
    let (tx, mut rx) = mpsc::channel::<u8>(1);
    send_future(async move { tx.send(1).await });
    send_future(async move { rx.recv().await });
}

fn stress(bounded: bool) {
    const PRODUCERS: u64 = 8;
    const PER: u64 = 50_000;
    let rt = mt(4);
    rt.block_on(async {
        weft::time::timeout(Duration::from_secs(30), async {
            let (sum, count) = if bounded {
                let (tx, mut rx) = mpsc::channel::<u64>(16);
                for p in 0..PRODUCERS {
                    let tx = tx.clone();
                    weft::spawn(async move {
                        for i in 0..PER {
                            tx.send(p * PER + i).await.unwrap();
                        }
                    });
                }
                drop(tx);
                let (mut sum, mut count) = (0u64, 0u64);
                while let Some(v) = rx.recv().await {
                    sum += v;
                    count += 1;
                }
                (sum, count)
            } else {
                let (tx, mut rx) = mpsc::unbounded_channel::<u64>();
                for p in 0..PRODUCERS {
                    let tx = tx.clone();
                    std::thread::spawn(move || {
                        for i in 0..PER {
                            tx.send(p * PER + i).unwrap();
                        }
                    });
                }
                drop(tx);
                let (mut sum, mut count) = (0u64, 0u64);
                let mut buf = Vec::new();
                loop {
                    let n = rx.recv_many(&mut buf, 100).await;
                    if n == 0 {
                        break;
                    }
                    sum += buf.drain(..).sum::<u64>();
                    count += n as u64;
                }
                (sum, count)
            };
            let n = PRODUCERS * PER;
            assert_eq!(count, n);
            assert_eq!(sum, n * (n - 1) / 2);
        })
        .await
        .expect("stress test hung: a wake-up was lost");
    });
}

#[test]
fn stress_bounded_many_producers() {
    stress(true);
}

#[test]
fn stress_unbounded_producer_threads() {
    stress(false);
}

#[test]
fn send_loop_on_a_never_full_channel_still_yields() {
    // The send fast path takes coop budget too: a neighbour must get to run mid-loop.
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let saw = rt.block_on(async {
        let (tx, mut rx) = weft::sync::mpsc::channel::<u32>(100_000);
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let f2 = flag.clone();
        weft::spawn(async move { f2.store(true, std::sync::atomic::Ordering::SeqCst) });
        let mut saw_neighbour = false;
        for i in 0..10_000 {
            tx.send(i).await.unwrap();
            if flag.load(std::sync::atomic::Ordering::SeqCst) {
                saw_neighbour = i < 9_999;
                break;
            }
        }
        drop(tx);
        while rx.recv().await.is_some() {}
        saw_neighbour
    });
    assert!(saw, "a send loop never yielded (coop budget not consumed on the fast path)");
}

/// The handles' auto traits do not depend on the message type beyond `Send` (as tokio's):
/// `Unpin` even for a message that is not, unwind-safe even for one that is not.
#[test]
fn handles_are_unpin_and_unwind_safe_for_any_message() {
    use std::panic::{RefUnwindSafe, UnwindSafe};
    fn traits<T: Unpin + Send + Sync + UnwindSafe + RefUnwindSafe>() {}
    type Odd = (std::marker::PhantomPinned, std::cell::Cell<u8>);
    traits::<mpsc::Sender<Odd>>();
    traits::<mpsc::Receiver<Odd>>();
    traits::<mpsc::WeakSender<Odd>>();
    traits::<mpsc::UnboundedSender<Odd>>();
    traits::<mpsc::UnboundedReceiver<Odd>>();
    traits::<mpsc::WeakUnboundedSender<Odd>>();
}
