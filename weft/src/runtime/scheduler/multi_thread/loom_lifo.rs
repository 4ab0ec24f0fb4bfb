//! Loom models of the LIFO slot's handshake (`lifo.rs`): the worker writing and taking while
//! the monitor steals. Every task must come out exactly once; loom's `fence(SeqCst)` stands in
//! for both halves of the asymmetric barrier.

use super::lifo::LifoSlot;
use super::loom_queue::{make, sched, Sched};
use crate::loom::sync::atomic::{AtomicU64, Ordering::*};
use crate::loom::sync::{Arc, Mutex};
use crate::loom::{lock, thread};
use crate::task::{Id, Runnable};

fn record(seen: &Mutex<Vec<Id>>, task: Runnable<Arc<Sched>>) {
    lock(seen).push(task.header().id());
    task.run();
}

/// The worker wakes a second task (displacing the first, or refused while the monitor takes
/// the slot) and then takes the slot, while the monitor steals once.
#[test]
fn replace_and_take_racing_a_steal_each_task_once() {
    loom::model(|| {
        let s = sched();
        let slot = Arc::new(LifoSlot::<Arc<Sched>>::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (t1, id1) = make(&s);
        let (t2, id2) = make(&s);
        assert!(matches!(slot.replace(t1), Ok(None)));
        let monitor = {
            let (slot, seen) = (slot.clone(), seen.clone());
            thread::spawn(move || {
                if let Some(t) = slot.steal(|| true) {
                    record(&seen, t);
                }
            })
        };
        match slot.replace(t2) {
            Ok(None) => {}
            Ok(Some(t)) | Err(t) => record(&seen, t),
        }
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert!(!slot.is_some());
        let mut got = lock(&seen).clone();
        got.sort();
        let mut want = vec![id1, id2];
        want.sort();
        assert_eq!(got, want);
        assert!(s.owned.is_empty());
    });
}

/// Two steals in a row against a take: the second steal must not find the taken task.
#[test]
fn take_racing_two_steals_each_task_once() {
    loom::model(|| {
        let s = sched();
        let slot = Arc::new(LifoSlot::<Arc<Sched>>::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (t1, id1) = make(&s);
        assert!(matches!(slot.replace(t1), Ok(None)));
        let monitor = {
            let (slot, seen) = (slot.clone(), seen.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    if let Some(t) = slot.steal(|| true) {
                        record(&seen, t);
                    }
                }
            })
        };
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert_eq!(*lock(&seen), vec![id1]);
        assert!(s.owned.is_empty());
    });
}

/// The worker takes the slot's task and wakes another into the now empty slot (the write
/// without a handshake), then takes again, while the monitor steals twice.
#[test]
fn write_into_an_empty_slot_racing_steals_each_task_once() {
    loom::model(|| {
        let s = sched();
        let slot = Arc::new(LifoSlot::<Arc<Sched>>::new());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (t1, id1) = make(&s);
        let (t2, id2) = make(&s);
        assert!(matches!(slot.replace(t1), Ok(None)));
        let monitor = {
            let (slot, seen) = (slot.clone(), seen.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    if let Some(t) = slot.steal(|| true) {
                        record(&seen, t);
                    }
                }
            })
        };
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        match slot.replace(t2) {
            Ok(None) => {}
            Ok(Some(t)) | Err(t) => record(&seen, t),
        }
        if let Some(t) = slot.take() {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert!(!slot.is_some());
        let mut got = lock(&seen).clone();
        got.sort();
        let mut want = vec![id1, id2];
        want.sort();
        assert_eq!(got, want);
        assert!(s.owned.is_empty());
    });
}

/// The worker ends its stuck poll (the even sequence number) and takes the slot between polls
/// with only a read of `claim`, while the monitor, which saw poll 1 stuck, steals.
#[test]
fn take_between_polls_racing_a_steal_each_task_once() {
    loom::model(|| {
        let s = sched();
        let slot = Arc::new(LifoSlot::<Arc<Sched>>::new());
        let seq = Arc::new(AtomicU64::new(1));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (t1, id1) = make(&s);
        assert!(matches!(slot.replace(t1), Ok(None)));
        let monitor = {
            let (slot, seq, seen) = (slot.clone(), seq.clone(), seen.clone());
            thread::spawn(move || {
                if let Some(t) = slot.steal(|| seq.load(Acquire) == 1) {
                    record(&seen, t);
                }
            })
        };
        seq.store(2, Release);
        if let Some(t) = slot.take_between_polls(|| seq.load(Acquire).is_multiple_of(2)) {
            record(&seen, t);
        }
        monitor.join().unwrap();
        assert!(!slot.is_some());
        assert_eq!(*lock(&seen), vec![id1]);
        assert!(s.owned.is_empty());
    });
}
