//! `Notify::notified_owned`, `const_new` constructors, blocking semaphore acquires and
//! permit `split`, as tokio has them.

use std::sync::Arc;

use weft::sync::futures::OwnedNotified;
use weft::sync::{Notify, OnceCell, Semaphore, SetOnce};

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().build().unwrap()
}

static NOTIFY: Notify = Notify::const_new();
static CELL: OnceCell<u32> = OnceCell::const_new();
static CELL_WITH: OnceCell<u32> = OnceCell::const_new_with(9);
static SET: SetOnce<u32> = SetOnce::const_new();
static SET_WITH: SetOnce<u32> = SetOnce::const_new_with(4);
static SEM: Semaphore = Semaphore::const_new(2);

#[test]
fn notified_owned_is_static_and_woken_by_notify_one() {
    rt().block_on(async {
        let notify = Arc::new(Notify::new());
        let fut: OwnedNotified = notify.clone().notified_owned();
        let h = weft::spawn(async move {
            fut.await;
            7
        });
        weft::task::yield_now().await;
        assert!(!h.is_finished());
        notify.notify_one();
        assert_eq!(h.await.unwrap(), 7);
        assert_eq!(Arc::strong_count(&notify), 1, "the finished future released its Arc");
    });
}

#[test]
fn notified_owned_enable_then_notify_waiters() {
    rt().block_on(async {
        let notify = Arc::new(Notify::new());
        let mut a = std::pin::pin!(notify.clone().notified_owned());
        assert!(!a.as_mut().enable());
        notify.notify_waiters();
        a.await;
        // A dropped, enabled future leaves nothing queued: a later permit is stored.
        let mut b = Box::pin(notify.clone().notified_owned());
        b.as_mut().enable();
        drop(b);
        assert_eq!(Arc::strong_count(&notify), 2, "`a` (pinned, still alive) holds one; `b` released its own");
        notify.notify_one();
        let c = notify.clone().notified_owned();
        assert_eq!(futures::FutureExt::now_or_never(c), Some(()));
    });
}

#[test]
fn const_constructors_in_statics() {
    rt().block_on(async {
        NOTIFY.notify_one();
        NOTIFY.notified().await; // the stored permit
        assert_eq!(CELL.get(), None);
        assert_eq!(*CELL.get_or_init(|| async { 3 }).await, 3);
        assert_eq!(CELL_WITH.get(), Some(&9));
        assert!(CELL_WITH.set(1).is_err());
        assert_eq!(SET.get(), None);
        SET.set(5).unwrap();
        assert_eq!(*SET.wait().await, 5);
        assert_eq!(SET_WITH.get(), Some(&4));
        assert!(SET_WITH.set(1).is_err());
        let p = SEM.acquire_many(2).await.unwrap();
        assert_eq!(SEM.available_permits(), 0);
        drop(p);
        assert_eq!(SEM.available_permits(), 2);
    });
}

#[test]
fn blocking_acquires_outside_runtime() {
    let sem = Arc::new(Semaphore::new(3));
    let p1 = sem.blocking_acquire().unwrap();
    let p2 = sem.blocking_acquire_many(2).unwrap();
    assert_eq!(sem.available_permits(), 0);
    drop((p1, p2));
    let o1 = sem.clone().blocking_acquire_owned().unwrap();
    let o2 = sem.clone().blocking_acquire_many_owned(2).unwrap();
    assert_eq!((o1.num_permits(), o2.num_permits(), sem.available_permits()), (1, 2, 0));
    drop((o1, o2));
    sem.close();
    assert!(sem.blocking_acquire().is_err());
    assert!(sem.clone().blocking_acquire_owned().is_err());
}

#[test]
fn permit_split() {
    let sem = Arc::new(Semaphore::new(5));
    let mut p = sem.try_acquire_many(5).unwrap();
    assert!(p.split(6).is_none());
    assert_eq!(p.num_permits(), 5);
    let q = p.split(2).unwrap();
    assert_eq!((p.num_permits(), q.num_permits()), (3, 2));
    drop(q);
    assert_eq!(sem.available_permits(), 2);
    drop(p);
    assert_eq!(sem.available_permits(), 5);

    let mut o = sem.clone().try_acquire_many_owned(4).unwrap();
    assert!(o.split(5).is_none());
    let r = o.split(4).unwrap();
    assert_eq!((o.num_permits(), r.num_permits()), (0, 4));
    drop(r);
    assert_eq!(sem.available_permits(), 5);
}
