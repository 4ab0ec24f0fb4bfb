//! tokio API items added for the conformance run: `Notify::notify_last`, the mpsc rule that a
//! closed receiver still gets what outstanding permits send, watch sender clones, JoinSet's
//! blocking/local/iterator spawns, `Runtime::{metrics, spawn_blocking}`, `Builder::name` and
//! the I/O event limits, and the small accessors. Every assertion is on behaviour (values,
//! wake-ups, counts), never on timing.

mod support;

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use weft::runtime::Builder;
use weft::sync::{mpsc, watch, Notify, Semaphore, SetOnce};

/// A waker that counts its wake-ups.
#[derive(Default)]
struct CountWakes(AtomicUsize);

impl Wake for CountWakes {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

fn counting_waker() -> (Arc<CountWakes>, Waker) {
    let counter = Arc::new(CountWakes::default());
    (counter.clone(), Waker::from(counter))
}

fn poll_once<F: Future>(f: std::pin::Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(waker))
}

#[test]
fn notify_last_wakes_the_newest_waiter_and_a_dropped_pick_passes_it_on() {
    let notify = Notify::new();
    let (_, waker) = counting_waker();
    let mut a = pin!(notify.notified());
    let mut b = pin!(notify.notified());
    let mut c = Box::pin(notify.notified());
    assert!(poll_once(a.as_mut(), &waker).is_pending());
    assert!(poll_once(b.as_mut(), &waker).is_pending());
    assert!(poll_once(c.as_mut(), &waker).is_pending());
    notify.notify_last();
    drop(c); // picked but never observed: the notification goes to the next newest, `b`
    assert!(poll_once(b.as_mut(), &waker).is_ready());
    assert!(poll_once(a.as_mut(), &waker).is_pending());
    notify.notify_last();
    assert!(poll_once(a.as_mut(), &waker).is_ready());
    // With nobody waiting it stores a permit, like notify_one.
    notify.notify_last();
    assert!(poll_once(pin!(notify.notified()), &waker).is_ready());
}

#[test]
fn closed_receiver_still_receives_from_an_outstanding_permit() {
    let (tx, mut rx) = mpsc::channel::<u32>(2);
    let permit = tx.try_reserve().unwrap();
    rx.close();
    assert!(tx.try_send(1).is_err(), "closed: new sends fail");
    let (wakes, waker) = counting_waker();
    let mut recv = Box::pin(rx.recv());
    assert!(poll_once(recv.as_mut(), &waker).is_pending(), "a permit is out: not the end yet");
    permit.send(7);
    assert_eq!(wakes.0.load(SeqCst), 1);
    assert_eq!(poll_once(recv.as_mut(), &waker), Poll::Ready(Some(7)));
    drop(recv);
    assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected));
}

#[test]
fn dropping_the_last_permit_wakes_a_closed_receiver_with_none() {
    let (tx, mut rx) = mpsc::channel::<()>(4);
    let permits = tx.try_reserve_many(2).unwrap();
    rx.close();
    assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Empty));
    let (wakes, waker) = counting_waker();
    let mut recv = Box::pin(rx.recv());
    assert!(poll_once(recv.as_mut(), &waker).is_pending());
    drop(permits);
    assert_eq!(wakes.0.load(SeqCst), 1);
    assert_eq!(poll_once(recv.as_mut(), &waker), Poll::Ready(None));
}

#[test]
fn cancelled_reservation_wakes_a_closed_receiver() {
    let (tx, mut rx) = mpsc::channel::<()>(2);
    let held = tx.try_reserve().unwrap();
    let (_, noop) = counting_waker();
    let mut reserve = Box::pin(tx.reserve_many(2));
    assert!(poll_once(reserve.as_mut(), &noop).is_pending());
    rx.close();
    let (wakes, waker) = counting_waker();
    let mut recv = Box::pin(rx.recv());
    assert!(poll_once(recv.as_mut(), &waker).is_pending());
    drop(held); // goes to the queued reservation: the channel is not idle yet
    assert_eq!(wakes.0.load(SeqCst), 0);
    drop(reserve); // hands its slot back: idle now
    assert_eq!(wakes.0.load(SeqCst), 1);
    assert_eq!(poll_once(recv.as_mut(), &waker), Poll::Ready(None));
}

#[test]
fn reserve_many_above_capacity_fails_instead_of_panicking() {
    let (tx, _rx) = mpsc::channel::<()>(1);
    assert!(matches!(tx.try_reserve_many(2), Err(mpsc::error::TrySendError::Full(()))));
    assert!(matches!(tx.try_reserve_many(usize::MAX), Err(mpsc::error::TrySendError::Full(()))));
    assert!(futures::executor::block_on(tx.reserve_many(2)).is_err());
}

#[test]
fn dropping_the_receiver_drops_every_queued_value_even_if_one_panics() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            DROPS.fetch_add(1, SeqCst);
            if self.0 {
                panic!("bomb");
            }
        }
    }
    let (tx, rx) = mpsc::unbounded_channel();
    tx.send(Bomb(true)).unwrap_or_else(|_| unreachable!());
    tx.send(Bomb(false)).unwrap_or_else(|_| unreachable!());
    tx.send(Bomb(false)).unwrap_or_else(|_| unreachable!());
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(rx)));
    assert!(result.is_err());
    assert_eq!(DROPS.load(SeqCst), 3);
}

#[test]
fn blocking_recv_many_outside_a_runtime() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    for i in 0..3 {
        tx.send(i).unwrap();
    }
    drop(tx);
    let mut buf = Vec::new();
    assert_eq!(rx.blocking_recv_many(&mut buf, 10), 3);
    assert_eq!(buf, [0, 1, 2]);
    assert_eq!(rx.blocking_recv_many(&mut buf, 10), 0);
}

#[test]
fn watch_sender_clones_close_the_channel_only_when_all_are_gone() {
    let (tx, rx) = watch::channel(0);
    let tx2 = tx.clone();
    assert_eq!(tx.sender_count(), 2);
    drop(tx);
    assert!(!rx.is_closed());
    tx2.send(5).unwrap();
    assert_eq!(*rx.borrow(), 5);
    drop(tx2);
    assert!(rx.is_closed());
    assert!(rx.has_changed().is_err());
}

#[test]
fn small_accessors() {
    let sem = Semaphore::new(3);
    let permit = sem.try_acquire().unwrap();
    assert!(std::ptr::eq(permit.semaphore(), &sem));

    let cell = weft::sync::OnceCell::new();
    cell.set(1).unwrap();
    let err = cell.set(2).unwrap_err();
    assert!(err.is_already_init_err() && !err.is_initializing_err());

    let set = SetOnce::from(4);
    assert_eq!(set.get(), Some(&4));

    let tx = weft::sync::broadcast::Sender::<u8>::new(2);
    assert_eq!(tx.receiver_count(), 0);
    let mut rx = tx.subscribe();
    tx.send(9).unwrap();
    assert_eq!(rx.try_recv(), Ok(9));
}

weft::task_local! {
    static KEY: u32;
}

#[test]
fn task_local_try_get() {
    assert!(KEY.try_get().is_err());
    support::ct().block_on(KEY.scope(3, async { assert_eq!(KEY.try_get().unwrap(), 3) }));
}

#[test]
fn join_set_spawns_blocking_local_and_from_iterators() {
    let rt = support::ct();
    rt.block_on(async {
        let mut set: weft::task::JoinSet<u32> = (0..3).map(|i| async move { i }).collect();
        set.extend((3..5).map(|i| async move { i }));
        set.spawn_blocking(|| 5);
        set.spawn_blocking_on(|| 6, &weft::runtime::Handle::current());
        let mut got = Vec::new();
        while let Some(r) = set.join_next().await {
            got.push(r.unwrap());
        }
        got.sort();
        assert_eq!(got, (0..7).collect::<Vec<_>>());

        let local = weft::task::LocalSet::new();
        let mut set = weft::task::JoinSet::new();
        let rc = std::rc::Rc::new(8);
        set.spawn_local_on(async move { *rc }, &local);
        local.run_until(async { assert_eq!(set.join_next().await.unwrap().unwrap(), 8) }).await;
    });
}

#[test]
fn runtime_metrics_spawn_blocking_and_name() {
    let rt = Builder::new_multi_thread().worker_threads(2).name("parity-rt").build().unwrap();
    assert_eq!(rt.metrics().num_workers(), 2);
    assert_eq!(rt.handle().name(), Some("parity-rt"));
    assert_eq!(rt.block_on(rt.spawn_blocking(|| 40 + 2)).unwrap(), 42);
    assert_eq!(rt.block_on(rt.handle().spawn_blocking(|| 1)).unwrap(), 1);
    assert_eq!(support::ct().handle().name(), None);
}

#[test]
#[should_panic(expected = "runtime name shouldn't be empty")]
fn empty_runtime_name_panics() {
    Builder::new_current_thread().name(" ");
}

#[test]
#[should_panic(expected = "max_io_events_per_busy_tick must be non-zero")]
fn zero_busy_tick_panics() {
    Builder::new_multi_thread().max_io_events_per_busy_tick(0);
}

#[test]
fn runtime_is_unwind_safe() {
    fn is_ref_unwind_safe<T: std::panic::RefUnwindSafe>() {}
    is_ref_unwind_safe::<weft::runtime::Runtime>();
}

trait Method {
    fn run(self) -> u32;
}

impl Method for u32 {
    #[weft::main]
    async fn run(self) -> u32 {
        self + 1
    }
}

#[test]
fn main_attribute_on_a_method_taking_self() {
    assert_eq!(41.run(), 42);
}

#[weft::test(name = "named-by-attribute")]
async fn test_attribute_names_the_runtime() {
    assert_eq!(weft::runtime::Handle::current().name(), Some("named-by-attribute"));
}

#[weft::test]
async fn select_with_only_else_and_a_borrowed_temporary() {
    let v = weft::select! {
        else => 1,
    };
    assert_eq!(v, 1);
    let w = weft::select! {
        x = &mut std::future::ready(2) => x,
    };
    assert_eq!(w, 2);
}

#[weft::test]
async fn select_infers_a_disabled_branch_whose_output_is_unconstrained() {
    let f = std::future::poll_fn(|_| panic!("a disabled branch is never polled"));
    let (tx, rx) = weft::sync::oneshot::channel::<()>();
    tx.send(()).unwrap();
    weft::select! {
        _ = f, if false => unreachable!(),
        r = rx => r.unwrap(),
    }
}

static LOCK: weft::sync::RwLock<(u32, u32)> = weft::sync::RwLock::const_with_max_readers((1, 2), 4);

#[test]
fn rwlock_maps_and_downgrade_maps_keep_readers_out_until_done() {
    let (_, waker) = counting_waker();
    let lock = weft::sync::RwLock::new((10u32, String::from("s")));
    let write = futures::executor::block_on(lock.write());
    let mut read = Box::pin(lock.read());
    assert!(poll_once(read.as_mut(), &waker).is_pending());
    let write = weft::sync::RwLockWriteGuard::try_downgrade_map(write, |_| None::<&u32>).unwrap_err();
    assert!(poll_once(read.as_mut(), &waker).is_pending(), "declined: still exclusive");
    let first = weft::sync::RwLockWriteGuard::downgrade_map(write, |v| &v.0);
    let Poll::Ready(second) = poll_once(read.as_mut(), &waker) else { panic!("downgraded: readers get in") };
    assert_eq!(*first, 10);
    let name = weft::sync::RwLockReadGuard::map(second, |v| v.1.as_str());
    assert_eq!(&*name, "s");
    drop((first, name));
    assert!(lock.try_write().is_ok(), "every permit came back");

    let guard = LOCK.try_read().unwrap();
    assert_eq!(*weft::sync::RwLockReadGuard::map(guard, |v| &v.1), 2);
}

#[test]
#[should_panic(expected = "a RwLock may not be created with 0 readers")]
fn rwlock_with_zero_readers_panics() {
    weft::sync::RwLock::with_max_readers(0, 0);
}

#[test]
fn a_park_hook_that_makes_work_keeps_the_current_thread_runtime_awake() {
    // If the hook's spawn (or its same-thread wake of `block_on`) were ignored, the runtime
    // would park with nothing left to wake it and this test would never finish.
    let notify = Arc::new(Notify::new());
    let hook_notify = notify.clone();
    let calls = Arc::new(AtomicUsize::new(0));
    let hook_calls = calls.clone();
    let rt = Builder::new_current_thread()
        .enable_all()
        .on_thread_park(move || {
            if hook_calls.fetch_add(1, SeqCst) == 0 {
                let n = hook_notify.clone();
                weft::spawn(async move { n.notify_one() });
            }
        })
        .build()
        .unwrap();
    rt.block_on(notify.notified());
    assert!(calls.load(SeqCst) >= 1);

    // The hook wakes the `block_on` future itself (a same-thread wake).
    let woken_by_hook = Arc::new(Notify::new());
    let hook_target = woken_by_hook.clone();
    let rt = Builder::new_current_thread()
        .enable_all()
        .on_thread_park(move || hook_target.notify_waiters())
        .build()
        .unwrap();
    rt.block_on(woken_by_hook.notified());
}

#[test]
fn a_panicking_task_drops_its_future_while_the_panic_unwinds() {
    struct Boom(Option<std::sync::mpsc::Sender<bool>>);
    impl Future for Boom {
        type Output = ();
        fn poll(self: std::pin::Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
            panic!("boom");
        }
    }
    impl Drop for Boom {
        fn drop(&mut self) {
            let _ = self.0.take().unwrap().send(std::thread::panicking());
        }
    }
    for (_flavor, rt) in support::flavors() {
        let (tx, rx) = std::sync::mpsc::channel();
        let err = rt.block_on(rt.spawn(Boom(Some(tx)))).unwrap_err();
        assert!(err.is_panic());
        assert!(rx.recv().unwrap(), "dropped during unwinding, like tokio");
    }
}

#[weft::test]
async fn join_and_try_join_over_a_pinned_tuple() {
    let (tx, rx) = weft::sync::oneshot::channel::<u32>();
    let (a, b) = weft::join!(rx, async move {
        weft::task::yield_now().await;
        tx.send(5).unwrap();
        6
    });
    assert_eq!((a.unwrap(), b), (5, 6));
    let pending_forever = std::future::pending::<Result<u32, &str>>();
    let r = weft::try_join!(biased; async { Err::<u32, &str>("early") }, pending_forever);
    assert_eq!(r, Err("early"));
    // Not larger than tokio's (tokio's own tests assert 32 bytes for one ready future).
    let one = async {
        let r = std::future::ready(0i32);
        weft::join!(r)
    };
    assert!(std::mem::size_of_val(&one) <= 32);
}
#[test]
fn runtime_dropped_in_a_thread_local_destructor() {
    use std::cell::RefCell;
    thread_local!(static R: RefCell<Option<weft::runtime::Runtime>> = const { RefCell::new(None) });
    std::thread::spawn(|| {
        R.with(|cell| {
            *cell.borrow_mut() = Some(weft::runtime::Builder::new_current_thread().enable_all().build().unwrap())
        });
        let _rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    })
    .join()
    .unwrap();
    std::thread::spawn(|| {
        R.with(|cell| {
            *cell.borrow_mut() =
                Some(weft::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap())
        });
    })
    .join()
    .unwrap();
}

#[test]
fn spawn_local_under_a_local_runtime_or_local_set_guard() {
    let rt = weft::runtime::LocalRuntime::new().unwrap();
    let (tx, rx) = weft::sync::oneshot::channel();
    {
        let _guard = rt.enter();
        weft::task::spawn_local(async move {
            weft::task::yield_now().await;
            tx.send(5).unwrap();
        });
    }
    assert_eq!(rt.block_on(async move { rx.await.unwrap() }), 5);

    let local = weft::task::LocalSet::new();
    let handle = {
        let _guard = local.enter();
        weft::task::spawn_local(async { 7 })
    };
    assert_eq!(local.block_on(&support::ct(), handle).unwrap(), 7);
}

#[test]
fn a_lock_attempt_out_of_coop_budget_still_takes_its_fifo_place() {
    support::ct().block_on(async {
        let m = Arc::new(weft::sync::Mutex::new(()));
        let g0 = m.clone().lock_owned().await;
        while futures::FutureExt::now_or_never(weft::task::consume_budget()).is_some() {}
        // Out of budget: both attempts are pending, but each has queued for the lock.
        let (a_wakes, a_waker) = counting_waker();
        let (b_wakes, b_waker) = counting_waker();
        let mut a = Box::pin(m.clone().lock_owned());
        assert!(poll_once(a.as_mut(), &a_waker).is_pending());
        let mut b = Box::pin(m.clone().lock_owned());
        assert!(poll_once(b.as_mut(), &b_waker).is_pending());
        drop(g0);
        assert_eq!((a_wakes.0.load(SeqCst), b_wakes.0.load(SeqCst)), (1, 0), "the first in line gets it");
    });
}

/// tokio's broadcast halves are `Send` and `Sync` for any `T: Send` (tokio-stream's
/// `BroadcastStream` boxes a `recv` future as `Send`); a `Send + !Sync` value type checks it.
#[test]
fn broadcast_halves_and_recv_are_send_for_send_but_not_sync_values() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let (tx, mut rx) = weft::sync::broadcast::channel::<std::cell::Cell<u8>>(4);
    send_sync(&tx);
    send_sync(&rx);
    send(&rx.recv());
}
