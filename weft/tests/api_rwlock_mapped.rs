//! tokio's `RwLock` guard API, checked for behaviour: mapped write guards (borrowed and owned),
//! `try_map`, `into_mapped`, `downgrade_map` on owned guards, `OwnedRwLockReadGuard<T, U>`'s
//! mapping, `rwlock()`, `try_read_owned`/`try_write_owned`, `From`, `Display`, and the auto
//! traits (`Send`, `Sync`, `Unpin`) with tokio's bounds.

mod support;

use std::cell::Cell;
use std::marker::PhantomPinned;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use support::{ct, Pair};
use weft::sync::{
    OwnedRwLockMappedWriteGuard, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock, RwLockMappedWriteGuard,
    RwLockReadGuard, RwLockWriteGuard,
};

#[test]
fn mapped_write_guard_writes_through_and_stays_exclusive() {
    ct().block_on(async {
        let lock = RwLock::new(Pair { a: 1, b: vec![] });
        {
            let mut a: RwLockMappedWriteGuard<'_, u32> = RwLockWriteGuard::map(lock.write().await, |p| &mut p.a);
            *a += 41;
            assert!(lock.try_read().is_err(), "a mapped write guard keeps readers out");
            assert!(lock.try_write().is_err(), "and writers");
            let mut a = RwLockMappedWriteGuard::map(a, |a| a);
            *a += 1;
            let a = RwLockMappedWriteGuard::try_map(a, |_| None::<&mut u8>).unwrap_err();
            assert!(lock.try_read().is_err());
            assert_eq!(format!("{a}/{a:?}"), "43/43");
        }
        assert_eq!(lock.try_read().expect("dropping the mapped guard unlocks").a, 43);

        let mut whole = RwLockWriteGuard::into_mapped(lock.write().await);
        whole.b.push(7);
        assert!(lock.try_read().is_err());
        drop(whole);
        assert_eq!(lock.read().await.b, [7]);
    });
}

#[test]
fn try_map_none_gives_the_write_guard_back_still_locked() {
    ct().block_on(async {
        let lock = RwLock::new(Pair { a: 7, b: vec![] });
        let guard = match RwLockWriteGuard::try_map(lock.write().await, |p| p.b.first_mut()) {
            Ok(_) => panic!("an empty vector has no first element"),
            Err(guard) => guard,
        };
        assert!(lock.try_read().is_err(), "the guard given back still holds the lock");
        assert_eq!(guard.a, 7);
        drop(guard);

        lock.write().await.b.push(5);
        let mut first = RwLockWriteGuard::try_map(lock.write().await, |p| p.b.first_mut()).ok().unwrap();
        *first = 6;
        drop(first);
        assert_eq!(lock.read().await.b, [6]);

        // The owned write guard, and the owned read guard, give themselves back too.
        let lock = Arc::new(lock);
        let guard = OwnedRwLockWriteGuard::try_map(lock.clone().write_owned().await, |p| p.b.get_mut(9)).unwrap_err();
        assert!(lock.try_read().is_err());
        drop(guard);
        let read = OwnedRwLockReadGuard::try_map(lock.clone().read_owned().await, |p| p.b.get(9)).unwrap_err();
        assert_eq!(read.a, 7);
        assert!(lock.try_write().is_err(), "the read guard given back still holds its permit");
        drop(read);
        assert!(lock.try_write().is_ok());
    });
}

#[test]
fn a_panicking_map_closure_releases_the_lock() {
    ct().block_on(async {
        let lock = Arc::new(RwLock::new(Pair { a: 0, b: vec![] }));

        let guard = lock.write().await;
        let r = catch_unwind(AssertUnwindSafe(|| RwLockWriteGuard::map(guard, |_| -> &mut u32 { panic!("in map") })));
        assert!(r.is_err());
        assert!(lock.try_write().is_ok(), "the write guard was dropped by the unwind");

        let guard = RwLockWriteGuard::into_mapped(lock.write().await);
        let r = catch_unwind(AssertUnwindSafe(|| RwLockMappedWriteGuard::map(guard, |_| -> &mut u32 { panic!() })));
        assert!(r.is_err());
        assert!(lock.try_write().is_ok(), "the mapped write guard was dropped by the unwind");

        let guard = lock.clone().write_owned().await;
        let r = catch_unwind(AssertUnwindSafe(|| OwnedRwLockWriteGuard::map(guard, |_| -> &mut u32 { panic!() })));
        assert!(r.is_err());
        assert!(lock.try_write().is_ok(), "the owned write guard was dropped by the unwind");

        let guard = lock.clone().write_owned().await;
        let r =
            catch_unwind(AssertUnwindSafe(|| OwnedRwLockWriteGuard::downgrade_map(guard, |_| -> &u32 { panic!() })));
        assert!(r.is_err());
        assert!(lock.try_write().is_ok(), "a panicking downgrade_map releases every permit");

        let guard = lock.clone().read_owned().await;
        let r = catch_unwind(AssertUnwindSafe(|| OwnedRwLockReadGuard::map(guard, |_| -> &u32 { panic!() })));
        assert!(r.is_err());
        assert!(lock.try_write().is_ok(), "the owned read guard was dropped by the unwind");
    });
}

#[test]
fn owned_guards_keep_the_lock_alive() {
    ct().block_on(async {
        let lock = Arc::new(RwLock::new(Pair { a: 3, b: vec![1, 2] }));
        let weak = Arc::downgrade(&lock);
        let guard = lock.clone().write_owned().await;
        assert!(Arc::ptr_eq(OwnedRwLockWriteGuard::rwlock(&guard), &lock));
        let mut b: OwnedRwLockMappedWriteGuard<Pair, Vec<u32>> = OwnedRwLockWriteGuard::map(guard, |p| &mut p.b);
        drop(lock);
        assert!(weak.upgrade().is_some(), "the owned mapped guard holds the Arc");
        b.push(3);
        let last = OwnedRwLockMappedWriteGuard::try_map(b, |b| b.last_mut()).ok().unwrap();
        assert_eq!(*last, 3);
        let mut last = OwnedRwLockMappedWriteGuard::map(last, |l| l);
        *last += 1;
        let lock = weak.upgrade().unwrap();
        assert!(Arc::ptr_eq(OwnedRwLockMappedWriteGuard::rwlock(&last), &lock));
        assert!(lock.try_read().is_err());
        drop(last);
        assert_eq!(lock.try_read().unwrap().b, [1, 2, 4]);

        let whole: OwnedRwLockMappedWriteGuard<Pair> =
            OwnedRwLockWriteGuard::into_mapped(lock.clone().write_owned().await);
        assert_eq!(whole.a, 3);
        assert!(lock.try_read().is_err());
        drop(whole);

        let read = lock.clone().read_owned().await;
        let b: OwnedRwLockReadGuard<Pair, Vec<u32>> = OwnedRwLockReadGuard::map(read, |p| &p.b);
        let second: OwnedRwLockReadGuard<Pair, u32> = OwnedRwLockReadGuard::try_map(b, |b| b.get(1)).ok().unwrap();
        drop(lock);
        assert_eq!(*second, 2);
        let lock = OwnedRwLockReadGuard::rwlock(&second).clone();
        assert!(lock.try_read().is_ok(), "readers share");
        assert!(lock.try_write().is_err());
        drop(second);
        assert!(lock.try_write().is_ok());
    });
}

#[test]
fn downgrade_map_leaves_a_read_lock() {
    ct().block_on(async {
        let lock = Arc::new(RwLock::new(Pair { a: 10, b: vec![4] }));

        let guard = lock.clone().write_owned().await;
        let guard = OwnedRwLockWriteGuard::try_downgrade_map(guard, |p| p.b.get(3)).unwrap_err();
        assert!(lock.try_read().is_err(), "declined: still exclusive");
        let a: OwnedRwLockReadGuard<Pair, u32> = OwnedRwLockWriteGuard::downgrade_map(guard, |p| &p.a);
        assert_eq!(*a, 10);
        assert_eq!(lock.try_read().expect("another reader gets in").a, 10);
        assert!(lock.try_write().is_err(), "a writer does not");
        drop(a);
        assert!(lock.try_write().is_ok(), "every permit came back");

        let guard = lock.clone().write_owned().await;
        let b = OwnedRwLockWriteGuard::try_downgrade_map(guard, |p| p.b.first()).ok().unwrap();
        assert_eq!(*b, 4);
        assert!(lock.clone().try_read_owned().is_ok());
        assert!(lock.clone().try_write_owned().is_err());
        drop(b);

        let read = lock.clone().write_owned().await.downgrade();
        assert_eq!(read.a, 10);
        assert!(lock.try_read().is_ok());
        assert!(lock.try_write().is_err());
        drop(read);

        // The borrowed write guard's downgrade_map, and a reader waiting since before it.
        let w = lock.write().await;
        let mut waiting = Box::pin(lock.read());
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        let a = RwLockWriteGuard::downgrade_map(w, |p| &p.a);
        assert!(futures::poll!(waiting.as_mut()).is_ready(), "downgraded: the waiting reader gets in");
        assert!(lock.try_write().is_err());
        drop((a, waiting));
        assert!(lock.try_write().is_ok());
    });
}

#[test]
fn try_read_owned_and_try_write_owned() {
    let lock = Arc::new(RwLock::from(1u32));

    let w = lock.clone().try_write_owned().expect("a free lock");
    assert!(lock.clone().try_read_owned().is_err(), "a writer holds it");
    assert!(lock.clone().try_write_owned().is_err());
    assert_eq!(Arc::strong_count(&lock), 2, "a failed try_*_owned drops its Arc");
    drop(w);

    let r1 = lock.clone().try_read_owned().expect("a free lock");
    let r2 = lock.clone().try_read_owned().expect("readers share");
    assert!(lock.clone().try_write_owned().is_err(), "readers hold it");
    assert_eq!(*r1 + *r2, 2);
    drop((r1, r2));

    let mut w = lock.clone().try_write_owned().unwrap();
    *w = 5;
    drop(w);
    assert_eq!(*lock.clone().try_read_owned().unwrap(), 5);
    assert_eq!(Arc::strong_count(&lock), 1);
}

#[test]
fn display_forwards_to_the_data() {
    ct().block_on(async {
        let lock = Arc::new(RwLock::from(String::from("hi")));
        assert_eq!(format!("{}", lock.read().await), "hi");
        assert_eq!(format!("{}", lock.write().await), "hi");
        assert_eq!(format!("{}", RwLockWriteGuard::into_mapped(lock.write().await)), "hi");
        assert_eq!(format!("{}", RwLockReadGuard::map(lock.read().await, |s| &s[1..])), "i");
        assert_eq!(format!("{}", lock.clone().read_owned().await), "hi");
        assert_eq!(format!("{}", lock.clone().write_owned().await), "hi");
        let mapped = OwnedRwLockWriteGuard::map(lock.clone().write_owned().await, |s| s.as_mut_str());
        assert_eq!(format!("{mapped} {mapped:?}"), "hi \"hi\"");
        drop(mapped);
        let tail = OwnedRwLockReadGuard::map(lock.clone().read_owned().await, |s| &s[1..]);
        assert_eq!(format!("{tail} {tail:?}"), "i \"i\"");
    });
}

#[test]
fn owned_mapped_guard_is_send() {
    ct().block_on(async {
        let lock = Arc::new(RwLock::new(Pair { a: 0, b: vec![] }));
        support::write_nine_in_a_task(OwnedRwLockWriteGuard::map(lock.clone().write_owned().await, |p| &mut p.a)).await;
        let r = OwnedRwLockReadGuard::map(lock.clone().read_owned().await, |p| &p.a);
        let h = weft::spawn(async move { *r });
        assert_eq!(h.await.unwrap(), 9);
        assert!(lock.try_write().is_ok());
    });
}

// Auto traits, with tokio's bounds: a type that is `Send` but not `Sync` (`Cell`), and one that
// is neither (`*const u8` in a struct), must make exactly tokio's guards lose the trait.
#[allow(dead_code)]
fn auto_traits_follow_tokio() {
    fn send<T: ?Sized + Send>() {}
    fn sync<T: ?Sized + Sync>() {}
    fn unpin<T: ?Sized + Unpin>() {}

    send::<RwLock<Cell<u8>>>();
    send::<RwLockReadGuard<'static, [u8]>>();
    sync::<RwLockReadGuard<'static, str>>();
    send::<RwLockWriteGuard<'static, [u8]>>();
    sync::<RwLockWriteGuard<'static, [u8]>>();
    send::<RwLockMappedWriteGuard<'static, [u8]>>();
    sync::<RwLockMappedWriteGuard<'static, [u8]>>();
    send::<OwnedRwLockReadGuard<Vec<u8>, [u8]>>();
    sync::<OwnedRwLockReadGuard<Vec<u8>, [u8]>>();
    send::<OwnedRwLockWriteGuard<[u8]>>();
    sync::<OwnedRwLockWriteGuard<[u8]>>();
    send::<OwnedRwLockMappedWriteGuard<Vec<u8>, [u8]>>();
    sync::<OwnedRwLockMappedWriteGuard<Vec<u8>, [u8]>>();

    // The borrowed guards are `Unpin` for every `T`; the owned ones only for `T: Unpin`.
    unpin::<RwLockReadGuard<'static, PhantomPinned>>();
    unpin::<RwLockWriteGuard<'static, PhantomPinned>>();
    unpin::<RwLockMappedWriteGuard<'static, PhantomPinned>>();
    unpin::<OwnedRwLockReadGuard<u8, PhantomPinned>>();
    unpin::<OwnedRwLockMappedWriteGuard<u8, PhantomPinned>>();
    unpin::<OwnedRwLockWriteGuard<u8>>();
}

/// Whether `$ty` implements `$trait`, at compile time: the inherent `YES` of `Probe<$ty>`
/// exists only when the bound holds, and otherwise the blanket trait's `false` is found.
macro_rules! implements {
    ($ty:ty: $trait:path) => {{
        #[allow(dead_code)]
        trait Fallback {
            const YES: bool = false;
        }
        impl<T: ?Sized> Fallback for T {}
        struct Probe<T: ?Sized>(std::marker::PhantomData<T>);
        #[allow(dead_code)]
        impl<T: ?Sized + $trait> Probe<T> {
            const YES: bool = true;
        }
        <Probe<$ty>>::YES
    }};
}

#[test]
fn auto_traits_are_tokios_exactly() {
    // `T: Send + !Sync` (`Cell`): tokio's guards ask `T: Sync` of every `Send`/`Sync`, so none
    // has either.
    assert!(implements!(RwLock<Cell<u8>>: Send));
    assert!(!implements!(RwLockReadGuard<'static, Cell<u8>>: Send));
    assert!(!implements!(RwLockReadGuard<'static, Cell<u8>>: Sync));
    assert!(!implements!(RwLockWriteGuard<'static, Cell<u8>>: Send));
    assert!(!implements!(RwLockWriteGuard<'static, Cell<u8>>: Sync));
    assert!(!implements!(RwLockMappedWriteGuard<'static, Cell<u8>>: Send));
    assert!(!implements!(RwLockMappedWriteGuard<'static, Cell<u8>>: Sync));
    assert!(!implements!(OwnedRwLockReadGuard<Cell<u8>>: Send));
    assert!(!implements!(OwnedRwLockReadGuard<u8, Cell<u8>>: Send));
    assert!(!implements!(OwnedRwLockReadGuard<u8, Cell<u8>>: Sync));
    assert!(!implements!(OwnedRwLockWriteGuard<Cell<u8>>: Send));
    assert!(!implements!(OwnedRwLockMappedWriteGuard<u8, Cell<u8>>: Send));
    assert!(!implements!(OwnedRwLockMappedWriteGuard<u8, Cell<u8>>: Sync));
    // `T: Sync + !Send` (std's `MutexGuard`): a read guard is `Send` (it only reads) but, as in
    // tokio, not `Sync`; the write guards are neither.
    type NotSend = std::sync::MutexGuard<'static, u8>;
    assert!(implements!(RwLockReadGuard<'static, NotSend>: Send));
    assert!(!implements!(RwLockReadGuard<'static, NotSend>: Sync));
    assert!(!implements!(RwLockWriteGuard<'static, NotSend>: Sync));
    assert!(!implements!(RwLockMappedWriteGuard<'static, NotSend>: Send));
    assert!(implements!(OwnedRwLockReadGuard<u8, NotSend>: Send));
    assert!(!implements!(OwnedRwLockReadGuard<u8, NotSend>: Sync));
    assert!(!implements!(OwnedRwLockMappedWriteGuard<u8, NotSend>: Send));
    // `Unpin`: the owned guards follow `T` (not `U`), as tokio's; the borrowed ones always are.
    assert!(!implements!(OwnedRwLockReadGuard<PhantomPinned>: Unpin));
    assert!(!implements!(OwnedRwLockWriteGuard<PhantomPinned>: Unpin));
    assert!(!implements!(OwnedRwLockMappedWriteGuard<PhantomPinned, u8>: Unpin));
    assert!(implements!(OwnedRwLockMappedWriteGuard<u8, PhantomPinned>: Unpin));
    assert!(implements!(RwLockMappedWriteGuard<'static, PhantomPinned>: Unpin));
}
