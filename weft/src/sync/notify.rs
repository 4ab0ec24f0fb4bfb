//! `Notify`: wakes one task (storing a permit if none waits) or every waiting task.
//!
//! # The state word
//! ```text
//!  63 .......................... 2   1 0
//! [ notify_waiters generation     | state ]     state: EMPTY = 0b00, WAITING = 0b01, NOTIFIED = 0b10
//! ```
//! * `EMPTY` — nobody waits, no permit stored.
//! * `WAITING` — the waiter queue is non-empty. Entered and left only under the queue mutex.
//! * `NOTIFIED` — a `notify_one` found nobody waiting and stored its permit; the next
//!   `notified().await` consumes it without waiting.
//! * generation — bumped by every `notify_waiters`. A [`Notified`] remembers the generation at
//!   its creation, so a `notify_waiters` that happens after `notified()` was called but before
//!   the future was first polled still completes it (the usual "create, check condition,
//!   await" pattern has no window for a lost wake-up).
//!
//! `notify_one` with nobody waiting, and `notified` consuming a stored permit, are one CAS each
//! and take no lock. Waiters queue in an intrusive list (`wait_list.rs`) inside their
//! `Notified` futures and are woken in FIFO order. A `Notified` that was picked by
//! `notify_one` but dropped before it saw the notification passes it on (to the next waiter, or
//! as a stored permit), so dropping a future never loses a notification.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use super::wait_list::{Node, WaitList};
use super::wake_list::WakeList;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
// `notified_owned` takes the user's `std::sync::Arc` (under loom too, as the owned semaphore
// acquires do): it only keeps the `Notify` alive, no synchronisation goes through it.
use std::sync::Arc;

use crate::loom::sync::Mutex;
use crate::loom::{lock, UnsafeCell};

const EMPTY: usize = 0b00;
const WAITING: usize = 0b01;
const NOTIFIED: usize = 0b10;
const STATE_MASK: usize = 0b11;
const GENERATION_ONE: usize = 0b100;

fn generation(word: usize) -> usize {
    word >> 2
}

fn with_state(word: usize, state: usize) -> usize {
    (word & !STATE_MASK) | state
}

/// `Waiter::notified` values (written under the mutex with Release, read with Acquire).
const NOT_YET: usize = 0;
const BY_ONE: usize = 1;
const BY_ALL: usize = 2;
/// Picked by `notify_last`: a dropped future passes the notification on to the newest waiter.
const BY_LAST: usize = 3;

/// Which waiter a single notification goes to.
#[derive(Clone, Copy)]
enum Pick {
    Oldest,
    Newest,
}

/// Notifies tasks.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let notify = weft::sync::Notify::new();
/// notify.notify_one(); // stores a permit: nobody waits yet
/// notify.notified().await; // consumes it at once
/// # });
/// ```
pub struct Notify {
    state: AtomicUsize,
    waiters: Mutex<WaitList<Waiter>>,
}

struct Waiter {
    notified: AtomicUsize,
    /// The generation when the `Notified` was created; `notify_waiters` stops at the first
    /// queued waiter created after it began. Immutable once linked.
    generation: usize,
    /// Touched only under the mutex.
    waker: UnsafeCell<Option<Waker>>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Init,
    Waiting,
    Done,
}

/// The future returned by [`Notify::notified`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Notified<'a> {
    notify: &'a Notify,
    phase: Phase,
    node: Node<Waiter>,
}

// SAFETY: the node's cells are touched only under the notify's mutex; the rest is atomics and
// a shared reference to a `Sync` `Notify`.
unsafe impl Send for Notified<'_> {}
// SAFETY: no method of `Notified` works through `&self`.
unsafe impl Sync for Notified<'_> {}

impl Notify {
    pub fn new() -> Notify {
        Notify { state: AtomicUsize::new(EMPTY), waiters: Mutex::new(WaitList::new()) }
    }

    /// `new` usable in a `static`. Not available under `--cfg loom` (loom's atomics are not
    /// `const`), as in tokio.
    #[cfg(not(loom))]
    pub const fn const_new() -> Notify {
        Notify { state: AtomicUsize::new(EMPTY), waiters: Mutex::new(WaitList::new()) }
    }

    /// Like [`notified`](Notify::notified), but the future owns an `Arc` of the `Notify`, so
    /// it is `'static` (it can be stored or moved into a spawned task).
    pub fn notified_owned(self: Arc<Self>) -> OwnedNotified {
        // SAFETY: the reference points into the `Arc`'s allocation, which `OwnedNotified` keeps
        // alive in its `notify` field; `inner` is declared before `notify`, so it is dropped (and
        // its node unlinked) before that `Arc` is released. The reference never escapes.
        let notify: &'static Notify = unsafe { &*(&*self as *const Notify) };
        OwnedNotified { inner: notify.notified(), notify: self }
    }

    /// A future that completes on the next `notify_one` (or a stored permit), or on a
    /// `notify_waiters` called after this method.
    pub fn notified(&self) -> Notified<'_> {
        let generation = generation(self.state.load(SeqCst));
        Notified {
            notify: self,
            phase: Phase::Init,
            node: Node::new(Waiter { notified: AtomicUsize::new(NOT_YET), generation, waker: UnsafeCell::new(None) }),
        }
    }

    /// Wakes the oldest waiter, or stores one permit if nobody waits (permits do not add up).
    pub fn notify_one(&self) {
        self.notify_single(Pick::Oldest)
    }

    /// Like [`notify_one`](Notify::notify_one), but wakes the most recently queued waiter
    /// (LIFO) instead of the oldest. With nobody waiting it stores a permit, as `notify_one`.
    pub fn notify_last(&self) {
        self.notify_single(Pick::Newest)
    }

    fn notify_single(&self, pick: Pick) {
        let mut cur = self.state.load(SeqCst);
        while cur & STATE_MASK != WAITING {
            // SeqCst: pairs with the Notified's CAS on the same word (see the module comment).
            match self.state.compare_exchange_weak(cur, with_state(cur, NOTIFIED), SeqCst, SeqCst) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
        let mut waiters = lock(&self.waiters);
        let cur = self.state.load(SeqCst);
        if cur & STATE_MASK != WAITING {
            // The last waiter left while we took the lock; store the permit instead.
            self.state.store(with_state(cur, NOTIFIED), SeqCst);
            return;
        }
        let node = match pick {
            Pick::Oldest => waiters.pop_front(),
            Pick::Newest => waiters.pop_back(),
        }
        .expect("WAITING implies a queued waiter");
        if waiters.is_empty() {
            self.state.store(with_state(cur, EMPTY), SeqCst);
        }
        // SAFETY: the node was linked (so alive) and we hold the mutex.
        let waiter = unsafe { &(*node.as_ptr()).data };
        // SAFETY: a waiter's `waker` is read and written only under the waiters mutex, which
        // we hold.
        let waker = unsafe { waiter.waker.with_mut(|w| (*w).take()) };
        // Release pairs with the future's Acquire load; last touch of the node.
        let by = match pick {
            Pick::Oldest => BY_ONE,
            Pick::Newest => BY_LAST,
        };
        waiter.notified.store(by, Release);
        drop(waiters);
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Wakes every task currently waiting, and completes every `Notified` created before this
    /// call. Stores no permit.
    pub fn notify_waiters(&self) {
        let mut waiters = lock(&self.waiters);
        let cur = self.state.fetch_add(GENERATION_ONE, SeqCst);
        let new_generation = generation(cur) + 1;
        if cur & STATE_MASK != WAITING {
            return;
        }
        loop {
            let mut wakers = WakeList::new();
            while wakers.can_push() {
                let Some(front) = waiters.front() else { break };
                // SAFETY: a linked node is alive; we hold the mutex.
                let waiter = unsafe { &(*front.as_ptr()).data };
                if waiter.generation >= new_generation {
                    break; // queued after this call began (during an unlocked batch wake)
                }
                waiters.pop_front();
                // SAFETY: a waiter's `waker` is read and written only under the waiters mutex, which
                // we hold.
                if let Some(w) = unsafe { waiter.waker.with_mut(|w| (*w).take()) } {
                    wakers.push(w);
                }
                waiter.notified.store(BY_ALL, Release);
            }
            if waiters.is_empty() {
                let cur = self.state.load(SeqCst);
                self.state.store(with_state(cur, EMPTY), SeqCst);
            }
            let more = !wakers.can_push() && !waiters.is_empty();
            drop(waiters);
            wakers.wake_all();
            if !more {
                return;
            }
            waiters = lock(&self.waiters);
        }
    }
}

impl Default for Notify {
    fn default() -> Self {
        Notify::new()
    }
}

impl fmt::Debug for Notify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify").finish_non_exhaustive()
    }
}

impl Notified<'_> {
    /// Registers this future as a waiter without polling it, so a later `notify_one` picks it.
    /// Returns true if it is already notified.
    pub fn enable(self: Pin<&mut Self>) -> bool {
        // SAFETY: nothing is moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        this.poll_inner(None).is_ready()
    }

    fn poll_inner(&mut self, waker: Option<&Waker>) -> Poll<()> {
        let notify = self.notify;
        match self.phase {
            Phase::Done => Poll::Ready(()),
            Phase::Init => {
                // Fast path: consume a stored permit without the lock.
                let mut cur = notify.state.load(SeqCst);
                if generation(cur) != self.node.data.generation {
                    self.phase = Phase::Done;
                    return Poll::Ready(());
                }
                while cur & STATE_MASK == NOTIFIED {
                    match notify.state.compare_exchange_weak(cur, with_state(cur, EMPTY), SeqCst, SeqCst) {
                        Ok(_) => {
                            self.phase = Phase::Done;
                            return Poll::Ready(());
                        }
                        Err(actual) => cur = actual,
                    }
                }
                let mut waiters = lock(&notify.waiters);
                let mut cur = notify.state.load(SeqCst);
                loop {
                    if generation(cur) != self.node.data.generation {
                        self.phase = Phase::Done;
                        return Poll::Ready(());
                    }
                    let (new, done) = match cur & STATE_MASK {
                        NOTIFIED => (with_state(cur, EMPTY), true),
                        _ => (with_state(cur, WAITING), false),
                    };
                    match notify.state.compare_exchange(cur, new, SeqCst, SeqCst) {
                        Ok(_) if done => {
                            self.phase = Phase::Done;
                            return Poll::Ready(());
                        }
                        Ok(_) => break,
                        Err(actual) => cur = actual,
                    }
                }
                // SAFETY: not linked yet: only this thread sees the node.
                unsafe { self.node.data.waker.with_mut(|w| *w = waker.cloned()) };
                // SAFETY: the node is pinned inside this future, whose destructor unlinks it
                // under this mutex; we hold the mutex.
                unsafe { waiters.push_back(NonNull::from(&self.node)) };
                self.phase = Phase::Waiting;
                Poll::Pending
            }
            Phase::Waiting => {
                if self.node.data.notified.load(Acquire) != NOT_YET {
                    self.phase = Phase::Done;
                    return Poll::Ready(());
                }
                let _waiters = lock(&notify.waiters);
                if self.node.data.notified.load(Acquire) != NOT_YET {
                    self.phase = Phase::Done;
                    return Poll::Ready(());
                }
                if let Some(waker) = waker {
                    // SAFETY: linked, and we hold the mutex that guards the waker.
                    unsafe {
                        self.node.data.waker.with_mut(|w| match &mut *w {
                            Some(old) if old.will_wake(waker) => {}
                            slot => *slot = Some(waker.clone()),
                        })
                    };
                }
                Poll::Pending
            }
        }
    }
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: nothing is moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        this.poll_inner(Some(cx.waker()))
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        if self.phase != Phase::Waiting {
            return;
        }
        let notify = self.notify;
        let mut waiters = lock(&notify.waiters);
        match self.node.data.notified.load(Acquire) {
            NOT_YET => {
                // SAFETY: not notified, so nobody unlinked it: it is still in the queue.
                unsafe { waiters.remove(NonNull::from(&self.node)) };
                if waiters.is_empty() {
                    let cur = notify.state.load(SeqCst);
                    if cur & STATE_MASK == WAITING {
                        notify.state.store(with_state(cur, EMPTY), SeqCst);
                    }
                }
            }
            BY_ONE => {
                // Picked by `notify_one` but never observed: pass the notification on.
                drop(waiters);
                notify.notify_one();
            }
            BY_LAST => {
                // Picked by `notify_last`: pass it on to the (now) newest waiter.
                drop(waiters);
                notify.notify_last();
            }
            _ => {}
        }
    }
}

pin_project_lite::pin_project! {
    /// The future returned by [`Notify::notified_owned`]: a [`Notified`] that owns its `Notify`.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct OwnedNotified {
        // Declared first: dropped (unlinked from the queue) before `notify` is released.
        #[pin]
        inner: Notified<'static>,
        notify: Arc<Notify>,
    }
}

impl OwnedNotified {
    /// Registers this future as a waiter without polling it; see [`Notified::enable`].
    pub fn enable(self: Pin<&mut Self>) -> bool {
        self.project().inner.enable()
    }
}

impl Future for OwnedNotified {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().inner.poll(cx)
    }
}

impl fmt::Debug for OwnedNotified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedNotified").field("phase", &self.inner.phase).finish()
    }
}

impl fmt::Debug for Notified<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notified").field("phase", &self.phase).finish()
    }
}
