//! Items the public-API diff against tokio found missing (`compat/api-diff/`), checked for
//! behaviour: mapped mutex guards, `Mutex::const_new`, `timeout` over `IntoFuture`, tokio's
//! timer error type, tokio's module paths (`task::join_set`, `task::futures`, `stream`),
//! `task::coop::cooperative`, and the smaller impls (`watch::Sender::new`, cell equality,
//! permit channel identity, `LocalSet::id`, fd conversions).

mod support;

use std::future::IntoFuture;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use support::{ct, Pair};
use weft::sync::{MappedMutexGuard, Mutex, MutexGuard, OwnedMappedMutexGuard, OwnedMutexGuard};

#[test]
fn mapped_guard_holds_the_lock_and_writes_through() {
    ct().block_on(async {
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
    ct().block_on(async {
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
    ct().block_on(async {
        let m = Mutex::new(Pair { a: 0, b: vec![] });
        let guard = m.lock().await;
        let r = catch_unwind(AssertUnwindSafe(|| MutexGuard::map(guard, |_p| -> &mut u32 { panic!("in map") })));
        assert!(r.is_err());
        assert!(m.try_lock().is_ok(), "the guard was dropped by the unwind, so the mutex is free");
    });
}

#[test]
fn owned_mapped_guard_keeps_the_mutex_alive() {
    ct().block_on(async {
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
    ct().block_on(async {
        let m = Arc::new(Mutex::new(Pair { a: 0, b: vec![] }));
        support::write_nine_in_a_task(OwnedMutexGuard::map(m.lock_owned().await, |p| &mut p.a)).await;
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
    ct().block_on(async {
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
    ct().block_on(async {
        let mut set: weft::task::join_set::JoinSet<u32> = weft::task::join_set::JoinSet::new();
        set.spawn(async { 1 });
        assert_eq!(set.join_next().await.unwrap().unwrap(), 1);
        weft::task_local! { static K: u32; }
        let fut: weft::task::futures::TaskLocalFuture<u32, _> = K.scope(8, async { K.get() });
        assert_eq!(fut.await, 8);
    });
}

#[test]
fn cooperative_makes_an_always_ready_loop_yield() {
    use std::sync::atomic::{AtomicBool, Ordering};
    ct().block_on(async {
        let ran = Arc::new(AtomicBool::new(false));
        let flag = ran.clone();
        weft::spawn(async move { flag.store(true, Ordering::SeqCst) });
        let mut polls = 0u32;
        // `ready(())` never returns Pending: only the budget can hand the thread to the task.
        while !ran.load(Ordering::SeqCst) && polls < 100_000 {
            weft::task::coop::cooperative(std::future::ready(())).await;
            polls += 1;
        }
        assert!(ran.load(Ordering::SeqCst), "the spawned task never ran in {polls} cooperative polls");
        assert!(polls <= 1_000, "a budget is a few hundred units, yet the loop ran {polls} times");
    });
}

#[test]
fn watch_sender_new_and_default() {
    ct().block_on(async {
        let tx = weft::sync::watch::Sender::new(5u32);
        assert_eq!(tx.receiver_count(), 0);
        let mut rx = tx.subscribe();
        tx.send(6).unwrap();
        rx.changed().await.unwrap();
        assert_eq!(*rx.borrow(), 6);
        let d: weft::sync::watch::Sender<u32> = Default::default();
        assert_eq!(*d.borrow(), 0);
    });
}

#[test]
fn cells_compare_by_value() {
    use weft::sync::{OnceCell, SetOnce};
    assert_eq!(OnceCell::<u32>::new(), OnceCell::new());
    assert_eq!(OnceCell::from(3), OnceCell::from(3));
    assert_ne!(OnceCell::from(3), OnceCell::new());
    let a = SetOnce::from(String::from("x"));
    let b = a.clone();
    assert_eq!(a, b);
    assert_eq!(b.get().map(String::as_str), Some("x"));
    assert_eq!(SetOnce::<u8>::new().clone(), SetOnce::new());
}

#[test]
fn owned_permits_know_their_channel() {
    ct().block_on(async {
        let (tx, _rx) = weft::sync::mpsc::channel::<u8>(4);
        let (other, _orx) = weft::sync::mpsc::channel::<u8>(4);
        let p1 = tx.clone().reserve_owned().await.unwrap();
        let p2 = tx.clone().reserve_owned().await.unwrap();
        let p3 = other.clone().reserve_owned().await.unwrap();
        assert!(p1.same_channel(&p2));
        assert!(!p1.same_channel(&p3));
        assert!(p1.same_channel_as_sender(&tx));
        assert!(!p3.same_channel_as_sender(&tx));
        let mut it = tx.try_reserve_many(2).unwrap();
        assert!(it.next().is_some() && it.next().is_some());
        assert!(it.next().is_none() && it.next().is_none(), "a fused iterator stays done");
    });
}

#[test]
fn local_set_ids_differ() {
    let a = weft::task::LocalSet::new();
    let b = weft::task::LocalSet::new();
    assert_ne!(a.id(), b.id());
    assert_eq!(a.id(), a.id());
}

#[test]
fn enter_guard_is_sync_and_debug_and_local_runtime_is_unwind_safe() {
    fn sync<T: Sync>(_: &T) {}
    fn unwind_safe<T: std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    let rt = ct();
    let guard = rt.enter();
    sync(&guard);
    assert!(format!("{guard:?}").starts_with("EnterGuard"));
    drop(guard);
    unwind_safe::<weft::runtime::LocalRuntime>();
}

#[test]
fn fd_conversions() {
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
    assert_eq!(weft::io::stdin().as_fd().as_raw_fd(), 0);
    assert_eq!(weft::io::stderr().as_fd().as_raw_fd(), 2);
    ct().block_on(async {
        let sock = weft::net::TcpSocket::new_v4().unwrap();
        let fd = sock.into_raw_fd();
        // SAFETY: `fd` was just released by `into_raw_fd`, so this takes sole ownership of it.
        let sock = unsafe { weft::net::TcpSocket::from_raw_fd(fd) };
        sock.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        assert!(sock.local_addr().unwrap().port() != 0);
        let listener = sock.listen(8).unwrap();
        let stream = weft::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let r: &weft::net::TcpStream = stream.as_ref();
        assert_eq!(r.as_raw_fd(), stream.as_raw_fd());

        let path = std::env::temp_dir().join(format!("weft-owned-fd-{}", std::process::id()));
        std::fs::write(&path, b"owned").unwrap();
        let owned: OwnedFd = std::fs::File::open(&path).unwrap().into();
        let mut file = weft::fs::File::from(owned);
        let mut text = String::new();
        weft::io::AsyncReadExt::read_to_string(&mut file, &mut text).await.unwrap();
        assert_eq!(text, "owned");
        std::fs::remove_file(&path).unwrap();
    });
}

#[test]
fn async_fd_try_io_mut_and_mut_guard() {
    ct().block_on(async {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.set_nonblocking(true).unwrap();
        let mut fd = weft::io::unix::AsyncFd::new(a).unwrap();
        std::io::Write::write_all(&mut &b, b"hi").unwrap();
        let mut guard = fd.readable_mut().await.unwrap();
        let inner: &mut weft::io::unix::AsyncFd<_> = guard.get_mut();
        let mut buf = [0u8; 2];
        let n = inner.try_io_mut(weft::io::Interest::READABLE, |s| std::io::Read::read(s, &mut buf)).unwrap();
        assert_eq!(&buf[..n], b"hi");
        let err = fd.try_io_mut(weft::io::Interest::READABLE, |s| std::io::Read::read(s, &mut buf)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
    });
}
