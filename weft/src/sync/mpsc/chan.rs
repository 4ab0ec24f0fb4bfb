//! The channel state shared by senders and the receiver of both `mpsc` flavors: the block
//! queue (`list.rs`), the receiver's waker, the sender count, and the capacity policy `S`
//! (a semaphore for `channel`, nothing for `unbounded_channel`).
//!
//! # Parking the receiver without a lost wake-up
//! The receiver's waker lives in a plain slot (`rx_waker`), owned through two bits of the
//! queue's tail word (`list.rs`): `RX_PARKED` (the receiver has written the slot and sleeps)
//! and `WAKING` (a waker took the slot), plus a flag by which a waker gives the slot back
//! (`rx_waker_taken`). The receiver, finding the queue empty:
//! 1. reads the bits (`rx_slot`). If `RX_PARKED` is still set from an earlier park that no
//!    sender ended, it clears it (a read-modify-write that fails if a waker got there first,
//!    leaving `WAKING`). If `WAKING` is set and the waker has not given the slot back yet, a
//!    wake is in flight, possibly for a waker it no longer owns: it wakes itself and returns;
//! 2. otherwise the slot is its own (only it sets `RX_PARKED`, and `WAKING` comes only from
//!    turning that): it writes its waker there, keeping an equivalent one;
//! 3. sets `RX_PARKED`, clearing `WAKING` if it was set, in one read-modify-write that also
//!    returns the tail (`park_rx`);
//! 4. tries to pop again, and checks whether every sender is gone;
//! 5. if the tail it saw in step 3 is past its head, a sender has claimed the head slot but
//!    not written it yet, and that sender will not see `RX_PARKED`: the receiver yields
//!    (wakes itself) instead of sleeping. Otherwise it sleeps.
//!
//! A sender's slot-claiming CAS turns `RX_PARKED` into `WAKING` and tells the sender whether
//! it did; if so, after writing its value it takes the waker out of the slot, sets
//! `rx_waker_taken` (a store, not a read-modify-write of the tail word that every sender
//! writes) and wakes it. `WAKING` stays set until the receiver's next park clears it. Every
//! claim after step 3 therefore either happens after the flag was set (and wakes) or was seen
//! in step 5. The last sender to go, and a permit given back after `close`, claim the flag
//! the same way (`claim_parked`); that is always a read-modify-write of the tail word, so
//! either it finds `RX_PARKED` or the receiver's step 3 comes after it and step 4 sees what
//! it did.
//!
//! Rejected: the waker clearing `WAKING` itself after the take (a `fetch_and` on the tail
//! word): one more read-modify-write of the senders' line per wake, where the receiver's park
//! does one anyway and can clear the bit in it.
//!
//! Rejected: an `AtomicWaker` beside the tail word. Its
//! registration is two CASes of its own state per park and its wake a `fetch_or` and a
//! `fetch_and`, on top of the tail word's; the bits in the tail word fold the registration
//! into one load and the wake's first step into the claim the sender makes anyway, three
//! atomic read-modify-writes fewer per parked message. Also rejected: leaving the waker in
//! place and waking it by reference (no clone per park): the wake then runs while the slot is
//! held, and a receiver on another worker re-parking meanwhile has to wake itself, which
//! makes `tell_mt` in `weft-lab actors` much slower (docs/notes/performance-figures.md,
//! "mpsc channel").

use std::task::{Context, Poll, Waker};

use super::list::{self, Rx, RxSlot, Tx};
use crate::loom::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering::*};
use crate::loom::UnsafeCell;
use crate::sync::batch_semaphore::RawSemaphore;
use crate::sync::Notify;
use crate::task::arena_arc::ArenaArc;

/// How a flavor bounds the channel.
pub(super) trait Capacity: Send + Sync + 'static {
    /// One message left the queue.
    fn release_one(&self);
    /// The receiver closed the channel.
    fn close(&self);
    /// No capacity is out: no message queued and no permit reserved, so once the receiver
    /// has closed, nothing more can arrive.
    fn is_idle(&self) -> bool;
}

/// The bounded flavor's capacity: the semaphore of free slots and the bound it started with
/// (all permits back = idle). Derefs to the semaphore for the senders' acquires.
pub(super) struct Bounded {
    pub(super) sem: RawSemaphore,
    pub(super) bound: usize,
}

impl std::ops::Deref for Bounded {
    type Target = RawSemaphore;
    fn deref(&self) -> &RawSemaphore {
        &self.sem
    }
}

impl Capacity for Bounded {
    // Left to the compiler (it stays out of line): forced inline, it makes `weft-lab micro
    // --filter mpsc` and `ring_doc_1t` dearer (docs/notes/performance-figures.md, "mpsc
    // channel"), though the release inside is itself inline.
    fn release_one(&self) {
        self.sem.release(1);
    }
    fn close(&self) {
        self.sem.close();
    }
    fn is_idle(&self) -> bool {
        self.sem.available_permits() == self.bound
    }
}

/// The unbounded flavor: no capacity to give back.
pub(super) struct Unbounded;

impl Capacity for Unbounded {
    fn release_one(&self) {}
    fn close(&self) {}
    /// An unbounded send pushes in one step: nothing is ever reserved and not yet sent.
    fn is_idle(&self) -> bool {
        true
    }
}

/// `repr(C)`, senders' end first: the tail word every send writes is followed by a gap and
/// the inline first block (`list.rs`), then come the receiver's cursor and waker, and the
/// fields both sides touch. So the tail's line and the cursor's never meet (`util::spaced`),
/// and a channel is one allocation. (A bounded channel of `u64` is 384 bytes in one
/// allocation, with the block's flags apart from its values, 15 slots per block and the
/// rarely written fields in the tail's gap, `list.rs`; four spaced fields and a boxed block
/// would take 672 + 504 bytes in two.)
#[repr(C)]
pub(super) struct Chan<T, S> {
    tx: Tx<T>,
    /// The consumer's cursor: touched only by the receiver (`&mut Receiver`) or by `Drop`.
    rx: UnsafeCell<Rx<T>>,
    /// The parked receiver's waker: written by the receiver, taken by a waker, each while the
    /// tail word's bits give it the slot (module comment).
    rx_waker: UnsafeCell<Option<Waker>>,
    /// Set (Release) by a waker holding `WAKING` once it has taken the waker out of the slot:
    /// the slot is the receiver's again. Cleared by the receiver before it parks.
    rx_waker_taken: AtomicBool,
    /// Strong senders (`Sender`s and `OwnedPermit`s holding one). Weak senders do not count.
    tx_count: AtomicUsize,
    /// Set by `Receiver::close` or the receiver's drop. Never cleared.
    rx_closed: AtomicBool,
    pub(super) capacity: S,
}

/// The channel's fields that are written only when weak senders come and go or the receiver
/// closes. They live in the gap after the senders' tail word (`list::Tx`), so they need no
/// gap of their own.
pub(super) struct Cold {
    /// Live weak senders (`WeakSender`/`WeakUnboundedSender`); only counted, never gates anything.
    tx_weak_count: AtomicUsize,
    /// Wakes `Sender::closed()` futures when the receiver closes.
    closed_notify: Notify,
    /// `WATCHED` (set by every `closed()` call) and `CLOSED` (set by the receiver's close).
    /// Until some `closed()` has watched, the close skips `closed_notify`, whose
    /// `notify_waiters` takes its mutex even with nobody waiting, a cost in every actor's life
    /// (`weft-lab actors --filter =skynet_doc_1t`). Both bits in one
    /// word, set by read-modify-writes, so one of the two sides sees the other's bit (two
    /// flags read crosswise would need `SeqCst` ordering, which loom does not model).
    close_watch: AtomicU8,
}

const WATCHED: u8 = 0b01;
const CLOSED: u8 = 0b10;

impl Cold {
    fn new() -> Cold {
        Cold { tx_weak_count: AtomicUsize::new(0), closed_notify: Notify::new(), close_watch: AtomicU8::new(0) }
    }
}

// SAFETY: values of `T` move from senders to the receiver (needs `T: Send`); the `Rx` cursor is
// only touched by the single receiver; everything else is atomic or `Sync`.
unsafe impl<T: Send, S: Capacity> Send for Chan<T, S> {}
// SAFETY: `&Chan` lets senders push (moving `T` in, needs `T: Send`) and the one receiver pop
// through `&mut Receiver`; the `Rx` cursor is never shared, everything else is atomic.
unsafe impl<T: Send, S: Capacity> Sync for Chan<T, S> {}

impl<T, S: Capacity> Chan<T, S> {
    /// A new channel with one strong sender, written in place in its `ArenaArc` (in the
    /// runtime's task arena when made on a runtime: `task::arena_arc`). Built by value, the
    /// channel (its first block included) would be copied into place (a ~600-byte `memcpy`
    /// per channel, paid by every actor spawn).
    pub(super) fn new_arc(capacity: S) -> ArenaArc<Chan<T, S>> {
        // SAFETY: `p` is valid and aligned for one `Chan`, which never moves once made (so
        // the queue's ends may point into it); every field is written once, and nothing here
        // unwinds.
        unsafe {
            ArenaArc::new_in_place(|p: *mut Chan<T, S>| {
                let rx = list::init_in_place(std::ptr::addr_of_mut!((*p).tx), Cold::new());
                std::ptr::addr_of_mut!((*p).rx).write(UnsafeCell::new(rx));
                std::ptr::addr_of_mut!((*p).rx_waker).write(UnsafeCell::new(None));
                std::ptr::addr_of_mut!((*p).rx_waker_taken).write(AtomicBool::new(false));
                std::ptr::addr_of_mut!((*p).tx_count).write(AtomicUsize::new(1));
                std::ptr::addr_of_mut!((*p).rx_closed).write(AtomicBool::new(false));
                std::ptr::addr_of_mut!((*p).capacity).write(capacity);
            })
        }
    }

    /// Pushes a message (capacity, if any, was already reserved) and wakes a parked receiver.
    pub(super) fn push(&self, value: T) {
        if self.tx.push(value) {
            self.wake_claimed_rx();
        }
    }

    /// Wakes the receiver if it is parked (`claim_parked`).
    fn wake_rx(&self) {
        if self.tx.claim_parked() {
            self.wake_claimed_rx();
        }
    }

    /// Takes the parked receiver's waker, gives the slot back and wakes it: the caller holds
    /// `WAKING` (its claim turned `RX_PARKED` into it).
    fn wake_claimed_rx(&self) {
        // SAFETY: `WAKING` gives this thread the slot until it sets `rx_waker_taken`.
        let waker = unsafe { self.rx_waker.with_mut(|w| (*w).take()) };
        // Release: the take happens before the receiver's next write of the slot (`park_rx`).
        self.rx_waker_taken.store(true, Release);
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// The receiver's step 1 and 2 (module comment): takes the slot, writes `waker` there
    /// and parks. Returns the tail position parked at, or `None` if a wake is in flight (the
    /// caller wakes itself instead of sleeping).
    ///
    /// # Safety
    /// Only the single receiver calls this.
    unsafe fn park_rx(&self, waker: &Waker) -> Option<usize> {
        let waking = match self.tx.rx_slot() {
            RxSlot::Own => false,
            RxSlot::Waking => {
                // Acquire pairs with the waker's Release store: its take happens before our
                // write below. Not given back yet: the waker is between its claim and the take.
                if !self.rx_waker_taken.load(Acquire) {
                    return None;
                }
                // Relaxed: the next waker reads it only after `park_rx` (Release) below.
                self.rx_waker_taken.store(false, Relaxed);
                true
            }
        };
        // SAFETY: the slot is ours (`Own`, or `WAKING` with the slot given back), and no waker
        // can take it before `park_rx` below sets `RX_PARKED`: only this receiver sets it (the
        // caller is the receiver, `# Safety`), and `WAKING` comes only from turning it.
        unsafe {
            self.rx_waker.with_mut(|w| match &mut *w {
                Some(old) if old.will_wake(waker) => {}
                slot => *slot = Some(waker.clone()),
            })
        };
        Some(self.tx.park_rx(waking))
    }

    pub(super) fn is_rx_closed(&self) -> bool {
        self.rx_closed.load(Acquire)
    }

    /// A strong sender was created (clone, upgrade).
    pub(super) fn add_sender(&self) {
        let old = self.tx_count.fetch_add(1, Relaxed);
        assert!(old < isize::MAX as usize, "too many senders");
    }

    /// Upgrades a weak sender: succeeds only while some strong sender still exists.
    pub(super) fn try_add_sender(&self) -> bool {
        let mut cur = self.tx_count.load(Relaxed);
        loop {
            if cur == 0 {
                return false;
            }
            match self.tx_count.compare_exchange_weak(cur, cur + 1, AcqRel, Relaxed) {
                Ok(_) => return true,
                Err(actual) => cur = actual,
            }
        }
    }

    /// A strong sender went away; the last one wakes the receiver so it can see the end.
    pub(super) fn drop_sender(&self) {
        // AcqRel: Release publishes this sender's pushes to the receiver's Acquire load of
        // `tx_count` (the RMW chain carries every earlier sender's pushes too).
        if self.tx_count.fetch_sub(1, AcqRel) == 1 {
            self.wake_rx();
        }
    }

    pub(super) fn strong_count(&self) -> usize {
        self.tx_count.load(Relaxed)
    }

    /// A weak sender was created (downgrade, clone of a weak sender).
    pub(super) fn add_weak(&self) {
        self.tx.cold().tx_weak_count.fetch_add(1, Relaxed);
    }

    pub(super) fn drop_weak(&self) {
        self.tx.cold().tx_weak_count.fetch_sub(1, Relaxed);
    }

    pub(super) fn weak_count(&self) -> usize {
        self.tx.cold().tx_weak_count.load(Relaxed)
    }

    /// Closes the receiving side (once): sends fail from now on, and `closed()` waiters are
    /// woken if any ever watched (`Cold::close_watch`): a `closed()` whose `WATCHED` came first
    /// is notified, one that comes later sees `CLOSED` and does not wait.
    pub(super) fn close_rx(&self) {
        if !self.rx_closed.swap(true, AcqRel) {
            self.capacity.close();
            let cold = self.tx.cold();
            if cold.close_watch.fetch_or(CLOSED, AcqRel) & WATCHED != 0 {
                cold.closed_notify.notify_waiters();
            }
        }
    }

    /// Resolves once the receiver has closed or been dropped. The `Notified` is created before
    /// `WATCHED` is set, so a close that sees `WATCHED` notifies it.
    pub(super) async fn closed(&self) {
        let cold = self.tx.cold();
        loop {
            let notified = cold.closed_notify.notified();
            if cold.close_watch.fetch_or(WATCHED, AcqRel) & CLOSED != 0 {
                return;
            }
            notified.await;
        }
    }

    /// # Safety
    /// Only the receiver calls the `rx_*` methods (they use the consumer cursor).
    pub(super) unsafe fn rx_try_pop(&self) -> Option<T> {
        // SAFETY: the caller is the single receiver (`# Safety`), the only one to touch the cursor.
        let value = unsafe { self.rx.with_mut(|rx| self.tx.pop(&mut *rx)) };
        if value.is_some() {
            self.capacity.release_one();
        }
        value
    }

    /// All senders are gone, or the receiver closed and no reserved permit is still out (a
    /// permit reserved before `close` may still send, as in tokio): no more messages will be
    /// waited for.
    pub(super) fn rx_done(&self) -> bool {
        // Acquire pairs with `drop_sender`'s Release: the senders' pushes are visible.
        (self.rx_closed.load(Acquire) && self.capacity.is_idle()) || self.tx_count.load(Acquire) == 0
    }

    /// Gives back `n` reserved, unused slots (a dropped permit). Once the receiver has closed,
    /// the last slot coming back means nothing more can arrive: wake the receiver to see it.
    pub(super) fn release_reserved(&self, n: usize)
    where
        S: std::ops::Deref<Target = RawSemaphore>,
    {
        self.capacity.release(n);
        if self.rx_closed.load(Acquire) && self.capacity.is_idle() {
            self.wake_rx();
        }
    }

    /// # Safety
    /// Only the single receiver calls this (it moves the consumer cursor unsynchronised).
    #[inline(always)]
    pub(super) unsafe fn rx_poll_recv(&self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        // SAFETY: the caller is the single receiver (`# Safety`), which is what `rx_try_pop` needs.
        if let Some(v) = unsafe { self.rx_try_pop() } {
            coop.made_progress();
            return Poll::Ready(Some(v));
        }
        // SAFETY: the caller is the single receiver (`# Safety`), which is what
        // `rx_poll_park` needs: nobody else moves the consumer cursor.
        unsafe { self.rx_poll_park(cx, coop) }
    }

    /// `rx_poll_recv` with the queue found empty: checks for the end, parks, and checks again.
    /// Out of line, with the pop before it forced inline into the caller: as one function,
    /// every receive would pay the parking path's register saves. (A plain `#[inline]` on the
    /// fast path is not enough: the compiler leaves it out of line.) Figures for every
    /// receive-heavy row: docs/notes/performance-figures.md, "mpsc channel".
    ///
    /// # Safety
    /// Only the single receiver calls this (it moves the consumer cursor unsynchronised).
    #[inline(never)]
    unsafe fn rx_poll_park(&self, cx: &mut Context<'_>, coop: crate::task::coop::RestoreOnPending) -> Poll<Option<T>> {
        // The end is checked once, after parking (step 4): a check before it as well would cost
        // every park three loads for the one receive that finds the channel closed.
        // SAFETY: the caller is the single receiver (`# Safety`).
        let Some(tail) = (unsafe { self.park_rx(cx.waker()) }) else {
            // A wake is in flight: poll again rather than sleep (a spin hint here, a
            // scheduling point under loom, so the waker can finish).
            crate::loom::spin_loop();
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        // The head slot's flag first, inline: calling the out-of-line pop only to find it unset
        // would make every parking receive dearer (`ping_pong`).
        // SAFETY: the caller is the single receiver (`# Safety`), so nobody writes the cursor
        // meanwhile.
        if self.rx.with(|rx| unsafe { self.tx.head_ready(&*rx) }) {
            // SAFETY: the caller is the single receiver (`# Safety`), which is what
            // `rx_try_pop` needs: nobody else moves the consumer cursor.
            if let Some(v) = unsafe { self.rx_try_pop() } {
                coop.made_progress();
                return Poll::Ready(Some(v));
            }
        }
        if self.rx_done() {
            coop.made_progress();
            // A push may have landed between the pop above and the check.
            // SAFETY: the caller is the single receiver (`# Safety`).
            return Poll::Ready(unsafe { self.rx_try_pop() });
        }
        // SAFETY: the caller is the single receiver (`# Safety`), so nobody writes the cursor
        // meanwhile.
        if self.rx.with(|rx| Tx::claimed_beyond(unsafe { &*rx }, tail)) {
            // A sender is between claiming the head slot and writing it; it will not wake us.
            // Yield (a spin hint here, a scheduling point under loom) and poll again.
            crate::loom::spin_loop();
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }

    /// Messages in the queue.
    pub(super) fn rx_len(&self) -> usize {
        // SAFETY: the cursor is only read here; writes need `&mut Receiver`, which excludes
        // this `&Receiver` call.
        self.rx.with(|rx| self.tx.len(unsafe { &*rx }))
    }

    pub(super) fn rx_is_empty(&self) -> bool {
        // SAFETY: the cursor is only read here; writes need `&mut Receiver`, which excludes this
        // `&Receiver` call.
        !self.rx.with(|rx| unsafe { self.tx.head_ready(&*rx) })
    }

    /// The receiver is going away: close, and drop what is queued now (later pushes, which
    /// can race with this, are dropped with the channel).
    ///
    /// # Safety
    /// Receiver only, as its last act.
    pub(super) unsafe fn rx_drop(&self) {
        self.close_rx();
        // The receiver will never poll again: release its waker now (it may keep a task's
        // allocation alive), not when the last sender goes. A waker holding `WAKING` takes
        // it itself (or has: the slot is then empty).
        if let RxSlot::Own = self.tx.rx_slot() {
            // SAFETY: neither bit is set now and only the receiver (the caller) sets
            // `RX_PARKED`: the slot is ours.
            drop(unsafe { self.rx_waker.with_mut(|w| (*w).take()) });
        }
        /// If a queued value's destructor panics in the loop below, this guard's drop (run
        /// while unwinding) goes on with the rest, so every value is dropped exactly once.
        struct DropRest<'a, T, S: Capacity>(&'a Chan<T, S>);
        impl<T, S: Capacity> Drop for DropRest<'_, T, S> {
            fn drop(&mut self) {
                // SAFETY: receiver only: `rx_drop`'s caller is the single consumer.
                while let Some(v) = unsafe { self.0.rx_try_pop() } {
                    drop(v);
                }
            }
        }
        let rest = DropRest(self);
        // SAFETY: the caller is the single receiver (`# Safety`).
        while let Some(v) = unsafe { self.rx_try_pop() } {
            drop(v);
        }
        drop(rest);
    }
}

impl<T, S> Drop for Chan<T, S> {
    fn drop(&mut self) {
        let tx = &self.tx;
        // SAFETY: the last `Arc` is going: no sender or receiver remains.
        self.rx.with_mut(|rx| unsafe { tx.drop_all(&mut *rx) });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// One allocation per channel, with the senders' tail word and the receiver's cursor more
    /// than a prefetch pair (128 bytes) apart.
    #[test]
    fn a_channel_is_one_allocation_with_its_tail_and_cursor_apart() {
        let chan = Chan::<u64, Unbounded>::new_arc(Unbounded);
        // 792 bytes with a (value, flag) pair per slot and 31-slot blocks, 576 with the flags
        // apart, 456 with 15-slot blocks and four spare slots (`list.rs`), 384 with the cold
        // fields in the tail's gap.
        let size = std::mem::size_of::<Chan<u64, Bounded>>();
        eprintln!("bounded channel of u64: {size} bytes");
        let tail = &chan.tx as *const Tx<u64> as usize;
        let cursor = &chan.rx as *const UnsafeCell<Rx<u64>> as usize;
        assert!(cursor - tail >= 128 + 16, "tail and cursor {} bytes apart", cursor - tail);
        assert!(size <= 384, "a bounded channel of u64 grew to {size} bytes");
    }
}
