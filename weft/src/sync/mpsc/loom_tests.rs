//! Loom models of the mpsc core: sends racing receives across block boundaries (blocks hold 2
//! slots under loom), the receiver parking, the last sender's close, the receiver's drop, and
//! a bounded sender waiting for capacity, blocks recycled through full spare slots, and
//! `Sender::closed()` racing the receiver's drop. Each checks that every value arrives or is
//! dropped exactly once, or that no waiter sleeps through the close.

use loom::future::block_on;

use super::{channel, unbounded_channel};
use crate::loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use crate::loom::sync::Arc;
use crate::loom::thread;

/// `loom::model` with room for the receiver's short spins (a sender between claiming a slot
/// and writing it) and the senders' waits for a block to be installed.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.max_branches = 100_000;
    builder.check(f);
}

struct Counted(usize, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, SeqCst);
    }
}

#[test]
fn loom_mpsc_two_senders_cross_a_block() {
    model(|| {
        let (tx, mut rx) = unbounded_channel::<usize>();
        let tx2 = tx.clone();
        let a = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        // The receiving thread is also the second producer (two threads keep the model small).
        tx2.send(10).unwrap();
        drop(tx2);
        let (mut sum, mut count) = (0, 0);
        block_on(async {
            while let Some(v) = rx.recv().await {
                sum += v;
                count += 1;
            }
        });
        a.join().unwrap();
        assert_eq!((count, sum), (3, 13));
    });
}

/// Seven messages span four blocks of two: the receiver recycles three of them into two spare
/// slots while the sender takes them back, so a slot is refilled, a block is freed because
/// both slots are full, and the sender races the receiver on the slots. Order and count hold.
#[test]
fn loom_mpsc_blocks_recycle_through_full_spare_slots() {
    model(|| {
        let (tx, mut rx) = unbounded_channel::<usize>();
        let a = thread::spawn(move || {
            for i in 1..=7 {
                tx.send(i).unwrap();
            }
        });
        let mut got = Vec::new();
        block_on(async {
            while let Some(v) = rx.recv().await {
                got.push(v);
            }
        });
        a.join().unwrap();
        assert_eq!(got, (1..=7).collect::<Vec<_>>());
    });
}

#[test]
fn loom_mpsc_receiver_drop_races_send() {
    model(|| {
        let drops = Arc::new(AtomicUsize::new(0));
        let (tx, mut rx) = unbounded_channel::<Counted>();
        let d = drops.clone();
        let th = thread::spawn(move || {
            let r1 = tx.send(Counted(1, d.clone())).is_ok();
            let r2 = tx.send(Counted(2, d)).is_ok();
            (r1, r2)
        });
        let got = rx.try_recv().ok();
        drop(got);
        drop(rx);
        let _ = th.join().unwrap();
        // Whatever was accepted or refused, each value was dropped exactly once.
        assert_eq!(drops.load(SeqCst), 2);
    });
}

#[test]
fn loom_mpsc_bounded_sender_waits_for_capacity() {
    model(|| {
        let (tx, mut rx) = channel::<usize>(1);
        let th = thread::spawn(move || {
            block_on(async {
                tx.send(1).await.unwrap();
                tx.send(2).await.unwrap();
            })
        });
        let got = block_on(async {
            let a = rx.recv().await;
            let b = rx.recv().await;
            let c = rx.recv().await;
            (a, b, c)
        });
        th.join().unwrap();
        assert_eq!(got, (Some(1), Some(2), None));
    });
}

#[test]
fn loom_mpsc_close_wakes_sender_waiting_for_capacity() {
    model(|| {
        let (tx, mut rx) = channel::<usize>(1);
        tx.try_send(1).unwrap();
        let th = thread::spawn(move || block_on(tx.send(2)).map_err(|e| e.0));
        rx.close();
        assert_eq!(rx.try_recv(), Ok(1));
        let second = th.join().unwrap();
        // The blocked send either failed with its value or got in before the close.
        match second {
            Err(v) => assert_eq!(v, 2),
            Ok(()) => assert_eq!(rx.try_recv(), Ok(2)),
        }
    });
}

/// The receiver's close notifies `closed()` waiters only once some `closed()` has flagged the
/// channel (`chan::close_rx`): a `closed()` that races the receiver's drop must still resolve
/// (`block_on` reports a waiter that sleeps through it as a deadlock).
#[test]
fn loom_mpsc_closed_races_receiver_drop() {
    model(|| {
        let (tx, rx) = channel::<usize>(1);
        let th = thread::spawn(move || drop(rx));
        block_on(tx.closed());
        assert!(tx.is_closed());
        th.join().unwrap();
    });
}

/// The receiver parks with one waker (a poll that finds nothing), then parks again with
/// another (`block_on`) while a sender pushes: the second park must take the slot back from
/// the first (`rx_slot`), or find the sender holding it and poll again. A wake that went to
/// the first waker only would leave `block_on` asleep (loom reports the deadlock).
#[test]
fn loom_mpsc_receiver_reparks_while_a_sender_wakes() {
    model(|| {
        let (tx, mut rx) = unbounded_channel::<usize>();
        let a = thread::spawn(move || tx.send(1).unwrap());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let first = rx.poll_recv(&mut cx);
        let got = match first {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => block_on(rx.recv()),
        };
        assert_eq!(got, Some(1));
        a.join().unwrap();
    });
}

/// Two wakes in a row: after the first, `WAKING` stays set until the receiver parks again,
/// and that park must find the slot given back (`rx_waker_taken`) and clear the bit, or find
/// the sender still taking the waker and poll again. A second park that kept `WAKING`, or
/// wrote the slot while the sender still held it, leaves the second wake lost (deadlock) or
/// races on the slot (loom reports both).
#[test]
fn loom_mpsc_receiver_parks_again_after_a_wake() {
    model(|| {
        let (tx, mut rx) = unbounded_channel::<usize>();
        let a = thread::spawn(move || {
            tx.send(1).unwrap();
            tx.send(2).unwrap();
        });
        assert_eq!(block_on(rx.recv()), Some(1));
        assert_eq!(block_on(rx.recv()), Some(2));
        assert_eq!(block_on(rx.recv()), None);
        a.join().unwrap();
    });
}
