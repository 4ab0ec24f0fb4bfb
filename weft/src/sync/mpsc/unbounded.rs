//! The unbounded flavor: the same block queue without a capacity semaphore.
//!
//! **Memory risk**: nothing slows a producer down, so a consumer that falls behind lets the
//! queue grow until the process runs out of memory. Prefer [`channel`](super::channel) unless
//! the producer is itself bounded (for example, one message per event it receives).

use std::fmt;

use super::chan::{Chan, Unbounded};
use super::error::SendError;
use super::rx::{receiver_methods, RxCore};
use crate::task::arena_arc::ArenaArc;

type UChan<T> = Chan<T, Unbounded>;

/// Creates an unbounded channel. See the module's memory warning: prefer
/// [`channel`](super::channel).
pub fn unbounded_channel<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
    let chan = Chan::new_arc(Unbounded);
    (UnboundedSender { chan: chan.clone() }, UnboundedReceiver { core: RxCore { chan } })
}

/// The sending half of an unbounded channel; `send` never waits.
pub struct UnboundedSender<T> {
    chan: ArenaArc<UChan<T>>,
}

/// A sender that does not keep the channel open.
pub struct WeakUnboundedSender<T> {
    chan: ArenaArc<UChan<T>>,
}

/// The receiving half of an unbounded channel.
pub struct UnboundedReceiver<T> {
    core: RxCore<T, Unbounded>,
}

impl<T> UnboundedSender<T> {
    /// Sends without waiting; fails (returning the value) once the receiver is gone or closed.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        if self.chan.is_rx_closed() {
            return Err(SendError(value));
        }
        // If the receiver closes between the check and the push, the value is dropped with
        // the channel: still exactly once.
        self.chan.push(value);
        Ok(())
    }

    pub async fn closed(&self) {
        self.chan.closed().await
    }

    pub fn is_closed(&self) -> bool {
        self.chan.is_rx_closed()
    }

    /// A sender that does not keep the channel open; see [`WeakUnboundedSender::upgrade`].
    pub fn downgrade(&self) -> WeakUnboundedSender<T> {
        self.chan.add_weak();
        WeakUnboundedSender { chan: self.chan.clone() }
    }

    sender_counts!();
}

impl<T> Clone for UnboundedSender<T> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        UnboundedSender { chan: self.chan.clone() }
    }
}

impl<T> Drop for UnboundedSender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> fmt::Debug for UnboundedSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnboundedSender").finish_non_exhaustive()
    }
}

impl<T> WeakUnboundedSender<T> {
    pub fn upgrade(&self) -> Option<UnboundedSender<T>> {
        self.chan.try_add_sender().then(|| UnboundedSender { chan: self.chan.clone() })
    }
}

impl<T> WeakUnboundedSender<T> {
    /// The number of strong senders.
    pub fn strong_count(&self) -> usize {
        self.chan.strong_count()
    }

    /// The number of weak senders (this one included).
    pub fn weak_count(&self) -> usize {
        self.chan.weak_count()
    }
}

impl<T> Drop for WeakUnboundedSender<T> {
    fn drop(&mut self) {
        self.chan.drop_weak();
    }
}

impl<T> Clone for WeakUnboundedSender<T> {
    fn clone(&self) -> Self {
        self.chan.add_weak();
        WeakUnboundedSender { chan: self.chan.clone() }
    }
}

impl<T> fmt::Debug for WeakUnboundedSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakUnboundedSender").finish_non_exhaustive()
    }
}

receiver_methods!(UnboundedReceiver, "UnboundedSender", "WeakUnboundedSender");
