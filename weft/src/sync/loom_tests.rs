//! Loom models of `oneshot`, `Notify` and the semaphore: the races their state words exist
//! for (send vs. receive vs. close, notify vs. wait vs. drop, release vs. cancelled acquire).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use loom::future::block_on;

use super::batch_semaphore::RawSemaphore;
use super::{oneshot, Notify};
use crate::loom::sync::Arc;
use crate::loom::thread;

#[test]
fn loom_oneshot_send_races_recv() {
    loom::model(|| {
        let (tx, rx) = oneshot::channel::<usize>();
        let th = thread::spawn(move || tx.send(7));
        assert_eq!(block_on(rx), Ok(7));
        assert!(th.join().unwrap().is_ok());
    });
}

#[test]
fn loom_oneshot_sender_drop_wakes_receiver() {
    loom::model(|| {
        let (tx, rx) = oneshot::channel::<usize>();
        let th = thread::spawn(move || drop(tx));
        assert!(block_on(rx).is_err());
        th.join().unwrap();
    });
}

#[test]
fn loom_oneshot_close_races_send_and_closed() {
    loom::model(|| {
        let (mut tx, mut rx) = oneshot::channel::<Arc<usize>>();
        let value = Arc::new(1);
        let v = value.clone();
        let th = thread::spawn(move || {
            block_on(tx.closed());
            tx.send(v)
        });
        rx.close();
        // The sender saw the close, so its send fails and hands the value back.
        let back = th.join().unwrap().unwrap_err();
        drop(back);
        drop(rx);
        assert_eq!(Arc::strong_count(&value), 1);
    });
}

#[test]
fn loom_notify_one_races_notified() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let n = notify.clone();
        let th = thread::spawn(move || n.notify_one());
        block_on(notify.notified()); // must complete: the permit is stored or handed over
        th.join().unwrap();
    });
}

#[test]
fn loom_notify_dropped_waiter_passes_notification_on() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let n = notify.clone();
        let waiter = thread::spawn(move || {
            let mut first = pin!(n.notified());
            // Register, then give up (the notification may already have been handed to it).
            first.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_ready()
        });
        let n2 = notify.clone();
        let th = thread::spawn(move || n2.notify_one());
        let consumed = waiter.join().unwrap();
        th.join().unwrap();
        // Unless the first future completed with it, the one notification was not lost with
        // the dropped future.
        if !consumed {
            block_on(notify.notified());
        }
    });
}

#[test]
fn loom_notify_waiters_reaches_created_future() {
    loom::model(|| {
        let notify = Arc::new(Notify::new());
        let flag = Arc::new(crate::loom::sync::atomic::AtomicBool::new(false));
        let (n, f) = (notify.clone(), flag.clone());
        let th = thread::spawn(move || {
            f.store(true, std::sync::atomic::Ordering::SeqCst);
            n.notify_waiters();
        });
        block_on(async {
            loop {
                let notified = notify.notified();
                if flag.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                notified.await;
            }
        });
        th.join().unwrap();
    });
}

#[test]
fn loom_semaphore_cancelled_acquire_loses_no_permit() {
    loom::model(|| {
        let sem = Arc::new(RawSemaphore::new(1));
        sem.try_acquire(1).unwrap();
        let s = sem.clone();
        let th = thread::spawn(move || {
            let mut acquire = pin!(s.acquire(1));
            // Queue, then cancel, possibly after being granted.
            let polled = acquire.as_mut().poll(&mut Context::from_waker(Waker::noop()));
            if let Poll::Ready(r) = polled {
                r.unwrap();
                s.release(1);
            }
        });
        sem.release(1);
        th.join().unwrap();
        assert_eq!(sem.available_permits(), 1);
    });
}

#[test]
fn loom_semaphore_fifo_handoff_to_waiter() {
    loom::model(|| {
        let sem = Arc::new(RawSemaphore::new(0));
        let s = sem.clone();
        let th = thread::spawn(move || {
            block_on(s.acquire(2)).unwrap();
            s.release(2);
        });
        sem.release(1);
        sem.release(1);
        th.join().unwrap();
        assert_eq!(sem.available_permits(), 2);
    });
}

/// `close` skips the mutex when the word it closed had no `WAITERS`; an acquire queueing at
/// the same time must then fail rather than sleep forever (`block_on` would report the hang
/// as a deadlock), whichever of the two runs first.
#[test]
fn loom_semaphore_close_races_queueing_acquire() {
    loom::model(|| {
        let sem = Arc::new(RawSemaphore::new(0));
        let s = sem.clone();
        let th = thread::spawn(move || block_on(s.acquire(1)));
        sem.close();
        assert!(th.join().unwrap().is_err(), "an acquire on a closed, empty semaphore fails");
        assert!(sem.try_acquire(1).is_err());
    });
}
