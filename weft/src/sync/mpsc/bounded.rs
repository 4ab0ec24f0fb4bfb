//! The bounded flavor: the block queue plus a fair semaphore holding the free capacity.
//!
//! A send first takes one permit (one CAS while there is room), then pushes; the receiver gives
//! the permit back as it takes the message (one CAS while no sender waits). A full channel
//! queues senders FIFO in the semaphore, so a cancelled `send`/`reserve` leaves the queue with
//! nothing lost and a waiting sender is never overtaken. The queue never holds more than
//! `capacity` messages, so memory stays at `capacity` slots plus a few spare blocks (`list.rs`,
//! `SPARES`).

use std::fmt;
use std::time::Duration;

use super::chan::{Bounded, Chan};
use super::error::{SendError, SendTimeoutError, TrySendError};
use super::rx::{receiver_methods, RxCore};
use crate::sync::batch_semaphore::{RawSemaphore, TryAcquireError};
use crate::task::arena_arc::ArenaArc;

type BChan<T> = Chan<T, Bounded>;

/// Creates a bounded channel holding at most `buffer` messages. Panics if `buffer` is 0.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (tx, mut rx) = weft::sync::mpsc::channel(16);
/// weft::spawn(async move {
///     for i in 0..3 {
///         tx.send(i).await.unwrap(); // waits while the channel is full
///     }
/// });
/// let mut got = vec![];
/// while let Some(i) = rx.recv().await {
///     got.push(i);
/// }
/// assert_eq!(got, [0, 1, 2]);
/// # });
/// ```
#[track_caller]
pub fn channel<T>(buffer: usize) -> (Sender<T>, Receiver<T>) {
    assert!(buffer > 0, "mpsc bounded channel requires buffer > 0");
    let chan = Chan::new_arc(Bounded { sem: RawSemaphore::new(buffer), bound: buffer });
    (Sender { chan: chan.clone(), max: buffer }, Receiver { core: RxCore { chan }, max: buffer })
}

/// The sending half of a bounded channel. Clone it for more producers.
pub struct Sender<T> {
    chan: ArenaArc<BChan<T>>,
    max: usize,
}

/// A sender that does not keep the channel open; `upgrade` it to send.
pub struct WeakSender<T> {
    chan: ArenaArc<BChan<T>>,
    max: usize,
}

/// The receiving half of a bounded channel.
pub struct Receiver<T> {
    core: RxCore<T, Bounded>,
    max: usize,
}

/// One reserved slot of capacity; `send` fills it without waiting. Dropping it returns it.
pub struct Permit<'a, T> {
    chan: &'a BChan<T>,
}

/// A reserved slot that owns its sender; `send` returns the sender.
pub struct OwnedPermit<T> {
    sender: Option<Sender<T>>,
}

/// `n` reserved slots, yielded one [`Permit`] at a time; unused ones are returned on drop.
pub struct PermitIterator<'a, T> {
    chan: &'a BChan<T>,
    n: usize,
}

/// Waits for `n` slots. A wait that fails (the receiver closed) or is cancelled hands back
/// the slots it had already been assigned; if that leaves a closed channel idle, the receiver
/// must be woken to see its end — the guard does that on every exit, including a drop.
async fn reserve_slots<T>(chan: &BChan<T>, n: usize) -> Result<(), SendError<()>> {
    struct WakeClosedRx<'a, T>(&'a BChan<T>);
    impl<T> Drop for WakeClosedRx<'_, T> {
        fn drop(&mut self) {
            self.0.release_reserved(0);
        }
    }
    let _guard = WakeClosedRx(chan);
    // A statement, not the tail expression: the `Acquire` future (which hands the slots back)
    // is dropped before `_guard` looks, on completion and on cancellation alike.
    let acquired = chan.capacity.acquire(n).await;
    acquired.map_err(|_| SendError(()))
}

impl<T> Sender<T> {
    /// Sends `value`, waiting for capacity. Fails (returning the value) once the receiver is
    /// gone. Cancel-safe in the sense that matters: dropping the future loses no capacity and
    /// enqueues nothing (the value is dropped with the future).
    pub async fn send(&self, value: T) -> Result<(), SendError<T>> {
        // Fast path: budget left and a permit free — no waiter node is built. (Measured on
        // weft-ct `mpsc_uncontended`, where building and dropping the `Acquire` future per
        // message was a visible share of the profile.) Otherwise the coop-aware `Acquire`
        // future waits, or yields when the budget is spent.
        if crate::task::coop::try_take_unit() {
            match self.chan.capacity.try_acquire(1) {
                Ok(()) => {
                    self.chan.push(value);
                    return Ok(());
                }
                Err(TryAcquireError::Closed) => return Err(SendError(value)),
                Err(TryAcquireError::NoPermits) => crate::task::coop::give_back_unit(),
            }
        }
        match reserve_slots(&self.chan, 1).await {
            Ok(()) => {
                self.chan.push(value);
                Ok(())
            }
            Err(_) => Err(SendError(value)),
        }
    }

    /// Sends if there is capacity now.
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        match self.chan.capacity.try_acquire(1) {
            Ok(()) => {
                self.chan.push(value);
                Ok(())
            }
            Err(TryAcquireError::NoPermits) => Err(TrySendError::Full(value)),
            Err(TryAcquireError::Closed) => Err(TrySendError::Closed(value)),
        }
    }

    /// Sends, waiting at most `timeout` for capacity. Needs a weft runtime with timers.
    pub async fn send_timeout(&self, value: T, timeout: Duration) -> Result<(), SendTimeoutError<T>> {
        match crate::time::timeout(timeout, self.reserve()).await {
            Ok(Ok(permit)) => {
                permit.send(value);
                Ok(())
            }
            Ok(Err(_)) => Err(SendTimeoutError::Closed(value)),
            Err(_) => Err(SendTimeoutError::Timeout(value)),
        }
    }

    /// Sends from synchronous code, blocking the thread. Panics inside a weft runtime.
    #[track_caller]
    pub fn blocking_send(&self, value: T) -> Result<(), SendError<T>> {
        crate::sync::block_on(self.send(value))
    }

    /// Waits for one slot of capacity.
    pub async fn reserve(&self) -> Result<Permit<'_, T>, SendError<()>> {
        reserve_slots(&self.chan, 1).await?;
        Ok(Permit { chan: &self.chan })
    }

    /// Waits for `n` slots at once. Fails at once if `n` exceeds the channel's capacity (it
    /// could never be granted), as tokio's does.
    pub async fn reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, SendError<()>> {
        if n > self.max {
            return Err(SendError(()));
        }
        reserve_slots(&self.chan, n).await?;
        Ok(PermitIterator { chan: &self.chan, n })
    }

    /// As `reserve`, with a permit that owns the sender.
    pub async fn reserve_owned(self) -> Result<OwnedPermit<T>, SendError<()>> {
        reserve_slots(&self.chan, 1).await?;
        Ok(OwnedPermit { sender: Some(self) })
    }

    pub fn try_reserve(&self) -> Result<Permit<'_, T>, TrySendError<()>> {
        self.try_acquire(1)?;
        Ok(Permit { chan: &self.chan })
    }

    /// Takes `n` slots if they are free now; `Full` if `n` exceeds the channel's capacity.
    pub fn try_reserve_many(&self, n: usize) -> Result<PermitIterator<'_, T>, TrySendError<()>> {
        if n > self.max {
            return Err(TrySendError::Full(()));
        }
        self.try_acquire(n)?;
        Ok(PermitIterator { chan: &self.chan, n })
    }

    pub fn try_reserve_owned(self) -> Result<OwnedPermit<T>, TrySendError<Self>> {
        match self.chan.capacity.try_acquire(1) {
            Ok(()) => Ok(OwnedPermit { sender: Some(self) }),
            Err(TryAcquireError::NoPermits) => Err(TrySendError::Full(self)),
            Err(TryAcquireError::Closed) => Err(TrySendError::Closed(self)),
        }
    }

    fn try_acquire(&self, n: usize) -> Result<(), TrySendError<()>> {
        match self.chan.capacity.try_acquire(n) {
            Ok(()) => Ok(()),
            Err(TryAcquireError::NoPermits) => Err(TrySendError::Full(())),
            Err(TryAcquireError::Closed) => Err(TrySendError::Closed(())),
        }
    }

    /// Completes when the receiver has been dropped or closed.
    pub async fn closed(&self) {
        self.chan.closed().await
    }

    pub fn is_closed(&self) -> bool {
        self.chan.is_rx_closed()
    }

    /// Free capacity now.
    pub fn capacity(&self) -> usize {
        self.chan.capacity.available_permits()
    }

    /// The capacity the channel was created with.
    pub fn max_capacity(&self) -> usize {
        self.max
    }

    /// A sender that does not keep the channel open; see [`WeakSender::upgrade`].
    pub fn downgrade(&self) -> WeakSender<T> {
        self.chan.add_weak();
        WeakSender { chan: self.chan.clone(), max: self.max }
    }

    sender_counts!();
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        Sender { chan: self.chan.clone(), max: self.max }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.drop_sender();
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").field("capacity", &self.capacity()).field("max_capacity", &self.max).finish()
    }
}

impl<T> WeakSender<T> {
    /// A sender again, if some strong sender still exists.
    pub fn upgrade(&self) -> Option<Sender<T>> {
        self.chan.try_add_sender().then(|| Sender { chan: self.chan.clone(), max: self.max })
    }
}

impl<T> WeakSender<T> {
    /// The number of strong senders.
    pub fn strong_count(&self) -> usize {
        self.chan.strong_count()
    }

    /// The number of weak senders (this one included).
    pub fn weak_count(&self) -> usize {
        self.chan.weak_count()
    }
}

impl<T> Drop for WeakSender<T> {
    fn drop(&mut self) {
        self.chan.drop_weak();
    }
}

impl<T> Clone for WeakSender<T> {
    fn clone(&self) -> Self {
        self.chan.add_weak();
        WeakSender { chan: self.chan.clone(), max: self.max }
    }
}

impl<T> fmt::Debug for WeakSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakSender").finish_non_exhaustive()
    }
}

receiver_methods!(Receiver, "Sender", "WeakSender");

impl<T> Receiver<T> {
    /// The free capacity now: the bound minus the messages queued and the permits reserved.
    pub fn capacity(&self) -> usize {
        self.core.chan.capacity.available_permits()
    }

    /// The bound the channel was created with.
    pub fn max_capacity(&self) -> usize {
        self.max
    }
}

impl<'a, T> Permit<'a, T> {
    /// Sends into the reserved slot (never waits, never fails: if the receiver is gone the
    /// value is dropped with the channel).
    pub fn send(self, value: T) {
        let chan = self.chan;
        std::mem::forget(self); // the slot is now the message's; the receiver returns it
        chan.push(value);
    }
}

impl<T> Drop for Permit<'_, T> {
    fn drop(&mut self) {
        self.chan.release_reserved(1);
    }
}

impl<T> fmt::Debug for Permit<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").finish_non_exhaustive()
    }
}

impl<T> OwnedPermit<T> {
    /// Sends into the reserved slot and gives the sender back.
    pub fn send(mut self, value: T) -> Sender<T> {
        let sender = self.sender.take().expect("an OwnedPermit holds its sender until used");
        sender.chan.push(value);
        sender
    }

    /// Whether both permits reserve slots of the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        match (&self.sender, &other.sender) {
            (Some(a), Some(b)) => a.same_channel(b),
            _ => false,
        }
    }

    /// Whether this permit reserves a slot of `sender`'s channel.
    pub fn same_channel_as_sender(&self, sender: &Sender<T>) -> bool {
        self.sender.as_ref().is_some_and(|s| s.same_channel(sender))
    }

    /// Returns the slot unused and gives the sender back.
    pub fn release(mut self) -> Sender<T> {
        let sender = self.sender.take().expect("an OwnedPermit holds its sender until used");
        sender.chan.release_reserved(1);
        sender
    }
}

impl<T> Drop for OwnedPermit<T> {
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            sender.chan.release_reserved(1);
        }
    }
}

impl<T> fmt::Debug for OwnedPermit<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit").finish_non_exhaustive()
    }
}

impl<'a, T> Iterator for PermitIterator<'a, T> {
    type Item = Permit<'a, T>;

    fn next(&mut self) -> Option<Permit<'a, T>> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        Some(Permit { chan: self.chan })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.n, Some(self.n))
    }
}

impl<T> ExactSizeIterator for PermitIterator<'_, T> {}

impl<T> std::iter::FusedIterator for PermitIterator<'_, T> {}

impl<T> Drop for PermitIterator<'_, T> {
    fn drop(&mut self) {
        if self.n > 0 {
            self.chan.release_reserved(self.n);
        }
    }
}

impl<T> fmt::Debug for PermitIterator<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PermitIterator").field("remaining", &self.n).finish()
    }
}
