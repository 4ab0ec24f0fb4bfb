//! Multi-producer, single-consumer channels: [`channel`] (bounded, the default) and
//! [`unbounded_channel`].
//!
//! # Algorithm
//! Both flavors share one lock-free queue (`list.rs`): a linked list of 15-slot blocks, the
//! first of them inline in the channel.
//! A sender claims a slot with one CAS on the tail word, writes the value and sets the slot's
//! `ready` flag; the receiver reads slots in order and recycles each finished block into a
//! few spare slots that the next sender needing a block takes from, so a channel in steady state
//! allocates nothing. The bounded flavor adds a fair semaphore (`batch_semaphore.rs`) whose
//! permits are the free capacity: `send` takes one, the receiver gives it back.
//!
//! # Why it is fast
//! * **One atomic RMW per send on the queue**, none per receive: the receiver's cursor is
//!   private, and a slot's `ready` flag is a plain store/load pair.
//! * **No wake traffic while the receiver is busy.** Whether the receiver sleeps is a bit in
//!   the same tail word the sender's CAS already touches (`chan.rs`), so a send to a receiver
//!   that is draining the queue does no extra atomic operation, and only the first send after
//!   the receiver parks pays for a wake. The receiver's waker is owned through two bits of that
//!   word too: parking writes it with no atomic operation of its own, and the waking sender's
//!   claim of the slot is its CAS. (tokio's channel calls its `AtomicWaker` on every send.)
//! * **Lock-free capacity**: taking and returning a permit are one CAS each unless senders are
//!   queued (tokio's semaphore takes its waiter mutex on every permit returned).
//! * **One allocation per channel**: the first block is part of the channel (`list.rs`), and it
//!   sits between the tail word the senders write and the receiver's cursor, so those two are
//!   on separate cache lines without a padding gap of their own.
//!
//! # Closing and values
//! The channel is closed for the receiver when every strong sender is gone (weak senders and
//! nothing else do not count), and for senders when the receiver calls `close` or is dropped.
//! A closed receiver still drains what was queued. Each message is dropped exactly once: by
//! the receiver that took it, by the receiver's drop (which drains the queue), or, for a send
//! that raced with the receiver's drop, by the channel's destructor.
//!
//! # Cancel safety
//! `recv` takes a message only in the poll that returns it. `send`/`reserve` wait in the
//! semaphore's FIFO queue; dropping them unlinks the waiter and returns any capacity it was
//! given, so capacity is never lost.

/// `same_channel`, `strong_count` and `weak_count`, the same for both senders (a `chan` field).
macro_rules! sender_counts {
    () => {
        /// Whether both senders send on the same channel.
        pub fn same_channel(&self, other: &Self) -> bool {
            ArenaArc::ptr_eq(&self.chan, &other.chan)
        }

        /// The number of strong senders (this one included).
        pub fn strong_count(&self) -> usize {
            self.chan.strong_count()
        }

        /// The number of weak senders.
        pub fn weak_count(&self) -> usize {
            self.chan.weak_count()
        }
    };
}

mod bounded;
mod chan;
pub mod error;
mod list;
mod rx;
mod unbounded;

#[cfg(all(test, loom))]
mod loom_tests;

pub use bounded::{channel, OwnedPermit, Permit, PermitIterator, Receiver, Sender, WeakSender};
pub use unbounded::{unbounded_channel, UnboundedReceiver, UnboundedSender, WeakUnboundedSender};
