//! Loom models of the LIFO slot's handshake (`lifo.rs`): the worker writing and taking while
//! the monitor steals. Every task must come out exactly once; loom's `fence(SeqCst)` stands in
//! for both halves of the asymmetric barrier.

use super::lifo::LifoSlot;
use super::loom_queue::{make, sched, Sched};
use crate::loom::sync::atomic::{AtomicU64, Ordering::*};
use crate::loom::sync::{Arc, Mutex};
use crate::loom::{lock, thread};
use crate::task::{Id, Runnable};

type Slot = Arc<LifoSlot<Arc<Sched>>>;
type Seen = Arc<Mutex<Vec<Id>>>;

fn record(seen: &Mutex<Vec<Id>>, task: Runnable<Arc<Sched>>) {
    lock(seen).push(task.header().id());
    task.run();
}

/// A slot holding one task, and the log of tasks that came out.
fn slot_with_one(s: &Arc<Sched>) -> (Slot, Seen, Id) {
    let slot = Arc::new(LifoSlot::new());
    let (t, id) = make(s);
    assert!(matches!(slot.replace(t), Ok(None)));
    (slot, Arc::new(Mutex::new(Vec::new())), id)
}

/// The monitor: `steals` tries while `still_stuck` says the poll goes on.
fn monitor(
    slot: &Slot,
    seen: &Seen,
    steals: usize,
    still_stuck: impl Fn() -> bool + Send + 'static,
) -> thread::JoinHandle<()> {
    let (slot, seen) = (slot.clone(), seen.clone());
    thread::spawn(move || {
        for _ in 0..steals {
            if let Some(t) = slot.steal(&still_stuck) {
                record(&seen, t);
            }
        }
    })
}

/// The worker wakes `task`: it goes in the slot, or whatever comes back is run.
fn wake(slot: &Slot, seen: &Seen, task: Runnable<Arc<Sched>>) {
    match slot.replace(task) {
        Ok(None) => {}
        Ok(Some(t)) | Err(t) => record(seen, t),
    }
}

/// Every task came out exactly once, and the slot is empty.
fn assert_each_once(s: &Arc<Sched>, slot: &Slot, seen: &Seen, mut want: Vec<Id>) {
    assert!(!slot.is_some());
    let mut got = lock(seen).clone();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert!(s.owned.is_empty());
}

/// The worker wakes a second task (displacing the first, or refused while the monitor takes
/// the slot) and then takes the slot, while the monitor steals once.
#[test]
fn replace_and_take_racing_a_steal_each_task_once() {
    loom::model(|| {
        let s = sched();
        let (slot, seen, id1) = slot_with_one(&s);
        let (t2, id2) = make(&s);
        let monitor = monitor(&slot, &seen, 1, || true);
        wake(&slot, &seen, t2);
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert_each_once(&s, &slot, &seen, vec![id1, id2]);
    });
}

/// Two steals in a row against a take: the second steal must not find the taken task.
#[test]
fn take_racing_two_steals_each_task_once() {
    loom::model(|| {
        let s = sched();
        let (slot, seen, id1) = slot_with_one(&s);
        let monitor = monitor(&slot, &seen, 2, || true);
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert_each_once(&s, &slot, &seen, vec![id1]);
    });
}

/// The worker takes the slot's task and wakes another into the now empty slot (the write
/// without a handshake), then takes again, while the monitor steals twice.
#[test]
fn write_into_an_empty_slot_racing_steals_each_task_once() {
    loom::model(|| {
        let s = sched();
        let (slot, seen, id1) = slot_with_one(&s);
        let (t2, id2) = make(&s);
        let monitor = monitor(&slot, &seen, 2, || true);
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        wake(&slot, &seen, t2);
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert_each_once(&s, &slot, &seen, vec![id1, id2]);
    });
}

/// The worker ends its stuck poll (the even sequence number) and takes the slot between polls
/// with only a read of `claim`, while the monitor, which saw poll 1 stuck, steals.
#[test]
fn take_between_polls_racing_a_steal_each_task_once() {
    loom::model(|| {
        let s = sched();
        let (slot, seen, id1) = slot_with_one(&s);
        let seq = Arc::new(AtomicU64::new(1));
        let seq2 = seq.clone();
        let monitor = monitor(&slot, &seen, 1, move || seq2.load(Acquire) == 1);
        seq.store(2, Release);
        if let Some(t) = slot.take_between_polls(|| seq.load(Acquire).is_multiple_of(2)) {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert_each_once(&s, &slot, &seen, vec![id1]);
    });
}
