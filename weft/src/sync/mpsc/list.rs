//! The lock-free multi-producer, single-consumer queue under both `mpsc` flavors: a linked
//! list of fixed-size blocks (the block scheme of Vyukov's and crossbeam's unbounded queues,
//! reduced to one consumer).
//!
//! ```text
//!  tail.index = position << 2 | WAKING | RX_PARKED   one position per slot, plus one marker
//!  block:  [ slot 0 | slot 1 | ... | slot BLOCK_CAP-1 ] --next--> [ ... ]     position per lap
//! ```
//! * A position `p` names slot `p % LAP` of the block it falls in; offset `BLOCK_CAP` (the last
//!   position of each lap) names no slot: it is the marker "the next block is being installed".
//! * **Send**: CAS `tail.index` from `p` to `p + 1`, which claims slot `p` (clearing
//!   `RX_PARKED`). The sender that claims a block's last slot first installs the next block
//!   (`tail.block`, then skip the marker, then the old block's `next`). The sender then writes
//!   the value and sets the slot's `ready` flag (Release). No lock, no allocation: blocks are
//!   recycled through `spare`.
//! * **Receive** (one thread): if the head slot is `ready` (Acquire), move the value out and
//!   advance; after a block's last slot, follow `next` and recycle the old block.
//! * **The first block is inline**: it is a field of `Tx` (so of the channel's own
//!   allocation), not a separate box. Once passed it is recycled like any other block; it is
//!   never freed, only skipped when a block would be (`free`). A channel is one allocation
//!   instead of two, and the block fills the space between the senders' tail word and the
//!   receiver's cursor that a padding gap held before (`chan.rs`).
//! * **Freeing a block is safe** without hazard pointers because a sender dereferences a block
//!   only after winning a slot in it, and its last access is the `ready` store; a block whose
//!   every slot the receiver has seen `ready` has no sender left in it.
//! * `RX_PARKED` and `WAKING` live in the tail word so that a sender learns whether the
//!   receiver sleeps, and takes over its waker, with the CAS it does anyway: neither the
//!   common case (receiver busy) nor waking a parked receiver costs senders an extra
//!   read-modify-write. See `chan.rs` for the parking protocol.
//!
//! Rejected: installing the first block at the first send, so that an unused channel holds
//! none. It saves 504 bytes only for a channel nobody writes to (an actor's mailbox almost
//! always gets a message), and the null check it adds to every push and pop costs every
//! `tell` and `ping_pong` bounce in `weft-lab actors` (docs/notes/performance-figures.md,
//! "mpsc block queue").

use std::mem::MaybeUninit;
use std::ptr;

use crossbeam_utils::Backoff;

use super::chan::Cold;
use crate::loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering::*};
use crate::loom::UnsafeCell;
use crate::util::spaced::{Spaced, GAP};

/// Positions per block (one of them the marker). Small under loom, so models cross blocks.
///
/// 16, so a block holds 15 messages, sized from the mailbox depths of `weft-lab actors` (the
/// depth each message found when received, over every workload): every workload but the
/// floods met a depth of 1 for almost every message, fan-in (a skynet parent's ten
/// children) at most 10, and only floods reached the bound (64, the default mailbox). A
/// 15-slot block holds the fan-in case whole. The floods' extra block changes are kept off
/// the allocator by the spare slots (`SPARES`).
///
/// Against 31 slots (tokio's choice): fewer bytes per idle actor, and faster spawning actors
/// (`skynet_doc_1t`, `spawn`), for slightly slower rings (a block change every 15 hops of an
/// actor instead of 31) and a slightly dearer `tell_1t`.
///
/// Rejected: 7 slots. Fewer bytes per idle actor again, but every message costs more
/// (`tell_1t`, `weft-lab micro`'s `mpsc_uncontended`/`mpsc_contended`), and more spare slots
/// to make up for it cost `ring` per hop. The figures for both comparisons, with their
/// commands, are in docs/notes/performance-figures.md, "mpsc block queue".
#[cfg(not(loom))]
const LAP: usize = 16;
#[cfg(loom)]
const LAP: usize = 3;
/// Recycled blocks a queue keeps for its next block changes: a flood of a 64-message mailbox
/// spans five blocks, and with one spare every lap but one of them would go back to the
/// allocator and be allocated again (`weft-lab micro --filter =mpsc_uncontended` counts
/// the extra `malloc`/`free` pairs: docs/notes/performance-figures.md). At most this many stay
/// allocated after a burst. Two under loom, so models reach a full set with few blocks.
#[cfg(not(loom))]
const SPARES: usize = 4;
#[cfg(loom)]
const SPARES: usize = 2;
const BLOCK_CAP: usize = LAP - 1;
const SHIFT: usize = 2;
/// Set by the receiver in `tail.index` before it sleeps, after writing its waker into the
/// channel's slot; cleared by the next claiming sender (or the last sender's drop), which sets
/// `WAKING` in the same step.
const RX_PARKED: usize = 0b01;
/// Set with the clearing of `RX_PARKED`: the thread that set it owns the receiver's waker slot
/// until it gives the slot back (`Chan::rx_waker_taken`). Cleared by the receiver when it
/// parks again (`park_rx`). Never set together with `RX_PARKED`.
const WAKING: usize = 0b10;

/// Who holds the receiver's waker slot, as the receiver finds it (`Tx::rx_slot`).
pub(super) enum RxSlot {
    /// Neither bit is set: the slot is the receiver's.
    Own,
    /// `WAKING` is set: a waker took the slot, and it is the receiver's again once that waker
    /// says it is done with it.
    Waking,
}

/// A block's slots as two arrays, the `ready` flags together and the values together, not an
/// array of (value, flag) pairs: a flag beside each value padded every slot to the value's
/// alignment (a `u64` slot took 16 bytes, a 24-byte actor message 32), so a block of 31
/// slots held 248 bytes of padding (`a_channel_is_one_allocation...` in `chan.rs`).
struct Block<T> {
    next: AtomicPtr<Block<T>>,
    ready: [AtomicBool; BLOCK_CAP],
    values: [UnsafeCell<MaybeUninit<T>>; BLOCK_CAP],
}

impl<T> Block<T> {
    /// Built in place: `Box::new(Block { .. })` builds the block on the stack and copies it
    /// (a `memcpy` of the whole block per channel, paid by every actor spawn).
    fn alloc() -> *mut Block<T> {
        let mut block = Box::<Block<T>>::new_uninit();
        // SAFETY: the box's memory is valid for one `Block<T>`; `init` writes every field.
        unsafe {
            Block::init(block.as_mut_ptr());
            Box::into_raw(block.assume_init())
        }
    }

    /// Writes an empty block into `p`, field by field (the values stay uninitialised, which
    /// `MaybeUninit` allows).
    ///
    /// # Safety
    /// `p` is valid for writes of one `Block<T>` and aligned.
    unsafe fn init(p: *mut Block<T>) {
        // SAFETY: `p` is valid and aligned (`# Safety`), so is each field; each is written once.
        unsafe {
            ptr::addr_of_mut!((*p).next).write(AtomicPtr::new(ptr::null_mut()));
            for i in 0..BLOCK_CAP {
                ptr::addr_of_mut!((*p).ready[i]).write(AtomicBool::new(false));
                ptr::addr_of_mut!((*p).values[i]).write(UnsafeCell::new(MaybeUninit::uninit()));
            }
        }
    }
}

/// The producers' end (shared by every sender), and the first block. `repr(C)`: the tail
/// word is followed by a gap and then the block, so the receiver's cursor after it in `Chan`
/// is far from the word every send writes. The first part of the gap holds what is written
/// rarely (`Head`): 72 bytes of the channel that would otherwise need a gap of their own.
#[repr(C)]
pub(super) struct Tx<T> {
    head: Spaced<Head<T>, HEAD_GAP>,
    /// The queue's first block; both ends point at it from `init_in_place` on.
    first: Block<T>,
}

/// The tail word, written by every send, then fields written once per block change or less,
/// which may share its lines: together with `HEAD_GAP` they keep `GAP` bytes between the
/// tail and the block.
#[repr(C)]
struct Head<T> {
    tail: Tail<T>,
    /// Recycled blocks (null: empty slot), handed from the receiver (or a sender whose
    /// prepared block went unused) to the next sender that needs a block. Slots, not a
    /// linked stack: blocks are taken by several senders at once and given back by senders
    /// too, and a lock-free stack with several poppers needs ABA protection; a swap on a slot
    /// does not. Written once per block change.
    spare: [AtomicPtr<Block<T>>; SPARES],
    /// The channel's fields written only when weak senders come and go or the receiver
    /// closes (`chan::Cold`).
    cold: Cold,
}

/// What is left of the tail's `GAP` after the fields that follow it in `Head` (under loom,
/// whose types are larger, possibly nothing). `Head`'s size does not depend on `T`.
const HEAD_GAP: usize = GAP.saturating_sub(size_of::<Head<()>>() - size_of::<Tail<()>>());

struct Tail<T> {
    index: AtomicUsize,
    block: AtomicPtr<Block<T>>,
}

/// The consumer's end, owned by the receiver (kept in an `UnsafeCell` by `Chan`).
pub(super) struct Rx<T> {
    /// Next position to read (no shift, no flag).
    index: usize,
    block: *mut Block<T>,
}

// SAFETY: `Rx` is only a cursor into blocks owned by the channel; it is moved with the channel.
unsafe impl<T: Send> Send for Rx<T> {}

/// The tail word `word` with a set `RX_PARKED` turned into `WAKING`, else unchanged. The two
/// bits are never set together, so this is an addition: `0b01 + 1 = 0b10`. (Written as a
/// branch on the bit, it adds instructions to every message in `weft-lab micro`'s mpsc rows.)
fn turn_parked(word: usize) -> usize {
    const _: () = assert!(RX_PARKED == 1 && WAKING == 2);
    word + (word & RX_PARKED)
}

/// Writes `value` into slot `offset` of `block` and publishes it to the receiver.
///
/// # Safety
/// The caller won the claim of this slot, and `block` is alive until this returns.
#[inline(always)]
unsafe fn fill<T>(block: &Block<T>, offset: usize, value: T) {
    // SAFETY: the claim gave this thread the slot (`# Safety`); nobody reads it before `ready`
    // is set.
    unsafe { block.values[offset].with_mut(|p| (*p).write(value)) };
    // Release pairs with the receiver's Acquire load of `ready`.
    block.ready[offset].store(true, Release);
}

/// Messages claimed before position `p` (markers excluded).
fn messages_before(p: usize) -> usize {
    p - p / LAP
}

fn snooze(backoff: &Backoff) {
    #[cfg(loom)]
    {
        let _ = backoff;
        crate::loom::thread::yield_now();
    }
    #[cfg(not(loom))]
    backoff.snooze();
}

/// Writes an empty queue into `tx`, its first block inline, and returns the consumer's end.
/// `Chan::new_arc` writes it straight into the channel's memory, so the channel is never built
/// on the stack and copied.
///
/// # Safety
/// `tx` is valid for writes of one `Tx<T>` and aligned, and the `Tx` never moves: both ends
/// point into `*tx`.
pub(super) unsafe fn init_in_place<T>(tx: *mut Tx<T>, cold: Cold) -> Rx<T> {
    // SAFETY: `tx` is valid and aligned (`# Safety`); each field is written once, and `first`
    // is initialised before anyone can follow a pointer to it.
    unsafe {
        let first = ptr::addr_of_mut!((*tx).first);
        Block::init(first);
        ptr::addr_of_mut!((*tx).head).write(Spaced::new(Head {
            tail: Tail { index: AtomicUsize::new(0), block: AtomicPtr::new(first) },
            spare: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            cold,
        }));
        Rx { index: 0, block: first }
    }
}

impl<T> Tx<T> {
    /// The channel's rarely written fields, kept in the tail's gap.
    pub(super) fn cold(&self) -> &Cold {
        &self.head.cold
    }

    /// Gives a block no thread can reach any more back to the allocator, unless it is the
    /// inline first block, which lives as long as the channel.
    ///
    /// # Safety
    /// The caller owns `block` exclusively, and it came from `Block::alloc` or is `first`.
    unsafe fn free(&self, block: *mut Block<T>) {
        if !ptr::eq(block, &self.first) {
            // SAFETY: a block other than `first` came from `Box::into_raw` (`Block::alloc`) and
            // is owned by the caller alone (`# Safety`).
            drop(unsafe { Box::from_raw(block) });
        }
    }

    /// Appends `value`. Returns true if the receiver had parked: the caller now holds `WAKING`
    /// and must take the receiver's waker, give the slot back and wake it (`chan.rs`).
    ///
    /// The common case inline: a slot that is not its block's last, claimed by the first CAS.
    /// Everything else is `push_slow`, out of line: as one function, every send would pay
    /// the slow path's register saves (docs/notes/performance-figures.md, "mpsc block queue").
    #[inline(always)]
    pub(super) fn push(&self, value: T) -> bool {
        // Acquire: as in `push_slow`.
        let tail = self.head.tail.index.load(Acquire);
        let offset = (tail >> SHIFT) % LAP;
        if offset + 1 < BLOCK_CAP {
            let block = self.head.tail.block.load(Acquire);
            // AcqRel: as in `push_slow`.
            let claimed =
                self.head.tail.index.compare_exchange_weak(tail, turn_parked(tail) + (1 << SHIFT), AcqRel, Relaxed);
            if claimed.is_ok() {
                // SAFETY: winning the CAS for position `tail` makes `block` (loaded after the
                // index) the block holding our slot, alive until our `ready` store (module
                // comment), and gives this thread slot `offset`.
                unsafe { fill(&*block, offset, value) };
                return tail & RX_PARKED == RX_PARKED;
            }
        }
        self.push_slow(value)
    }

    /// `push` past its fast path: the claim of a block's last slot (which installs the next
    /// block), a marker to wait out, or a lost CAS.
    #[inline(never)]
    fn push_slow(&self, value: T) -> bool {
        let backoff = Backoff::new();
        let mut next_block: *mut Block<T> = ptr::null_mut();
        loop {
            // Acquire pairs with the Release of the marker skip below: seeing a position in a
            // new block implies seeing that block in `tail.block`.
            let tail = self.head.tail.index.load(Acquire);
            let offset = (tail >> SHIFT) % LAP;
            if offset == BLOCK_CAP {
                snooze(&backoff); // another sender is installing the next block
                continue;
            }
            if offset + 1 == BLOCK_CAP && next_block.is_null() {
                next_block = self.new_block();
            }
            let block = self.head.tail.block.load(Acquire);
            // A parked receiver's flag turns into WAKING (`turn_parked`): the waker slot is
            // ours until we give it back. A WAKING already there is kept for the receiver.
            let new_tail = turn_parked(tail) + (1 << SHIFT);
            // AcqRel: Acquire pairs with the receiver's fetch_or of RX_PARKED (its waker
            // write happens before it); Release orders nothing we rely on.
            match self.head.tail.index.compare_exchange_weak(tail, new_tail, AcqRel, Relaxed) {
                Ok(_) => {
                    // SAFETY: winning the CAS for position `tail` makes `block` (loaded after the
                    // index, see above) the block holding our slot, and no sender or receiver
                    // frees it before our `ready` store (module comment).
                    let block = unsafe { &*block };
                    if offset + 1 == BLOCK_CAP {
                        let next = std::mem::replace(&mut next_block, ptr::null_mut());
                        self.head.tail.block.store(next, Release);
                        // Skip the marker position; Release publishes `tail.block`.
                        self.head.tail.index.fetch_add(1 << SHIFT, Release);
                        // Release: the receiver follows `next` after our `ready` store anyway.
                        block.next.store(next, Release);
                    }
                    // SAFETY: the CAS gave this thread slot `offset`.
                    unsafe { fill(block, offset, value) };
                    if !next_block.is_null() {
                        self.recycle(next_block);
                    }
                    return tail & RX_PARKED == RX_PARKED;
                }
                Err(_) => backoff.spin(),
            }
        }
    }

    /// Marks the receiver parked; returns the tail position it was parked at. The receiver
    /// calls it after writing its waker, with the slot its own (`rx_slot`): `waking` when it
    /// found `WAKING` set and the slot given back, which is cleared in the same step (the
    /// bits go from `WAKING` to `RX_PARKED`: a subtraction of one).
    pub(super) fn park_rx(&self, waking: bool) -> usize {
        // AcqRel: Release publishes the receiver's waker write to the sender whose CAS
        // clears the flag; Acquire makes the returned position current.
        let prev = if waking {
            const _: () = assert!(WAKING - RX_PARKED == 1);
            self.head.tail.index.fetch_sub(WAKING - RX_PARKED, AcqRel)
        } else {
            self.head.tail.index.fetch_or(RX_PARKED, AcqRel)
        };
        prev >> SHIFT
    }

    /// For the receiver: who holds its waker slot. `RX_PARKED` may be set from an earlier
    /// park that no sender ended: then it is cleared here (a read-modify-write that loses to
    /// a waker that got there first, leaving `WAKING`). Only the receiver sets `RX_PARKED`,
    /// and `WAKING` comes only from turning it, so `Own` holds until the receiver's next
    /// `park_rx`, and `Waking` until the receiver clears it there.
    pub(super) fn rx_slot(&self) -> RxSlot {
        // Acquire: the reclaim below, and `park_rx`, act on a current view of the bits (the
        // slot's hand-back itself is ordered by `Chan::rx_waker_taken`).
        match self.head.tail.index.load(Acquire) & (RX_PARKED | WAKING) {
            0 => RxSlot::Own,
            WAKING => RxSlot::Waking,
            // AcqRel: as the load above; Release orders nothing we rely on.
            _ => match self.head.tail.index.fetch_and(!RX_PARKED, AcqRel) & RX_PARKED {
                0 => RxSlot::Waking,
                _ => RxSlot::Own,
            },
        }
    }

    /// For a waker that is not a sender's push (the last sender's drop, a returned permit):
    /// turns a parked receiver's `RX_PARKED` into `WAKING` and returns true, giving the caller
    /// the waker slot as `push` does. Always a read-modify-write (a no-op write when nobody is
    /// parked), so a receiver that parks later reads the caller's earlier writes (`chan.rs`).
    pub(super) fn claim_parked(&self) -> bool {
        let mut cur = self.head.tail.index.load(Relaxed);
        loop {
            // AcqRel: Acquire pairs with the receiver's `park_rx` (its waker write); Release
            // publishes the caller's earlier writes to the receiver's next `park_rx`.
            match self.head.tail.index.compare_exchange_weak(cur, turn_parked(cur), AcqRel, Relaxed) {
                Ok(_) => return cur & RX_PARKED != 0,
                Err(actual) => cur = actual,
            }
        }
    }

    /// The current tail position (messages claimed so far, markers included).
    fn tail_position(&self) -> usize {
        self.head.tail.index.load(Acquire) >> SHIFT
    }

    /// A recycled block from the first non-empty spare slot, else a new one.
    fn new_block(&self) -> *mut Block<T> {
        for slot in &self.head.spare {
            // The Relaxed load only skips slots that look empty (a swap is a write to the
            // line); a block it misses is found by the next block change or freed with the
            // channel. Acquire on the swap pairs with the Release in `recycle`: the block's
            // reset is visible.
            if !slot.load(Relaxed).is_null() {
                let spare = slot.swap(ptr::null_mut(), Acquire);
                if !spare.is_null() {
                    return spare;
                }
            }
        }
        Block::alloc()
    }

    /// Keeps `block` (which no other thread can reach) in an empty spare slot, or frees it
    /// when every slot is taken.
    fn recycle(&self, block: *mut Block<T>) {
        // SAFETY: the caller owns `block` exclusively.
        let b = unsafe { &*block };
        b.next.store(ptr::null_mut(), Relaxed);
        for ready in &b.ready {
            ready.store(false, Relaxed);
        }
        for slot in &self.head.spare {
            // Release publishes the reset above to the sender that takes the block (`new_block`).
            if slot.load(Relaxed).is_null() && slot.compare_exchange(ptr::null_mut(), block, Release, Relaxed).is_ok() {
                return;
            }
        }
        // SAFETY: every slot is taken, so the block is still the caller's alone.
        unsafe { self.free(block) };
    }

    /// Takes the value at the head, if it has been written. Out of line: forced inline, with
    /// the block change split off as `push` is, it makes `ping_pong` hops and `weft-lab micro
    /// --filter mpsc` dearer (docs/notes/performance-figures.md, "mpsc block queue").
    ///
    /// # Safety
    /// Only the single consumer calls this, with the `Rx` created with this `Tx`.
    pub(super) unsafe fn pop(&self, rx: &mut Rx<T>) -> Option<T> {
        let offset = rx.index % LAP;
        // SAFETY: `rx.block` is the head block, which only the consumer frees.
        let block = unsafe { &*rx.block };
        // Acquire pairs with the sender's Release store of `ready`.
        if !block.ready[offset].load(Acquire) {
            return None;
        }
        // SAFETY: `ready` means the value was written and not read yet (only we read).
        let value = unsafe { block.values[offset].with(|p| (*p).assume_init_read()) };
        if offset + 1 == BLOCK_CAP {
            // The last slot's writer stored `next` before its `ready`, so it is set.
            let next = block.next.load(Acquire);
            debug_assert!(!next.is_null());
            let old = std::mem::replace(&mut rx.block, next);
            rx.index += 2; // this slot and the marker
            self.recycle(old);
        } else {
            rx.index += 1;
        }
        Some(value)
    }

    /// Whether a sender has claimed the head slot (the tail was past `rx` at `tail_position`)
    /// but its value is not readable yet.
    pub(super) fn claimed_beyond(rx: &Rx<T>, tail_position: usize) -> bool {
        messages_before(tail_position) > messages_before(rx.index)
    }

    /// Messages claimed and not yet received (approximate while senders are mid-push).
    pub(super) fn len(&self, rx: &Rx<T>) -> usize {
        messages_before(self.tail_position()).saturating_sub(messages_before(rx.index))
    }

    /// Whether the head slot holds a readable value.
    ///
    /// # Safety
    /// As `pop`: the consumer's own `Rx`, not concurrently popped.
    pub(super) unsafe fn head_ready(&self, rx: &Rx<T>) -> bool {
        // SAFETY: the head block is alive while the consumer holds it.
        unsafe { (*rx.block).ready[rx.index % LAP].load(Acquire) }
    }

    /// Drops every value still queued and frees every block.
    ///
    /// # Safety
    /// No sender or receiver can touch the queue any more (the channel is being dropped).
    pub(super) unsafe fn drop_all(&self, rx: &mut Rx<T>) {
        // SAFETY: exclusive access (caller); `pop` frees or recycles consumed blocks.
        while unsafe { self.pop(rx) }.is_some() {}
        let mut block = rx.block;
        while !block.is_null() {
            // SAFETY: blocks from the head on are owned by the queue alone now.
            let next = unsafe { (*block).next.load(Relaxed) };
            // SAFETY: no sender or receiver can reach the queue (this function's contract), so
            // this block, from the head on, is ours alone; it came from `Block::alloc` or is
            // `first`, and it is freed once, after its `next` was read and never touched again.
            unsafe { self.free(block) };
            block = next;
        }
        rx.block = ptr::null_mut();
        for slot in &self.head.spare {
            // A load, not a swap: nothing else can reach the queue (`# Safety`), and a swap is
            // an atomic read-modify-write even of a null slot: four per channel dropped, at
            // the end of every actor (`weft-lab actors --filter =spawn`).
            let spare = slot.load(Relaxed);
            if !spare.is_null() {
                // SAFETY: the channel is going and nothing else can reach the queue (`#
                // Safety`), so the spare block is ours; the slot is never read again.
                unsafe { self.free(spare) };
            }
        }
    }
}
