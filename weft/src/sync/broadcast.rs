//! `broadcast`: every receiver sees every value (cloned), from a fixed-size ring.
//!
//! # Algorithm
//! * The ring has `capacity` slots (rounded up to a power of two); each slot has its own
//!   blocking mutex holding `(position, value)`.
//! * A send takes the tail mutex, writes position `tail` into slot `tail % capacity` under that
//!   slot's lock, bumps `tail`, takes the wakers of the receivers that are waiting, and
//!   wakes them after unlocking. A send never waits for slow receivers: it overwrites the
//!   oldest value, which is how a bounded broadcast keeps memory bounded.
//! * A receive locks only the slot at its own cursor, so receivers at different cursors read
//!   in parallel with each other and with sends to other slots. If the slot holds its cursor's position it
//!   clones the value; if it holds an older position nothing was sent yet (the receiver then
//!   registers its waker under the tail mutex, re-checking first); if it holds a newer one the
//!   receiver fell behind by a whole lap and gets `Lagged(n)`, its cursor moved to the oldest
//!   value still held.
//! * Each receiver has one waker slot in a slab under the tail mutex (a receive takes
//!   `&mut self`, so one is enough); a dropped receive future leaves at most a stale waker, and
//!   a dropped receiver frees its slot.
//!
//! # Claims: when a value goes
//! As in tokio, a value lives only while some receiver still has to see it. A send stores,
//! beside the value, `rem` = the number of receivers subscribed at that moment (each of them
//! has its cursor at or before the new position, so each will meet it). Every such receiver
//! gives its claim back exactly once, by one of:
//! * reading it — the cursor moves past the position *before* `T::clone` runs, and a guard
//!   (`ReleaseOnUnwind`) gives the claim back if the clone panics, `read` otherwise; so a
//!   panicking clone skips that value, as in tokio;
//! * being dropped — `Receiver::drop` walks the positions from its cursor to the tail it saw
//!   when it unsubscribed and gives back the claim on each that is still in its slot;
//! * the value being overwritten — a lapped receiver's claim vanishes with the value (the new
//!   value's `rem` is set afresh), and `Lagged` moves its cursor past only overwritten positions.
//!
//! The claim that brings `rem` to 0 takes the value out of its slot; it is dropped after the
//! slot lock is released. `rem` is a plain field under the slot mutex, which every reader holds
//! anyway while it clones: no lock-free protocol is added, and readers of different slots still
//! run in parallel. A never-written or fully consumed slot has `rem == 0`.
//!
//! Invariant (what `Sender::len` relies on): among the positions still in the ring, the ones
//! with `rem == 0` are a prefix, oldest first. A receiver alive at both of two sends meets them
//! in order, reading or giving back the older first (its drop walks upwards too); one that
//! subscribed in between has no claim on the older. So `len` binary-searches the ring from the
//! oldest slot for the first one still claimed, under the tail mutex (so no send moves the
//! ring meanwhile), and `is_empty` looks at the newest slot only.
//!
//! Values are dropped exactly once: when their last claim goes, when their slot is
//! overwritten, or with the channel — always outside every lock. Receivers get clones.
//!
//! Rejected: a reader-writer lock per slot (receivers at one cursor cloning in parallel). It
//! makes `Receiver<T>` `Send` only for `T: Sync`, since two threads would run `T::clone` on one
//! `&T` at once; tokio's channel is `Send` for every `T: Send` (tokio-stream's
//! `BroadcastStream` needs that), which a mutex gives: clones of one value are serialised.

use std::fmt;
use std::task::Waker;

use super::wake_list::WakeList;
use super::Notify;
use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::{Arc, Mutex, MutexGuard};

pub mod error {
    //! `broadcast` errors.
    use std::fmt;

    /// No receiver is left; the value is returned.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    /// `recv` failed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum RecvError {
        /// Every sender is gone and nothing is left to receive.
        Closed,
        /// The receiver fell behind; this many values were skipped. The next `recv` returns
        /// the oldest value still held.
        Lagged(u64),
    }

    /// `try_recv` failed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum TryRecvError {
        Empty,
        Closed,
        Lagged(u64),
    }

    closed_send_error!(SendError);

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                RecvError::Closed => f.write_str("channel closed"),
                RecvError::Lagged(n) => write!(f, "channel lagged by {n}"),
            }
        }
    }

    impl std::error::Error for RecvError {}

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
                TryRecvError::Lagged(n) => write!(f, "channel lagged by {n}"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{RecvError, SendError, TryRecvError};

struct Slot<T> {
    /// The position written here (`u64::MAX` when never written) and its value.
    pos: u64,
    /// Receivers that were subscribed when `pos` was sent and have not yet read it, skipped it
    /// or given it back by dropping (see "Claims"). `value` is `Some` exactly while this is
    /// non-zero.
    rem: usize,
    value: Option<T>,
}

impl<T> Slot<T> {
    /// Gives back one claim on this slot's value; the last one returns the value, for the
    /// caller to drop once the slot lock is released.
    fn release(&mut self) -> Option<T> {
        debug_assert!(self.rem > 0, "a broadcast value released more often than it was claimed");
        self.rem -= 1;
        if self.rem == 0 {
            self.value.take()
        } else {
            None
        }
    }
}

/// Gives a receiver's claim back if `T::clone` unwinds while the slot is locked (the value is
/// then skipped, as in tokio). Only on that path may a value whose last claim this was be
/// dropped under the slot's lock, as tokio always does; the normal path (`Receiver::read`)
/// drops it after the unlock. It borrows the slot's `MutexGuard` rather than owning it: moving
/// the guard into and out of an owning claim on every read costs each receive measurably more
/// (`weft-lab micro --filter broadcast_fanout`; docs/notes/performance-figures.md).
struct ReleaseOnUnwind<'g, 'a, T>(&'g mut MutexGuard<'a, Slot<T>>);

impl<T> Drop for ReleaseOnUnwind<'_, '_, T> {
    fn drop(&mut self) {
        drop(self.0.release());
    }
}

struct Tail {
    /// Next position to write.
    pos: u64,
    receivers: usize,
    closed: bool,
    /// One waker cell per live receiver, indexed by the receiver's `id`.
    wakers: Vec<Option<Waker>>,
    free_ids: Vec<usize>,
}

struct Shared<T> {
    slots: Box<[Mutex<Slot<T>>]>,
    mask: u64,
    tail: Mutex<Tail>,
    senders: AtomicUsize,
    /// Live `WeakSender`s; only counted.
    weak_senders: AtomicUsize,
    /// Woken (all waiters) when the last receiver goes away: completes `Sender::closed`.
    no_receivers: Notify,
}

/// The sending half; clone it for more senders.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// A sender that does not keep the channel open; [`upgrade`](WeakSender::upgrade) it to send.
pub struct WeakSender<T> {
    shared: Arc<Shared<T>>,
}

/// A receiving half with its own cursor; `resubscribe` or `Sender::subscribe` for more.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    next: u64,
    id: usize,
}

/// Creates a broadcast channel keeping the last `capacity` values (rounded up to a power of
/// two). Panics if `capacity` is 0.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (tx, mut a) = weft::sync::broadcast::channel(16);
/// let mut b = tx.subscribe();
/// tx.send(7).unwrap();
/// assert_eq!((a.recv().await, b.recv().await), (Ok(7), Ok(7)));
/// # });
/// ```
#[track_caller]
pub fn channel<T: Clone>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "broadcast channel capacity must be greater than 0");
    assert!(capacity <= usize::MAX >> 1, "broadcast channel capacity exceeded `usize::MAX / 2`");
    let capacity = capacity.next_power_of_two();
    let slots = (0..capacity).map(|_| Mutex::new(Slot { pos: u64::MAX, rem: 0, value: None })).collect();
    let shared = Arc::new(Shared {
        slots,
        mask: capacity as u64 - 1,
        tail: Mutex::new(Tail { pos: 0, receivers: 1, closed: false, wakers: vec![None], free_ids: Vec::new() }),
        senders: AtomicUsize::new(1),
        weak_senders: AtomicUsize::new(0),
        no_receivers: Notify::new(),
    });
    (Sender { shared: shared.clone() }, Receiver { shared, next: 0, id: 0 })
}

impl<T> Shared<T> {
    fn new_receiver(shared: &Arc<Self>, tail: &mut Tail) -> Receiver<T> {
        tail.receivers += 1;
        let id = match tail.free_ids.pop() {
            Some(id) => id,
            None => {
                tail.wakers.push(None);
                tail.wakers.len() - 1
            }
        };
        Receiver { shared: shared.clone(), next: tail.pos, id }
    }
}

impl<T: Clone> Sender<T> {
    /// A sender of a new channel with no receiver yet (`subscribe` makes them). Panics like
    /// [`channel`] on a zero or too large capacity.
    #[track_caller]
    pub fn new(capacity: usize) -> Sender<T> {
        let (tx, rx) = channel(capacity);
        drop(rx);
        tx
    }
}

impl<T> Sender<T> {
    /// Sends to every current receiver; returns how many there are. Fails (returning the
    /// value) when there are none. Never waits: the oldest value is overwritten.
    pub fn send(&self, value: T) -> Result<usize, SendError<T>> {
        let shared = &*self.shared;
        let mut tail = lock(&shared.tail);
        if tail.receivers == 0 {
            return Err(SendError(value));
        }
        let pos = tail.pos;
        let receivers = tail.receivers;
        let old = {
            let mut slot = lock(&shared.slots[(pos & shared.mask) as usize]);
            slot.pos = pos;
            // Every receiver subscribed now has its cursor at or before `pos` (new ones start
            // at the tail, under this lock): each holds one claim. Claims on the value
            // overwritten here (receivers a lap behind) vanish with it.
            slot.rem = receivers;
            slot.value.replace(value)
        };
        tail.pos += 1;
        let mut wakers = WakeList::new();
        let mut more = false;
        for cell in tail.wakers.iter_mut() {
            if let Some(w) = cell.take() {
                if !wakers.can_push() {
                    *cell = Some(w);
                    more = true;
                    break;
                }
                wakers.push(w);
            }
        }
        drop(tail);
        wakers.wake_all();
        if more {
            self.wake_rest();
        }
        drop(old); // the overwritten value's destructor runs outside every lock
        Ok(receivers)
    }

    fn wake_rest(&self) {
        loop {
            let mut wakers = WakeList::new();
            let mut tail = lock(&self.shared.tail);
            let mut more = false;
            for cell in tail.wakers.iter_mut() {
                if cell.is_some() {
                    if !wakers.can_push() {
                        more = true;
                        break;
                    }
                    wakers.push(cell.take().expect("checked"));
                }
            }
            drop(tail);
            wakers.wake_all();
            if !more {
                return;
            }
        }
    }

    pub fn subscribe(&self) -> Receiver<T> {
        let mut tail = lock(&self.shared.tail);
        Shared::new_receiver(&self.shared, &mut tail)
    }

    pub fn receiver_count(&self) -> usize {
        lock(&self.shared.tail).receivers
    }

    /// Values still queued for some receiver: sent while it was subscribed, not yet received
    /// by it, not overwritten, and it not dropped. At most the capacity.
    pub fn len(&self) -> usize {
        let shared = &*self.shared;
        // Held so that no send moves the ring while we search it (tail → slot order).
        let tail = lock(&shared.tail);
        let capacity = shared.slots.len();
        let oldest = (tail.pos & shared.mask) as usize;
        // The consumed slots are a prefix from the oldest (module docs, "Claims"): find its end.
        let (mut low, mut high) = (0, capacity);
        while low < high {
            let mid = low + (high - low) / 2;
            if lock(&shared.slots[(oldest + mid) & shared.mask as usize]).rem == 0 {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        capacity - low
    }

    /// True when no value is queued for any receiver (`len() == 0`).
    pub fn is_empty(&self) -> bool {
        let shared = &*self.shared;
        let tail = lock(&shared.tail);
        // The newest value is the last to be consumed; before any send this slot is unwritten.
        let newest = (tail.pos.wrapping_sub(1) & shared.mask) as usize;
        lock(&shared.slots[newest]).rem == 0
    }

    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Completes once no receiver is subscribed (immediately if none is now).
    pub async fn closed(&self) {
        loop {
            let notified = self.shared.no_receivers.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check, so a last receiver dropping in between still wakes us.
            notified.as_mut().enable();
            if self.receiver_count() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// A sender that does not keep the channel open.
    pub fn downgrade(&self) -> WeakSender<T> {
        self.shared.weak_senders.fetch_add(1, Relaxed);
        WeakSender { shared: self.shared.clone() }
    }

    /// The number of strong senders (this one included).
    pub fn strong_count(&self) -> usize {
        self.shared.senders.load(Relaxed)
    }

    /// The number of weak senders.
    pub fn weak_count(&self) -> usize {
        self.shared.weak_senders.load(Relaxed)
    }
}

impl<T> WeakSender<T> {
    /// A strong sender again, or `None` once every strong sender is gone (the channel closed).
    pub fn upgrade(&self) -> Option<Sender<T>> {
        let mut cur = self.shared.senders.load(Relaxed);
        loop {
            if cur == 0 {
                return None;
            }
            match self.shared.senders.compare_exchange_weak(cur, cur + 1, AcqRel, Relaxed) {
                Ok(_) => return Some(Sender { shared: self.shared.clone() }),
                Err(actual) => cur = actual,
            }
        }
    }

    /// The number of strong senders.
    pub fn strong_count(&self) -> usize {
        self.shared.senders.load(Relaxed)
    }

    /// The number of weak senders (this one included).
    pub fn weak_count(&self) -> usize {
        self.shared.weak_senders.load(Relaxed)
    }
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        self.shared.weak_senders.fetch_add(1, Relaxed);
        WeakSender { shared: self.shared.clone() }
    }
}

impl<T> Drop for WeakSender<T> {
    fn drop(&mut self) {
        self.shared.weak_senders.fetch_sub(1, Relaxed);
    }
}

impl<T> fmt::Debug for WeakSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakSender").finish_non_exhaustive()
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Relaxed);
        Sender { shared: self.shared.clone() }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, AcqRel) != 1 {
            return;
        }
        let mut wakers = Vec::new();
        {
            let mut tail = lock(&self.shared.tail);
            tail.closed = true;
            wakers.extend(tail.wakers.iter_mut().filter_map(Option::take));
        }
        for w in wakers {
            w.wake();
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

enum Attempt<T> {
    Value(T),
    Empty,
    Closed,
    Lagged(u64),
}

impl<T: Clone> Receiver<T> {
    /// Receives the next value (a clone). `Lagged(n)` if this receiver fell more than the
    /// capacity behind; `Closed` once every sender is gone and everything was received.
    /// Cancel-safe.
    pub async fn recv(&mut self) -> Result<T, RecvError> {
        std::future::poll_fn(|cx| {
            let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
            let out = match self.attempt(Some(cx.waker())) {
                Attempt::Value(v) => Ok(v),
                Attempt::Closed => Err(RecvError::Closed),
                Attempt::Lagged(n) => Err(RecvError::Lagged(n)),
                Attempt::Empty => return std::task::Poll::Pending,
            };
            coop.made_progress();
            std::task::Poll::Ready(out)
        })
        .await
    }

    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        match self.attempt(None) {
            Attempt::Value(v) => Ok(v),
            Attempt::Empty => Err(TryRecvError::Empty),
            Attempt::Closed => Err(TryRecvError::Closed),
            Attempt::Lagged(n) => Err(TryRecvError::Lagged(n)),
        }
    }

    #[track_caller]
    pub fn blocking_recv(&mut self) -> Result<T, RecvError> {
        crate::sync::block_on(self.recv())
    }

    /// One try; with a waker, registers it if nothing is ready (re-checked under the mutex).
    fn attempt(&mut self, waker: Option<&Waker>) -> Attempt<T> {
        let shared = &*self.shared;
        let index = (self.next & shared.mask) as usize;
        {
            let slot = lock(&shared.slots[index]);
            if slot.pos == self.next {
                return Attempt::Value(Self::read(&mut self.next, slot));
            }
        }
        // Not written yet, or overwritten: decide under the tail mutex, which orders us
        // against senders.
        let mut tail = lock(&shared.tail);
        let slot = lock(&shared.slots[index]);
        if slot.pos == self.next {
            // The clone (user code) runs without the tail mutex, which senders need.
            drop(tail);
            return Attempt::Value(Self::read(&mut self.next, slot));
        }
        if slot.pos != u64::MAX && slot.pos > self.next {
            let oldest = tail.pos - (shared.mask + 1);
            let missed = oldest - self.next;
            self.next = oldest;
            return Attempt::Lagged(missed);
        }
        if tail.closed {
            return Attempt::Closed;
        }
        if let Some(waker) = waker {
            let cell = &mut tail.wakers[self.id];
            let replaced = match cell {
                Some(old) if old.will_wake(waker) => None,
                _ => cell.replace(waker.clone()),
            };
            // A replaced waker is dropped after both locks are released: its destructor is
            // user code, which may send on this channel (taking the tail lock).
            drop(slot);
            drop(tail);
            drop(replaced);
        }
        Attempt::Empty
    }

    /// Reads the value at the cursor `next` from `slot` (which holds that position, so this
    /// receiver still has its claim and the value is there): moves the cursor past it,
    /// clones it, and gives the claim back, also if the clone panics.
    fn read(next: &mut u64, mut slot: MutexGuard<'_, Slot<T>>) -> T {
        *next += 1;
        let unwind = ReleaseOnUnwind(&mut slot);
        let value = unwind.0.value.as_ref().expect("a slot with a claim left holds its value").clone();
        std::mem::forget(unwind);
        // The claim back; the value is dropped (if this was its last claim) after the unlock.
        let last = slot.release();
        drop(slot);
        drop(last);
        value
    }

    /// A new receiver starting at the tail (it sees only values sent from now on).
    pub fn resubscribe(&self) -> Receiver<T> {
        let mut tail = lock(&self.shared.tail);
        Shared::new_receiver(&self.shared, &mut tail)
    }
}

impl<T> Receiver<T> {
    /// Values sent since this receiver's cursor that it has yet to receive, including ones
    /// already overwritten, as tokio counts them: not capped at the capacity. More than the
    /// (rounded) capacity means the next `recv`/`try_recv` reports `Lagged`.
    pub fn len(&self) -> usize {
        let tail = lock(&self.shared.tail);
        (tail.pos - self.next) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_closed(&self) -> bool {
        lock(&self.shared.tail).closed
    }

    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The number of strong senders still alive.
    pub fn sender_strong_count(&self) -> usize {
        self.shared.senders.load(Relaxed)
    }

    /// The number of weak senders still alive.
    pub fn sender_weak_count(&self) -> usize {
        self.shared.weak_senders.load(Relaxed)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        /// Completes `Sender::closed` once the claims are given back, even if a value's
        /// destructor panics on the way.
        struct NotifyLast<'a>(Option<&'a Notify>);
        impl Drop for NotifyLast<'_> {
            fn drop(&mut self) {
                if let Some(no_receivers) = self.0 {
                    no_receivers.notify_waiters();
                }
            }
        }

        let shared = &*self.shared;
        let (waker, last, until) = {
            let mut tail = lock(&shared.tail);
            tail.receivers -= 1;
            tail.free_ids.push(self.id);
            (tail.wakers[self.id].take(), tail.receivers == 0, tail.pos)
        };
        let _notify = NotifyLast(last.then_some(&shared.no_receivers));
        // Give back our claim on each value sent since our cursor and before we unsubscribed
        // that is still in its slot; sends from now on no longer count us. Positions before
        // `until - capacity` are overwritten already, and a slot holding a later position was
        // overwritten since (our claim went with the old value).
        let from = self.next.max(until.saturating_sub(shared.mask + 1));
        for pos in from..until {
            let mut slot = lock(&shared.slots[(pos & shared.mask) as usize]);
            if slot.pos == pos {
                let last_claim = slot.release();
                drop(slot);
                drop(last_claim);
            }
        }
        self.next = until;
        drop(waker);
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").field("next", &self.next).finish()
    }
}

/// Loom models of the claims: a read, a receiver's drop and a send racing over one value must
/// drop it exactly once, after its last claim, and leave `len` at zero.
#[cfg(all(test, loom))]
mod loom_claims {
    use super::channel;
    use crate::loom::sync::Arc;
    use crate::loom::thread;

    #[test]
    fn loom_broadcast_read_races_receiver_drop() {
        loom::model(|| {
            let token = Arc::new(());
            let (tx, mut a) = channel(2);
            let b = tx.subscribe();
            tx.send(token.clone()).unwrap();
            let th = thread::spawn(move || drop(b));
            drop(a.try_recv().unwrap());
            th.join().unwrap();
            assert_eq!(Arc::strong_count(&token), 1);
            assert_eq!(tx.len(), 0);
            assert!(tx.is_empty());
        });
    }

    #[test]
    fn loom_broadcast_overwrite_races_lagging_receiver_drop() {
        loom::model(|| {
            let token = Arc::new(());
            let (tx, mut a) = channel(1);
            let b = tx.subscribe();
            tx.send(token.clone()).unwrap();
            // `b` never reads: its drop gives back the first value unless the second send
            // overwrote it first.
            let th = thread::spawn(move || drop(b));
            tx.send(token.clone()).unwrap();
            th.join().unwrap();
            assert!(matches!(a.try_recv(), Err(super::error::TryRecvError::Lagged(1))));
            assert_eq!(Arc::strong_count(&token), 2);
            drop(a.try_recv().unwrap());
            assert_eq!(Arc::strong_count(&token), 1);
            assert_eq!(tx.len(), 0);
        });
    }
}
