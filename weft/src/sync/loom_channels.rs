//! Loom models of `broadcast` and `watch`: a send racing the receive (the value must arrive,
//! the wake must not be lost) and the sender's drop racing a waiting receiver.

use loom::future::block_on;

use super::{broadcast, watch};
use crate::loom::thread;

#[test]
fn loom_broadcast_send_races_recv_then_close() {
    loom::model(|| {
        let (tx, mut rx) = broadcast::channel::<usize>(2);
        let th = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
            // Dropping the last sender closes the channel after the two values.
        });
        assert_eq!(block_on(rx.recv()), Ok(1));
        assert_eq!(block_on(rx.recv()), Ok(2));
        assert_eq!(block_on(rx.recv()), Err(broadcast::error::RecvError::Closed));
        th.join().unwrap();
    });
}

#[test]
fn loom_broadcast_two_receivers_each_get_the_value() {
    loom::model(|| {
        let (tx, mut rx1) = broadcast::channel::<usize>(1);
        let mut rx2 = tx.subscribe();
        let th = thread::spawn(move || block_on(rx2.recv()));
        tx.send(5).unwrap();
        assert_eq!(block_on(rx1.recv()), Ok(5));
        assert_eq!(th.join().unwrap(), Ok(5));
    });
}

#[test]
fn loom_watch_send_races_changed() {
    loom::model(|| {
        let (tx, mut rx) = watch::channel(0usize);
        let th = thread::spawn(move || {
            tx.send(1).unwrap();
            tx
        });
        block_on(rx.changed()).unwrap();
        assert_eq!(*rx.borrow_and_update(), 1);
        drop(th.join().unwrap());
    });
}

#[test]
fn loom_watch_sender_drop_wakes_changed() {
    loom::model(|| {
        let (tx, mut rx) = watch::channel(0usize);
        let th = thread::spawn(move || drop(tx));
        assert!(block_on(rx.changed()).is_err());
        th.join().unwrap();
    });
}
