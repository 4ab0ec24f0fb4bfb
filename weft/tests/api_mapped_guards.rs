//! Items the public-API diff against tokio found missing (`compat/api-diff/`), checked for
//! behaviour: mapped mutex guards, `Mutex::const_new`, `timeout` over `IntoFuture`, tokio's
//! timer error type, and tokio's module paths (`task::join_set`, `task::futures`, `stream`).

use std::future::IntoFuture;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use weft::sync::{MappedMutexGuard, Mutex, MutexGuard, OwnedMappedMutexGuard, OwnedMutexGuard};

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

struct Pair {
    a: u32,
    b: Vec<u32>,
}

#[test]
fn mapped_guard_holds_the_lock_and_writes_through() {
    rt().block_on(async {
        let m = Mutex::new(Pair { a: 1, b: vec![] });
        {
            let mut a: MappedMutexGuard<'_, u32> = MutexGuard::map(m.lock().await, |p| &mut p.a);
            *a += 41;
            assert!(m.try_lock().is_err(), "the mapped guard must keep the mutex locked");
            let mut first = MappedMutexGuard::map(a, |a| a);
            *first += 1;
            assert_eq!(format!("{first}/{first:?}"), "43/43");
        }
        let guard = m.try_lock().expect("dropping the mapped guard unlocks");
        assert_eq!(guard.a, 43);
    });
}

#[test]
fn try_map_none_gives_the_guard_back_still_locked() {
    rt().block_on(async {
        let m = Mutex::new(Pair { a: 7, b: vec![] });
        let guard = m.lock().await;
        let guard = match MutexGuard::try_map(guard, |p| p.b.first_mut()) {
            Ok(_) => panic!("an empty vector has no first element"),
            Err(guard) => guard,
        };
        assert!(m.try_lock().is_err());
        assert_eq!(guard.a, 7);
        drop(guard);
        let mut g = m.lock().await;
        g.b.push(5);
        drop(g);
        let mut first = MutexGuard::try_map(m.lock().await, |p| p.b.first_mut()).ok().unwrap();
        *first = 6;
        drop(first);
        assert_eq!(m.lock().await.b, [6]);
    });
}

#[test]
fn a_panicking_map_closure_unlocks() {
    rt().block_on(async {
        let m = Mutex::new(Pair { a: 0, b: vec![] });
        let guard = m.lock().await;
        let r = catch_unwind(AssertUnwindSafe(|| MutexGuard::map(guard, |_p| -> &mut u32 { panic!("in map") })));
        assert!(r.is_err());
        assert!(m.try_lock().is_ok(), "the guard was dropped by the unwind, so the mutex is free");
    });
}

#[test]
fn owned_mapped_guard_keeps_the_mutex_alive() {
    rt().block_on(async {
        let m = Arc::new(Mutex::new(Pair { a: 3, b: vec![1, 2] }));
        let guard = m.clone().lock_owned().await;
        let mut b: OwnedMappedMutexGuard<Pair, Vec<u32>> = OwnedMutexGuard::map(guard, |p| &mut p.b);
        let weak = Arc::downgrade(&m);
        drop(m);
        assert!(weak.upgrade().is_some(), "the owned mapped guard holds the Arc");
        b.push(3);
        let last = OwnedMappedMutexGuard::try_map(b, |b| b.last_mut()).ok().unwrap();
        assert_eq!(*last, 3);
        let m = weak.upgrade().unwrap();
        assert!(m.try_lock().is_err());
        drop(last);
        assert_eq!(m.try_lock().unwrap().b, [1, 2, 3]);
    });
}

#[test]
fn owned_mapped_guard_is_send_for_send_data() {
    fn send<T: Send>(_: &T) {}
    rt().block_on(async {
        let m = Arc::new(Mutex::new(Pair { a: 0, b: vec![] }));
        let g = OwnedMutexGuard::map(m.lock_owned().await, |p| &mut p.a);
        send(&g);
        let h = weft::spawn(async move {
            let mut g = g;
            *g = 9;
        });
        h.await.unwrap();
    });
}

static STATIC_LOCK: Mutex<u32> = Mutex::const_new(5);

#[test]
fn const_new_builds_a_static_mutex_and_blocking_lock_owned_locks() {
    assert_eq!(*STATIC_LOCK.blocking_lock(), 5);
    let m = Arc::new(Mutex::new(1));
    let mut g = m.clone().blocking_lock_owned();
    *g += 1;
    assert!(m.try_lock().is_err());
    drop(g);
    assert_eq!(*m.blocking_lock(), 2);
}

/// A type that is `IntoFuture` but not a `Future` (as request builders are).
struct Later(u32);

impl IntoFuture for Later {
    type Output = u32;
    type IntoFuture = std::future::Ready<u32>;
    fn into_future(self) -> Self::IntoFuture {
        std::future::ready(self.0)
    }
}

#[test]
fn timeout_takes_into_future() {
    rt().block_on(async {
        assert_eq!(weft::time::timeout(Duration::from_secs(5), Later(3)).await, Ok(3));
        let deadline = weft::time::Instant::now() + Duration::from_secs(5);
        assert_eq!(weft::time::timeout_at(deadline, Later(4)).await, Ok(4));
    });
}

#[test]
fn timer_error_kinds() {
    use weft::time::error::Error;
    let kinds = [Error::shutdown(), Error::at_capacity(), Error::invalid()];
    let flags: Vec<_> = kinds.iter().map(|e| (e.is_shutdown(), e.is_at_capacity(), e.is_invalid())).collect();
    assert_eq!(flags, [(true, false, false), (false, true, false), (false, false, true)]);
    assert_ne!(kinds[0], kinds[1]);
    let msg = kinds[0].to_string();
    assert!(msg.contains("shut down"), "{msg}");
    let _: &dyn std::error::Error = &kinds[2];
}

#[test]
fn tokio_module_paths() {
    rt().block_on(async {
        let mut set: weft::task::join_set::JoinSet<u32> = weft::task::join_set::JoinSet::new();
        set.spawn(async { 1 });
        assert_eq!(set.join_next().await.unwrap().unwrap(), 1);
        weft::task_local! { static K: u32; }
        let fut: weft::task::futures::TaskLocalFuture<u32, _> = K.scope(8, async { K.get() });
        assert_eq!(fut.await, 8);
    });
}
