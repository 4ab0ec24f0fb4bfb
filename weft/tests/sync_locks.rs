//! Behaviour of the async locks: `Semaphore`, `Mutex`, `RwLock`, `Notify`, `Barrier`,
//! `OnceCell`, `SetOnce` (fairness, cancellation, closing, exact counts, stress).

mod support;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use support::mt;
use weft::sync::*;

fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn semaphore_counts_and_closes() {
    support::ct().block_on(async {
        let sem = Semaphore::new(3);
        let a = sem.acquire_many(2).await.unwrap();
        assert_eq!(sem.available_permits(), 1);
        assert_eq!(sem.try_acquire_many(2).unwrap_err(), TryAcquireError::NoPermits);
        a.forget();
        assert_eq!(sem.available_permits(), 1);
        sem.add_permits(4);
        assert_eq!(sem.forget_permits(2), 2);
        assert_eq!(sem.available_permits(), 3);
        let mut waiting = pin!(sem.acquire_many(5));
        assert!(poll_once(waiting.as_mut()).is_pending());
        sem.close();
        assert!(matches!(poll_once(waiting.as_mut()), Poll::Ready(Err(AcquireError { .. }))));
        assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
        assert_eq!(AcquireError::clone(&sem.acquire().await.unwrap_err()).to_string(), "semaphore closed");
    });
}

#[test]
fn semaphore_is_fifo_a_big_request_is_not_overtaken() {
    support::ct().block_on(async {
        let sem = Semaphore::new(0);
        let mut big = pin!(sem.acquire_many(3));
        assert!(poll_once(big.as_mut()).is_pending());
        let mut small = pin!(sem.acquire());
        assert!(poll_once(small.as_mut()).is_pending());
        sem.add_permits(2); // goes to `big` (partially), not to `small`
        assert!(poll_once(small.as_mut()).is_pending());
        assert!(sem.try_acquire().is_err(), "no barging past the queue");
        sem.add_permits(1);
        let big = match poll_once(big.as_mut()) {
            Poll::Ready(Ok(p)) => p,
            _ => panic!("big request should be granted"),
        };
        assert_eq!(big.num_permits(), 3);
        drop(big);
        assert!(poll_once(small.as_mut()).is_ready());
    });
}

#[test]
fn cancelled_acquire_returns_partially_assigned_permits() {
    support::ct().block_on(async {
        let sem = Semaphore::new(0);
        {
            let mut big = pin!(sem.acquire_many(3));
            assert!(poll_once(big.as_mut()).is_pending());
            sem.add_permits(2); // assigned to `big`
            assert_eq!(sem.available_permits(), 0);
        } // cancelled: the 2 come back
        assert_eq!(sem.available_permits(), 2);
        {
            let mut one = pin!(sem.acquire_many(3));
            assert!(poll_once(one.as_mut()).is_pending());
            sem.add_permits(1); // granted in full, never observed
        } // cancelled after the grant: all 3 come back
        assert_eq!(sem.available_permits(), 3);
    });
}

#[test]
fn owned_permits_and_merge() {
    support::ct().block_on(async {
        let sem = Arc::new(Semaphore::new(2));
        let mut a = sem.clone().acquire_owned().await.unwrap();
        let b = sem.clone().try_acquire_owned().unwrap();
        a.merge(b);
        assert_eq!(a.num_permits(), 2);
        assert!(Arc::ptr_eq(a.semaphore(), &sem));
        drop(a);
        assert_eq!(sem.available_permits(), 2);
    });
}

#[test]
fn cancelled_mutex_lock_hands_the_lock_to_the_next_waiter() {
    support::ct().block_on(async {
        let m = Mutex::new(0);
        let guard = m.lock().await;
        let mut first = Box::pin(m.lock());
        assert!(poll_once(first.as_mut()).is_pending());
        let mut second = pin!(m.lock());
        assert!(poll_once(second.as_mut()).is_pending());
        drop(guard); // hands the lock to `first`
        drop(first); // cancelled holding it: passes it on
        match poll_once(second.as_mut()) {
            Poll::Ready(mut g) => *g += 1,
            Poll::Pending => panic!("the lock was lost with the cancelled waiter"),
        }
        assert!(m.try_lock().is_ok());
    });
}

#[test]
fn mutex_is_fifo_and_owned_guards_work() {
    support::ct().block_on(async {
        let m = Arc::new(Mutex::new(Vec::new()));
        let guard = m.lock().await;
        let mut handles = Vec::new();
        for i in 0..5 {
            let m = m.clone();
            handles.push(weft::spawn(async move { m.lock_owned().await.push(i) }));
        }
        weft::task::yield_now().await; // all five queue up in spawn order
        drop(guard);
        for h in handles {
            h.await.unwrap();
        }
        assert_eq!(*m.lock().await, [0, 1, 2, 3, 4]);
        assert!(format!("{:?}", m).contains("Mutex"));
        let m = Mutex::new(5);
        assert_eq!(m.into_inner(), 5);
    });
}

#[test]
fn rwlock_is_write_preferring() {
    support::ct().block_on(async {
        let lock = RwLock::new(0);
        let r1 = lock.read().await;
        let mut writer = pin!(lock.write());
        assert!(poll_once(writer.as_mut()).is_pending());
        // A reader arriving after a waiting writer must wait behind it.
        let mut late_reader = pin!(lock.read());
        assert!(poll_once(late_reader.as_mut()).is_pending());
        assert!(lock.try_read().is_err());
        drop(r1);
        let mut w = match poll_once(writer.as_mut()) {
            Poll::Ready(w) => w,
            Poll::Pending => panic!("writer should have the lock"),
        };
        *w = 1;
        let r = w.downgrade();
        assert_eq!(*r, 1);
        assert!(poll_once(late_reader.as_mut()).is_ready());
    });
}

#[test]
fn notify_one_stores_one_permit_and_wakes_fifo() {
    support::ct().block_on(async {
        let notify = Notify::new();
        notify.notify_one();
        notify.notify_one(); // permits do not add up
        notify.notified().await;
        let mut a = pin!(notify.notified());
        assert!(poll_once(a.as_mut()).is_pending());
        let mut b = pin!(notify.notified());
        assert!(poll_once(b.as_mut()).is_pending());
        notify.notify_one();
        assert!(poll_once(a.as_mut()).is_ready());
        assert!(poll_once(b.as_mut()).is_pending());
        notify.notify_waiters();
        assert!(poll_once(b.as_mut()).is_ready());
    });
}

#[test]
fn notify_waiters_completes_futures_created_before_it() {
    let notify = Notify::new();
    let created = notify.notified(); // not polled yet
    notify.notify_waiters();
    let created = pin!(created);
    assert!(poll_once(created).is_ready());
    let mut after = pin!(notify.notified());
    assert!(poll_once(after.as_mut()).is_pending(), "notify_waiters stores no permit");
}

#[test]
fn dropped_notified_forwards_its_notification() {
    let notify = Notify::new();
    let mut a = Box::pin(notify.notified());
    assert!(poll_once(a.as_mut()).is_pending());
    let mut b = pin!(notify.notified());
    assert!(poll_once(b.as_mut()).is_pending());
    notify.notify_one(); // picks `a`
    drop(a); // never observed it: `b` gets it
    assert!(poll_once(b.as_mut()).is_ready());
}

#[test]
fn barrier_releases_all_with_one_leader_and_is_reusable() {
    let rt = mt(2);
    rt.block_on(async {
        let barrier = Arc::new(Barrier::new(4));
        for _round in 0..3 {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let b = barrier.clone();
                    weft::spawn(async move { b.wait().await.is_leader() })
                })
                .collect();
            let mut leaders = 0;
            for h in handles {
                leaders += h.await.unwrap() as usize;
            }
            assert_eq!(leaders, 1);
        }
    });
}

#[test]
fn once_cell_initialises_once_and_survives_a_cancelled_initialiser() {
    support::ct().block_on(async {
        let cell = OnceCell::new();
        let runs = AtomicUsize::new(0);
        {
            let mut first = pin!(cell.get_or_init(|| async {
                runs.fetch_add(1, SeqCst);
                std::future::pending::<u32>().await
            }));
            assert!(poll_once(first.as_mut()).is_pending());
            assert!(matches!(cell.set(1), Err(SetError::InitializingError(1))));
        } // cancelled mid-initialisation
        assert_eq!(*cell.get_or_init(|| async { 7 }).await, 7);
        assert_eq!(cell.get(), Some(&7));
        assert!(matches!(cell.set(8), Err(SetError::AlreadyInitializedError(8))));
        let empty = OnceCell::new();
        let failing: Result<&u32, &str> = empty.get_or_try_init(|| async { Err("no") }).await;
        assert_eq!(failing, Err("no"));
        assert!(!empty.initialized());
        assert_eq!(runs.load(SeqCst), 1);
        assert_eq!(cell.into_inner(), Some(7));
    });
}

#[test]
fn once_cell_and_set_once_drop_their_value_once() {
    let counter = support::DropCounter::new();
    {
        let cell = OnceCell::new();
        cell.set(counter.token()).ok().unwrap();
        let set = SetOnce::new();
        set.set(counter.token()).ok().unwrap();
        assert!(set.set(counter.token()).is_err()); // returned and dropped
    }
    assert_eq!(counter.count(), 3);
}

#[test]
fn set_once_wakes_waiters() {
    let rt = mt(2);
    rt.block_on(async {
        let cell = Arc::new(SetOnce::new());
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let c = cell.clone();
                weft::spawn(async move { *c.wait().await })
            })
            .collect();
        weft::time::sleep(Duration::from_millis(2)).await;
        cell.set(9u32).unwrap();
        for w in waiters {
            assert_eq!(w.await.unwrap(), 9);
        }
        assert!(cell.initialized());
    });
}

#[test]
fn mutex_and_semaphore_stress_across_threads() {
    let rt = mt(4);
    rt.block_on(async {
        weft::time::timeout(Duration::from_secs(30), async {
            let m = Arc::new(Mutex::new(0u64));
            let sem = Arc::new(Semaphore::new(3));
            let inside = Arc::new(AtomicU64::new(0));
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    let (m, sem, inside) = (m.clone(), sem.clone(), inside.clone());
                    weft::spawn(async move {
                        for i in 0..2_000 {
                            *m.lock().await += 1;
                            let _p = sem.acquire().await.unwrap();
                            assert!(inside.fetch_add(1, SeqCst) < 3, "more holders than permits");
                            if i % 7 == 0 {
                                weft::task::yield_now().await;
                            }
                            inside.fetch_sub(1, SeqCst);
                        }
                    })
                })
                .collect();
            for h in handles {
                h.await.unwrap();
            }
            assert_eq!(*m.lock().await, 32_000);
            assert_eq!(sem.available_permits(), 3);
        })
        .await
        .expect("lock stress hung: a wake-up was lost");
    });
}

#[test]
fn locks_work_without_a_weft_runtime() {
    let m = Arc::new(Mutex::new(0));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let m = m.clone();
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    *m.blocking_lock() += 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*::futures::executor::block_on(m.lock()), 4000);
}

#[test]
fn send_and_sync_promises() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Semaphore>();
    send_sync::<Mutex<u8>>();
    send_sync::<MutexGuard<'static, u8>>();
    send_sync::<RwLock<u8>>();
    send_sync::<Notify>();
    send_sync::<Barrier>();
    send_sync::<OnceCell<u8>>();
    send_sync::<SetOnce<u8>>();
    fn send_future<F: Future + Send>(_: F) {}
    let m = Mutex::new(1);
    send_future(async { *m.lock().await += 1 });
    let n = Notify::new();
    send_future(n.notified());
}
