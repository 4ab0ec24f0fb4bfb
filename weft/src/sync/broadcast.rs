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
//! Values are dropped exactly once: when their slot is overwritten (outside the locks) or with
//! the channel. Receivers get clones.
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
use crate::loom::sync::{Arc, Mutex};

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

    impl<T> fmt::Debug for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("SendError").finish_non_exhaustive()
        }
    }

    impl<T> fmt::Display for SendError<T> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl<T> std::error::Error for SendError<T> {}

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
    value: Option<T>,
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
    let slots = (0..capacity).map(|_| Mutex::new(Slot { pos: u64::MAX, value: None })).collect();
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
        let old = {
            let mut slot = lock(&shared.slots[(pos & shared.mask) as usize]);
            slot.pos = pos;
            slot.value.replace(value)
        };
        tail.pos += 1;
        let receivers = tail.receivers;
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

    /// Values still held that the slowest receiver has not received (at most the capacity).
    pub fn len(&self) -> usize {
        let tail = lock(&self.shared.tail);
        (tail.pos.min(self.shared.mask + 1)) as usize
    }

    pub fn is_empty(&self) -> bool {
        lock(&self.shared.tail).pos == 0
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
                let v = slot.value.clone().expect("a written slot holds a value");
                self.next += 1;
                return Attempt::Value(v);
            }
        }
        // Not written yet, or overwritten: decide under the tail mutex, which orders us
        // against senders.
        let mut tail = lock(&shared.tail);
        let slot = lock(&shared.slots[index]);
        if slot.pos == self.next {
            let v = slot.value.clone().expect("a written slot holds a value");
            self.next += 1;
            return Attempt::Value(v);
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

    /// A new receiver starting at the tail (it sees only values sent from now on).
    pub fn resubscribe(&self) -> Receiver<T> {
        let mut tail = lock(&self.shared.tail);
        Shared::new_receiver(&self.shared, &mut tail)
    }
}

impl<T> Receiver<T> {
    /// Values sent and not yet received by this receiver (capped at the capacity).
    /// Values sent since this receiver's position, including ones already overwritten
    /// (which the next `recv` reports as `Lagged`), as tokio counts them.
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
        let (waker, last) = {
            let mut tail = lock(&self.shared.tail);
            tail.receivers -= 1;
            tail.free_ids.push(self.id);
            (tail.wakers[self.id].take(), tail.receivers == 0)
        };
        drop(waker);
        if last {
            self.shared.no_receivers.notify_waiters();
        }
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").field("next", &self.next).finish()
    }
}
