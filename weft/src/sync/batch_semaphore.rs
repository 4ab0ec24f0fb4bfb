//! The fair, cancel-safe counting semaphore under `Semaphore`, `Mutex`, `RwLock`, `OnceCell` and
//! the bounded `mpsc` channel's capacity.
//!
//! # The state word
//! ```text
//!  63 .................... 2     1         0
//! [  available permits     | WAITERS | CLOSED ]
//! ```
//! * `CLOSED` — `close()` was called: acquires fail, queued waiters were woken with an error.
//!   Never cleared.
//! * `WAITERS` — the waiter queue is non-empty. Set and cleared only while holding the queue's
//!   mutex. **While set, the available count is zero**: a releaser that sees `WAITERS` hands its
//!   permits to the queue (under the mutex) instead of the word, so permits never sit in the
//!   word while someone waits for them. That is what makes the lock-free fast paths fair: an
//!   acquirer that finds permits in the word cannot be jumping a queue, because there is none.
//!
//! # Fast and slow paths
//! * `acquire` with enough permits and no queue: one CAS on the word, no lock.
//! * `release` with no queue: one CAS on the word, no lock. (tokio takes its waiter mutex on
//!   every release; skipping it is most of why the bounded channel's receive path is cheap.)
//! * Otherwise the mutex is taken. A queued acquirer takes any permits in the word at once
//!   (partial assignment) and waits for the rest; releases fill the head waiter's remainder
//!   first, in FIFO order, and a waiter is granted when its remainder reaches zero. A large
//!   `acquire_many` at the head therefore blocks smaller requests behind it (no barging), which
//!   is the fairness `RwLock` relies on to be write-preferring.
//!
//! # Cancellation
//! A waiting [`Acquire`] owns an intrusive [`Node`] in the queue. Dropping it takes the mutex,
//! unlinks the node, and releases the permits it had been partially assigned, which go to the
//! next waiter. A node that was granted but whose future is dropped before it saw the grant
//! releases all of its permits. So no permit is ever lost to cancellation, and a cancelled
//! `Mutex::lock` hands the lock on to the next waiter.

use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use super::wait_list::{Node, WaitList};
use super::wake_list::WakeList;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::{Mutex, MutexGuard};
use crate::loom::{lock, UnsafeCell};

const CLOSED: usize = 0b01;
const WAITERS: usize = 0b10;
const PERMIT_SHIFT: usize = 2;
const ONE_PERMIT: usize = 1 << PERMIT_SHIFT;

/// The largest number of permits a semaphore can hold (the word keeps two flag bits, and one
/// more bit of headroom keeps `add` from overflowing before the check fires).
pub(crate) const MAX_PERMITS: usize = usize::MAX >> 3;

/// A node's lifecycle, in `Waiter::state`. Written under the queue mutex (Release), read
/// without it (Acquire) by the owning future's fast check.
const IDLE: usize = 0; // never queued
const QUEUED: usize = 1; // linked in the queue
const GRANTED: usize = 2; // unlinked by a releaser, all permits assigned
const CANCELLED_BY_CLOSE: usize = 3; // unlinked by `close`

/// `try_acquire` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TryAcquireError {
    Closed,
    NoPermits,
}

/// `acquire` failed: the semaphore is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AcquireError;

pub(crate) struct RawSemaphore {
    state: AtomicUsize,
    waiters: Mutex<WaitList<Waiter>>,
}

/// The payload of a queued acquirer's node.
pub(crate) struct Waiter {
    state: AtomicUsize,
    /// Permits still needed. Touched only under the queue mutex.
    remaining: UnsafeCell<usize>,
    /// Touched only under the queue mutex.
    waker: UnsafeCell<Option<Waker>>,
}

impl RawSemaphore {
    pub(crate) fn new(permits: usize) -> RawSemaphore {
        assert!(permits <= MAX_PERMITS, "a semaphore holds at most {MAX_PERMITS} permits, {permits} were asked for");
        RawSemaphore { state: AtomicUsize::new(permits << PERMIT_SHIFT), waiters: Mutex::new(WaitList::new()) }
    }

    /// `new` usable in a `static` (std atomics only: loom's are not `const`).
    #[cfg(not(loom))]
    pub(crate) const fn const_new(permits: usize) -> RawSemaphore {
        assert!(permits <= MAX_PERMITS, "a semaphore holds at most `Semaphore::MAX_PERMITS` permits");
        RawSemaphore { state: AtomicUsize::new(permits << PERMIT_SHIFT), waiters: Mutex::new(WaitList::new()) }
    }

    pub(crate) fn available_permits(&self) -> usize {
        self.state.load(Acquire) >> PERMIT_SHIFT
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Acquire) & CLOSED == CLOSED
    }

    /// Takes `n` permits if they are all available now. Inline: every bounded channel's send
    /// takes its permit here, and out of line its call and the `n` check it cannot fold cost
    /// every send (`weft-lab actors --filter =tell_1t`; docs/notes/performance-figures.md).
    #[inline(always)]
    pub(crate) fn try_acquire(&self, n: usize) -> Result<(), TryAcquireError> {
        assert!(n <= MAX_PERMITS, "cannot acquire more than {MAX_PERMITS} permits");
        let mut cur = self.state.load(Acquire);
        loop {
            if cur & CLOSED == CLOSED {
                return Err(TryAcquireError::Closed);
            }
            if cur >> PERMIT_SHIFT < n {
                return Err(TryAcquireError::NoPermits);
            }
            // Acquire pairs with the Release of the `release` that put these permits here, so
            // whatever the releaser did before releasing (a mutex guard's writes, a channel
            // slot freed by the receiver) is visible to the new owner.
            match self.state.compare_exchange_weak(cur, cur - n * ONE_PERMIT, AcqRel, Acquire) {
                Ok(_) => return Ok(()),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Removes up to `n` available permits for good; returns how many were removed.
    pub(crate) fn forget_permits(&self, n: usize) -> usize {
        let mut cur = self.state.load(Acquire);
        loop {
            let take = n.min(cur >> PERMIT_SHIFT);
            if take == 0 {
                return 0;
            }
            match self.state.compare_exchange_weak(cur, cur - take * ONE_PERMIT, AcqRel, Acquire) {
                Ok(_) => return take,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Returns `n` permits: to the word if nobody waits, else to the waiters in FIFO order.
    ///
    /// The common case inline, one CAS on a word without waiters (every message a bounded
    /// channel's receiver takes gives its permit back here); the rest is `release_slow`. As one
    /// out-of-line function it costs every message more (`weft-lab actors --filter =tell_1t`;
    /// docs/notes/performance-figures.md).
    #[inline(always)]
    pub(crate) fn release(&self, n: usize) {
        let cur = self.state.load(Relaxed);
        if cur & WAITERS == 0 && n <= MAX_PERMITS - (cur >> PERMIT_SHIFT) {
            // Release pairs with the Acquire of the next acquirer's CAS (see `try_acquire`).
            let new = cur + n * ONE_PERMIT;
            if self.state.compare_exchange_weak(cur, new, AcqRel, Relaxed).is_ok() {
                return;
            }
        }
        self.release_slow(n);
    }

    /// `release` past its fast path: waiters to serve, a lost CAS, or too many permits.
    #[inline(never)]
    fn release_slow(&self, n: usize) {
        if n == 0 {
            return;
        }
        let mut cur = self.state.load(Relaxed);
        while cur & WAITERS == 0 {
            let new = add_permits(cur, n);
            // Release pairs with the Acquire of the next acquirer's CAS (see `try_acquire`).
            match self.state.compare_exchange_weak(cur, new, AcqRel, Relaxed) {
                Ok(_) => return,
                Err(actual) => cur = actual,
            }
        }
        self.release_locked(n, lock(&self.waiters));
    }

    /// Hands `n` permits to the queue (head first), then any remainder to the word; wakes the
    /// granted waiters after unlocking. Consumes the guard.
    fn release_locked<'a>(&'a self, mut n: usize, mut waiters: MutexGuard<'a, WaitList<Waiter>>) {
        let mut wakers = WakeList::new();
        loop {
            while let Some(front) = waiters.front() {
                // SAFETY: a linked node is alive (its future unlinks it under this mutex before
                // it is freed), and we hold the mutex, which guards `remaining` and `waker`.
                let waiter = unsafe { &(*front.as_ptr()).data };
                // SAFETY: we hold the semaphore mutex, which guards a linked waiter's `remaining`.
                let need = unsafe { waiter.remaining.with(|r| *r) };
                if n < need {
                    // SAFETY: we hold the semaphore mutex, which guards a linked waiter's `remaining`.
                    unsafe { waiter.remaining.with_mut(|r| *r -= n) };
                    n = 0;
                    break;
                }
                if !wakers.can_push() {
                    break;
                }
                n -= need;
                waiters.pop_front();
                // SAFETY: we hold the semaphore mutex, which guards a waiter's `remaining`; the node was
                // just unlinked by us.
                unsafe { waiter.remaining.with_mut(|r| *r = 0) };
                // SAFETY: a waiter's `waker` is read and written only under the waiters mutex, which
                // we hold.
                if let Some(w) = unsafe { waiter.waker.with_mut(|w| (*w).take()) } {
                    wakers.push(w);
                }
                // Release pairs with the future's Acquire load of its node state. After this
                // store the future may complete and free the node: do not touch it again.
                waiter.state.store(GRANTED, Release);
            }
            let done = n == 0 || waiters.is_empty();
            if waiters.is_empty() {
                // No queue left: clear WAITERS and put the remainder in the word. A CAS loop
                // because `close` may set CLOSED concurrently; nothing else changes the word
                // while WAITERS is set and we hold the mutex.
                let mut cur = self.state.load(Relaxed);
                loop {
                    let new = add_permits(cur & !WAITERS, n);
                    match self.state.compare_exchange_weak(cur, new, AcqRel, Relaxed) {
                        Ok(_) => break,
                        Err(actual) => cur = actual,
                    }
                }
                n = 0;
            }
            drop(waiters);
            wakers.wake_all();
            if done || n == 0 {
                return;
            }
            waiters = lock(&self.waiters);
        }
    }

    /// Closes the semaphore: fails every queued and future acquire.
    ///
    /// Without `WAITERS` in the word it closed, nobody is queued and nobody can queue any more
    /// (queueing sets `WAITERS` by a CAS from a word without `CLOSED`), so the mutex is not
    /// taken: every bounded channel's receiver closes it, so the lock would be a cost in each
    /// actor's life (`weft-lab actors --filter =skynet_doc_1t`). With
    /// `WAITERS`, the queueing acquirer still holds the mutex until its node is linked, so
    /// taking it here finds the node.
    pub(crate) fn close(&self) {
        if self.state.fetch_or(CLOSED, AcqRel) & WAITERS == 0 {
            return;
        }
        let mut waiters = lock(&self.waiters);
        loop {
            let mut wakers = WakeList::new();
            while wakers.can_push() {
                let Some(node) = waiters.pop_front() else { break };
                // SAFETY: the node was linked (so alive) and we hold the mutex.
                let waiter = unsafe { &(*node.as_ptr()).data };
                // SAFETY: a waiter's `waker` is read and written only under the waiters mutex, which
                // we hold.
                if let Some(w) = unsafe { waiter.waker.with_mut(|w| (*w).take()) } {
                    wakers.push(w);
                }
                // Last touch of the node (see `release_locked`).
                waiter.state.store(CANCELLED_BY_CLOSE, Release);
            }
            let empty = waiters.is_empty();
            drop(waiters);
            wakers.wake_all();
            if empty {
                return;
            }
            waiters = lock(&self.waiters);
        }
    }

    /// A future that acquires `n` permits (FIFO with other waiters).
    pub(crate) fn acquire(&self, n: usize) -> Acquire<'_> {
        assert!(n <= MAX_PERMITS, "cannot acquire more than {MAX_PERMITS} permits");
        Acquire {
            sem: self,
            needed: n,
            done: false,
            node: Node::new(Waiter {
                state: AtomicUsize::new(IDLE),
                remaining: UnsafeCell::new(n),
                waker: UnsafeCell::new(None),
            }),
        }
    }

    /// The slow path of `Acquire::poll` on its first poll: under the mutex, take what the word
    /// holds; if that is not enough, queue the node for the rest.
    fn poll_acquire_slow(&self, node: &Node<Waiter>, needed: usize, waker: &Waker) -> Poll<Result<(), AcquireError>> {
        let mut waiters = lock(&self.waiters);
        let mut cur = self.state.load(Acquire);
        let taken = loop {
            if cur & CLOSED == CLOSED {
                return Poll::Ready(Err(AcquireError));
            }
            let available = cur >> PERMIT_SHIFT;
            let (new, taken) = if available >= needed {
                (cur - needed * ONE_PERMIT, needed)
            } else {
                ((cur & CLOSED) | WAITERS, available)
            };
            match self.state.compare_exchange_weak(cur, new, AcqRel, Acquire) {
                Ok(_) => break taken,
                Err(actual) => cur = actual,
            }
        };
        if taken == needed {
            return Poll::Ready(Ok(()));
        }
        // SAFETY: the node is not linked yet, so only this thread can see it.
        unsafe {
            node.data.remaining.with_mut(|r| *r = needed - taken);
            node.data.waker.with_mut(|w| *w = Some(waker.clone()));
        }
        node.data.state.store(QUEUED, Relaxed);
        // SAFETY: `node` lives inside a pinned `Acquire`, which unlinks it (under this mutex)
        // in its destructor if it is still linked; we hold the mutex.
        unsafe { waiters.push_back(NonNull::from(node)) };
        Poll::Pending
    }
}

fn add_permits(word: usize, n: usize) -> usize {
    let total = (word >> PERMIT_SHIFT).checked_add(n).filter(|&t| t <= MAX_PERMITS);
    let total =
        total.unwrap_or_else(|| panic!("a semaphore holds at most {MAX_PERMITS} permits; adding {n} overflowed it"));
    (total << PERMIT_SHIFT) | (word & (CLOSED | WAITERS))
}

/// The future returned by [`RawSemaphore::acquire`]. Cancel-safe: dropping it returns any
/// permits it holds or was partially assigned.
pub(crate) struct Acquire<'a> {
    sem: &'a RawSemaphore,
    needed: usize,
    /// The future returned `Ready`: the permits belong to the caller now.
    done: bool,
    node: Node<Waiter>,
}

// SAFETY: the node's cells are only touched under the semaphore's mutex (or before the node is
// shared), its state is atomic, and the `Waker` it holds is `Send + Sync`.
unsafe impl Send for Acquire<'_> {}
// SAFETY: `&Acquire` exposes nothing (no method takes `&self`).
unsafe impl Sync for Acquire<'_> {}

impl Future for Acquire<'_> {
    type Output = Result<(), AcquireError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: nothing is moved out of the pinned future; the node stays where it is.
        let this = unsafe { self.get_unchecked_mut() };
        assert!(!this.done, "`Acquire` polled after it completed");
        let result = match this.node.data.state.load(Acquire) {
            IDLE => match this.sem.try_acquire(this.needed) {
                Ok(()) => Poll::Ready(Ok(())),
                Err(TryAcquireError::Closed) => Poll::Ready(Err(AcquireError)),
                Err(TryAcquireError::NoPermits) => this.sem.poll_acquire_slow(&this.node, this.needed, cx.waker()),
            },
            // A closed semaphore fails even a fully granted acquire (as tokio's): the permits
            // go back in `Drop`, so a closed channel sees its capacity return.
            GRANTED if this.sem.is_closed() => Poll::Ready(Err(AcquireError)),
            GRANTED => Poll::Ready(Ok(())),
            CANCELLED_BY_CLOSE => Poll::Ready(Err(AcquireError)),
            _ => {
                let _waiters = lock(&this.sem.waiters);
                // Re-check under the mutex: a releaser may have granted us since the load.
                match this.node.data.state.load(Acquire) {
                    GRANTED if this.sem.is_closed() => Poll::Ready(Err(AcquireError)),
                    GRANTED => Poll::Ready(Ok(())),
                    CANCELLED_BY_CLOSE => Poll::Ready(Err(AcquireError)),
                    _ => {
                        // SAFETY: the node is linked and we hold the mutex that guards `waker`.
                        unsafe {
                            this.node.data.waker.with_mut(|w| match &mut *w {
                                Some(old) if old.will_wake(cx.waker()) => {}
                                slot => *slot = Some(cx.waker().clone()),
                            })
                        };
                        Poll::Pending
                    }
                }
            }
        };
        match result {
            // The coop budget is charged only once the permits are ours (tokio's order): a task
            // out of budget still takes its place in the FIFO queue, so it is not overtaken by
            // an acquirer that arrives after it.
            Poll::Ready(Ok(())) => match crate::task::coop::poll_proceed(cx) {
                Poll::Ready(coop) => {
                    coop.made_progress();
                    this.done = true;
                    Poll::Ready(Ok(()))
                }
                Poll::Pending => {
                    // Keep the permits for the next poll (or give them back in `Drop`). Only
                    // this future touches a node that is not linked, and a linked one was
                    // already unlinked by the releaser that granted it.
                    this.node.data.state.store(GRANTED, Release);
                    Poll::Pending
                }
            },
            // After a failure `Drop` still gives back whatever this acquire was granted or
            // partially assigned.
            other => other,
        }
    }
}

impl Acquire<'_> {
    /// Gives back what a queued acquire had been assigned before `close` unlinked it.
    fn release_partial(&self) {
        // SAFETY: `close` unlinked the node and stored CANCELLED_BY_CLOSE as its last touch
        // (Release, read with Acquire by our caller): nobody else reaches `remaining` now.
        let remaining = unsafe { self.node.data.remaining.with(|r| *r) };
        self.sem.release(self.needed - remaining);
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        match self.node.data.state.load(Acquire) {
            IDLE => {}
            CANCELLED_BY_CLOSE => self.release_partial(),
            GRANTED => self.sem.release(self.needed),
            _ => {
                let mut waiters = lock(&self.sem.waiters);
                match self.node.data.state.load(Acquire) {
                    GRANTED => {
                        drop(waiters);
                        self.sem.release(self.needed);
                    }
                    CANCELLED_BY_CLOSE => {
                        drop(waiters);
                        self.release_partial();
                    }
                    _ => {
                        // SAFETY: state QUEUED under the mutex means the node is linked in
                        // this semaphore's queue.
                        unsafe { waiters.remove(NonNull::from(&self.node)) };
                        // SAFETY: unlinked and under the mutex.
                        let remaining = unsafe { self.node.data.remaining.with(|r| *r) };
                        let assigned = self.needed - remaining;
                        // Return what it had been assigned (to the next waiter, or the word); if it
                        // was the last waiter this also clears WAITERS.
                        if assigned > 0 || waiters.is_empty() {
                            self.sem.release_locked(assigned, waiters);
                        }
                    }
                }
            }
        }
    }
}
