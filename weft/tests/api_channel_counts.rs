//! Sender strong/weak counts, `downgrade`, `broadcast::Sender::closed`, and
//! `oneshot::Receiver::{is_terminated, is_empty}` behave as tokio's.

use weft::sync::{broadcast, mpsc, oneshot};

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().build().unwrap()
}

#[test]
fn mpsc_bounded_counts() {
    let (tx, rx) = mpsc::channel::<u32>(4);
    assert_eq!((tx.strong_count(), tx.weak_count()), (1, 0));
    let weak = tx.downgrade();
    let weak2 = weak.clone();
    let tx2 = tx.clone();
    assert_eq!((tx.strong_count(), tx.weak_count()), (2, 2));
    assert_eq!((weak.strong_count(), weak.weak_count()), (2, 2));
    assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (2, 2));
    drop(weak2);
    drop(tx2);
    assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (1, 1));
    let up = weak.upgrade().unwrap();
    assert_eq!(weak.strong_count(), 2);
    drop(up);
    drop(tx);
    assert_eq!((weak.strong_count(), weak.weak_count()), (0, 1));
    assert!(weak.upgrade().is_none());
    drop(weak);
    assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (0, 0));
}

#[test]
fn mpsc_unbounded_counts() {
    let (tx, rx) = mpsc::unbounded_channel::<u32>();
    let weak = tx.downgrade();
    let _weak2 = weak.clone();
    let _tx2 = tx.clone();
    assert_eq!((tx.strong_count(), tx.weak_count()), (2, 2));
    assert_eq!((weak.strong_count(), weak.weak_count()), (2, 2));
    assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (2, 2));
    drop(weak);
    drop(tx);
    assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (1, 1));
}

#[test]
fn broadcast_counts_and_upgrade() {
    let (tx, rx) = broadcast::channel::<u32>(4);
    assert_eq!((tx.strong_count(), tx.weak_count()), (1, 0));
    let weak = tx.downgrade();
    let _weak2 = weak.clone();
    assert_eq!((tx.strong_count(), tx.weak_count()), (1, 2));
    assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (1, 2));
    let up = weak.upgrade().unwrap();
    assert_eq!((weak.strong_count(), weak.weak_count()), (2, 2));
    assert_eq!(up.send(5).unwrap(), 1);
    drop(up);
    drop(tx);
    assert!(weak.upgrade().is_none());
    assert_eq!((rx.sender_strong_count(), rx.sender_weak_count()), (0, 2));
}

#[test]
fn broadcast_closed_completes_when_last_receiver_drops() {
    rt().block_on(async {
        let (tx, rx1) = broadcast::channel::<u32>(4);
        let rx2 = tx.subscribe();
        let (done_tx, mut done_rx) = oneshot::channel();
        let tx2 = tx.clone();
        weft::spawn(async move {
            tx2.closed().await;
            done_tx.send(tx2.receiver_count()).unwrap();
        });
        weft::task::yield_now().await;
        drop(rx1);
        weft::task::yield_now().await;
        assert_eq!(done_rx.try_recv(), Err(oneshot::error::TryRecvError::Empty));
        drop(rx2);
        assert_eq!(done_rx.await, Ok(0));
        tx.closed().await; // no receivers now: immediate
    });
}

#[test]
fn oneshot_is_terminated_and_is_empty() {
    rt().block_on(async {
        let (tx, mut rx) = oneshot::channel();
        assert!(rx.is_empty() && !rx.is_terminated());
        tx.send(3).unwrap();
        assert!(!rx.is_empty() && !rx.is_terminated());
        assert_eq!((&mut rx).await, Ok(3));
        assert!(rx.is_empty() && rx.is_terminated());

        let (tx, mut rx) = oneshot::channel::<()>();
        drop(tx);
        assert!(rx.is_empty() && !rx.is_terminated());
        assert!((&mut rx).await.is_err());
        assert!(rx.is_empty() && rx.is_terminated());
    });
}
