//! `watch`: one value, many readers that are told when it changes (configuration, state).
//!
//! The value sits behind a blocking reader-writer lock (held only while a `Ref` is alive or a
//! send runs, never across an `.await` inside weft). A version counter, bumped by every send,
//! tells each receiver whether it has seen the latest value; `changed()` waits on a [`Notify`]
//! with the usual "create the `Notified`, then check the version" order, so a send between
//! the check and the wait is never missed. Receivers only ever see the latest value: a slow
//! receiver skips intermediate ones, which is the point of a watch channel.
//!
//! ```text
//! version word:  [ version (bumped by 2) | CLOSED (bit 0, the sender is gone) ]
//! ```

use std::fmt;
use std::ops::Deref;

use super::Notify;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::{Arc, RwLock, RwLockReadGuard};
use crate::loom::{read, write};

const CLOSED: usize = 1;
const VERSION_ONE: usize = 2;

pub mod error {
    //! `watch` errors.
    use std::fmt;

    /// Every receiver is gone; the value is returned.
    #[derive(PartialEq, Eq, Clone, Copy)]
    pub struct SendError<T>(pub T);

    /// The sender is gone.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct RecvError(pub(super) ());

    closed_send_error!(SendError);

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}
}

use error::{RecvError, SendError};

struct Shared<T> {
    value: RwLock<T>,
    version: AtomicUsize,
    receivers: AtomicUsize,
    /// Live `Sender`s; the last one to go closes the channel.
    senders: AtomicUsize,
    /// Receivers waiting in `changed()`.
    notify_rx: Notify,
    /// `Sender::closed()` waiting for the last receiver to go.
    notify_tx: Notify,
}

/// The sending half; clones share the channel, which closes when the last one is dropped.
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// A receiving half; clone it or `subscribe` for more.
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The version this receiver has seen (without the CLOSED bit).
    seen: usize,
}

/// A borrowed view of the current value; holds a read lock, so keep it short.
pub struct Ref<'a, T> {
    guard: RwLockReadGuard<'a, T>,
    has_changed: bool,
}

/// Creates a watch channel holding `init`.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (tx, mut rx) = weft::sync::watch::channel("v1");
/// tx.send("v2").unwrap();
/// rx.changed().await.unwrap();
/// assert_eq!(*rx.borrow_and_update(), "v2");
/// # });
/// ```
pub fn channel<T>(init: T) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        value: RwLock::new(init),
        version: AtomicUsize::new(0),
        receivers: AtomicUsize::new(1),
        senders: AtomicUsize::new(1),
        notify_rx: Notify::new(),
        notify_tx: Notify::new(),
    });
    (Sender { shared: shared.clone() }, Receiver { shared, seen: 0 })
}

impl<T> Deref for Ref<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> Ref<'_, T> {
    /// Whether this value was new to the receiver when it was borrowed.
    pub fn has_changed(&self) -> bool {
        self.has_changed
    }
}

impl<T: Default> Default for Sender<T> {
    fn default() -> Sender<T> {
        Sender::new(T::default())
    }
}

impl<T: fmt::Debug> fmt::Debug for Ref<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T> Sender<T> {
    /// A sender of a new channel with no receiver yet (`subscribe` makes them), holding `init`.
    pub fn new(init: T) -> Sender<T> {
        channel(init).0
    }

    /// Replaces the value and notifies receivers; fails (returning the value) if no receiver
    /// is left.
    pub fn send(&self, value: T) -> Result<(), SendError<T>> {
        if self.receiver_count() == 0 {
            return Err(SendError(value));
        }
        self.send_replace(value);
        Ok(())
    }

    /// Replaces the value even without receivers; returns the old one.
    pub fn send_replace(&self, value: T) -> T {
        let mut value = Some(value);
        self.send_if_modified(|slot| {
            value = Some(std::mem::replace(slot, value.take().expect("called once")));
            true
        });
        value.expect("the closure ran")
    }

    /// Modifies the value in place and notifies receivers.
    pub fn send_modify<F: FnOnce(&mut T)>(&self, modify: F) {
        self.send_if_modified(|v| {
            modify(v);
            true
        });
    }

    /// Modifies the value in place; notifies only if `modify` returns true.
    pub fn send_if_modified<F: FnOnce(&mut T) -> bool>(&self, modify: F) -> bool {
        {
            let mut guard = write(&self.shared.value);
            if !modify(&mut guard) {
                return false;
            }
            // Bumped under the write lock, so a receiver that reads the version and then the
            // value (under the read lock) never sees a new version with an old value.
            self.shared.version.fetch_add(VERSION_ONE, Release);
        }
        self.shared.notify_rx.notify_waiters();
        true
    }

    pub fn borrow(&self) -> Ref<'_, T> {
        Ref { guard: read(&self.shared.value), has_changed: false }
    }

    pub fn subscribe(&self) -> Receiver<T> {
        self.shared.receivers.fetch_add(1, Relaxed);
        let seen = self.shared.version.load(Acquire) & !CLOSED;
        Receiver { shared: self.shared.clone(), seen }
    }

    pub fn receiver_count(&self) -> usize {
        self.shared.receivers.load(Acquire)
    }

    /// Number of `Sender`s of this channel.
    pub fn sender_count(&self) -> usize {
        self.shared.senders.load(Acquire)
    }

    /// Whether `other` is a sender of the same channel.
    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    pub fn is_closed(&self) -> bool {
        self.receiver_count() == 0
    }

    /// Completes when every receiver is gone. Spends one unit of the task's coop budget, so
    /// a loop over an already closed channel still yields.
    pub async fn closed(&self) {
        crate::task::consume_budget().await;
        loop {
            let notified = self.shared.notify_tx.notified();
            if self.is_closed() {
                return;
            }
            notified.await;
        }
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
        // AcqRel: the last sender's CLOSED store comes after every other sender's sends.
        if self.shared.senders.fetch_sub(1, AcqRel) == 1 {
            self.shared.version.fetch_or(CLOSED, Release);
            self.shared.notify_rx.notify_waiters();
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").field("value", &*self.borrow()).finish()
    }
}

impl<T> Receiver<T> {
    /// The current value, without marking it seen.
    pub fn borrow(&self) -> Ref<'_, T> {
        let version = self.shared.version.load(Acquire) & !CLOSED;
        Ref { guard: read(&self.shared.value), has_changed: version != self.seen }
    }

    /// The current value, marking it seen.
    pub fn borrow_and_update(&mut self) -> Ref<'_, T> {
        let guard = read(&self.shared.value);
        // Read under the lock: the version matches the value we hold.
        let version = self.shared.version.load(Acquire) & !CLOSED;
        let has_changed = version != self.seen;
        self.seen = version;
        Ref { guard, has_changed }
    }

    /// Whether a value this receiver has not seen was sent. Err if the sender is gone.
    pub fn has_changed(&self) -> Result<bool, RecvError> {
        let word = self.shared.version.load(Acquire);
        if word & CLOSED == CLOSED {
            return Err(RecvError(()));
        }
        Ok(word & !CLOSED != self.seen)
    }

    /// Marks the current value as seen.
    pub fn mark_unchanged(&mut self) {
        self.seen = self.shared.version.load(Acquire) & !CLOSED;
    }

    /// Marks the current value as not seen, so `changed()` completes at once.
    pub fn mark_changed(&mut self) {
        self.seen = self.seen.wrapping_sub(VERSION_ONE);
    }

    /// Waits for a value this receiver has not seen, and marks it seen. Fails once the sender
    /// is gone and nothing new remains. Cancel-safe.
    pub async fn changed(&mut self) -> Result<(), RecvError> {
        // One unit of coop budget per call (as tokio): a loop that always finds a new value
        // (or a closed channel) still yields to the scheduler.
        crate::task::consume_budget().await;
        loop {
            let notified = self.shared.notify_rx.notified();
            let word = self.shared.version.load(Acquire);
            if word & !CLOSED != self.seen {
                self.seen = word & !CLOSED;
                return Ok(());
            }
            if word & CLOSED == CLOSED {
                return Err(RecvError(()));
            }
            notified.await;
        }
    }

    /// Waits until `f` holds for the current value (checked at once, then after each change).
    pub async fn wait_for(&mut self, mut f: impl FnMut(&T) -> bool) -> Result<Ref<'_, T>, RecvError> {
        crate::task::consume_budget().await;
        loop {
            {
                let r = self.borrow_and_update();
                if f(&r) {
                    break;
                }
            }
            self.changed().await?;
        }
        Ok(self.borrow())
    }

    pub fn same_channel(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// True once every `Sender` is gone (the current value stays readable).
    pub fn is_closed(&self) -> bool {
        self.shared.version.load(Acquire) & CLOSED == CLOSED
    }
}

impl<T> Clone for Receiver<T> {
    fn clone(&self) -> Self {
        self.shared.receivers.fetch_add(1, Relaxed);
        Receiver { shared: self.shared.clone(), seen: self.seen }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if self.shared.receivers.fetch_sub(1, AcqRel) == 1 {
            self.shared.notify_tx.notify_waiters();
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").field("value", &*self.borrow()).finish()
    }
}
