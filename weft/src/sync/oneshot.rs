//! `oneshot`: a channel for exactly one value, e.g. a reply to a request.
//!
//! # The state word
//! ```text
//!  3             2        1          0
//! [ TX_TASK_SET | CLOSED | COMPLETE | RX_TASK_SET ]
//! ```
//! * `COMPLETE` — the sender is done: it stored a value (or dropped without one). Set once, by
//!   the sender, and only if `CLOSED` is not set. After it, the sender never touches the value
//!   again and the receiver may take it (Acquire pairs with the sender's Release).
//! * `CLOSED` — the receiver closed or was dropped. Set once; a later `send` fails and takes
//!   its value back (the receiver never reads the value without `COMPLETE`).
//! * `RX_TASK_SET` / `TX_TASK_SET` — that side's waker cell holds a waker the other side may
//!   wake. A side rewrites its cell only after clearing its own bit and finding the other
//!   side's terminal bit unset, so the cells need no lock.
//!
//! One allocation per channel (an `ArenaArc`: in the runtime's task arena when made on a
//! runtime, `task/arena_arc.rs`); `send` is one write and one CAS, and wakes the receiver only
//! if it registered. From the arena, a burst of a million parked oneshots goes back to the
//! system when it ends (`weft-lab memory-burst`), where glibc keeps most of it, and an
//! `ask_1t` in `weft-lab actors` costs slightly less (docs/notes/performance-figures.md,
//! "Task arena").

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::UnsafeCell;
use crate::task::arena_arc::ArenaArc;

const RX_TASK_SET: usize = 0b0001;
const COMPLETE: usize = 0b0010;
const CLOSED: usize = 0b0100;
const TX_TASK_SET: usize = 0b1000;

pub mod error {
    //! `oneshot` errors.
    use std::fmt;

    /// The sender was dropped without sending (or the receiver closed first).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct RecvError(pub(super) ());

    /// `try_recv` found no value.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum TryRecvError {
        /// Not sent yet.
        Empty,
        /// The sender is gone without sending, or the value was already taken.
        Closed,
    }

    impl fmt::Display for RecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("channel closed")
        }
    }

    impl std::error::Error for RecvError {}

    impl fmt::Display for TryRecvError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                TryRecvError::Empty => f.write_str("channel empty"),
                TryRecvError::Closed => f.write_str("channel closed"),
            }
        }
    }

    impl std::error::Error for TryRecvError {}
}

use error::{RecvError, TryRecvError};

struct Inner<T> {
    state: AtomicUsize,
    /// Written by the sender before `COMPLETE`; read by the receiver after it.
    value: UnsafeCell<Option<T>>,
    rx_waker: UnsafeCell<Option<Waker>>,
    tx_waker: UnsafeCell<Option<Waker>>,
}

// SAFETY: the value moves from the sender's thread to the receiver's (`T: Send`); each cell
// has one owner at a time, handed over by the state word (module comment).
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: `&Inner` is shared by the sender and receiver; each cell has one owner at a time, handed
// over by the state word, and `T` only moves between them (`T: Send`).
unsafe impl<T: Send> Sync for Inner<T> {}

/// Sends the one value.
pub struct Sender<T> {
    inner: Option<ArenaArc<Inner<T>>>,
}

/// Receives the one value; a `Future` resolving to `Result<T, RecvError>`.
pub struct Receiver<T> {
    inner: Option<ArenaArc<Inner<T>>>,
}

/// Creates a oneshot channel.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (tx, rx) = weft::sync::oneshot::channel();
/// weft::spawn(async move { tx.send(42).unwrap() });
/// assert_eq!(rx.await, Ok(42));
/// # });
/// ```
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let inner = ArenaArc::new(Inner {
        state: AtomicUsize::new(0),
        value: UnsafeCell::new(None),
        rx_waker: UnsafeCell::new(None),
        tx_waker: UnsafeCell::new(None),
    });
    (Sender { inner: Some(inner.clone()) }, Receiver { inner: Some(inner) })
}

impl<T> Inner<T> {
    /// Sets `COMPLETE` unless closed; wakes the receiver if it registered. False if closed.
    fn complete(&self) -> bool {
        let mut cur = self.state.load(Relaxed);
        loop {
            if cur & CLOSED == CLOSED {
                return false;
            }
            // AcqRel: Release publishes the value; Acquire pairs with the receiver's
            // RX_TASK_SET so its waker cell is visible.
            match self.state.compare_exchange_weak(cur, cur | COMPLETE, AcqRel, Relaxed) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        if cur & RX_TASK_SET == RX_TASK_SET {
            // SAFETY: RX_TASK_SET was set when COMPLETE went in, and the receiver does not
            // rewrite its cell once COMPLETE is set.
            unsafe { self.rx_waker.with(|w| (*w).as_ref().map(Waker::wake_by_ref)) };
        }
        true
    }

    /// # Safety
    /// `COMPLETE` was observed with Acquire by the receiver, which calls this at most once.
    unsafe fn take_value(&self) -> Option<T> {
        // SAFETY: the sender never touches the value after COMPLETE (caller).
        unsafe { self.value.with_mut(|v| (*v).take()) }
    }

    fn close(&self) {
        let prev = self.state.fetch_or(CLOSED, AcqRel);
        if prev & (TX_TASK_SET | COMPLETE) == TX_TASK_SET {
            // SAFETY: TX_TASK_SET was set when CLOSED went in, and the sender does not rewrite
            // its cell once CLOSED is set.
            unsafe { self.tx_waker.with(|w| (*w).as_ref().map(Waker::wake_by_ref)) };
        }
    }

    /// Registers `waker` in the cell guarded by `task_bit`, unless `done_bit` gets set first.
    /// Returns the state after registering (the caller checks `done_bit` in it).
    ///
    /// # Safety
    /// Called only by the side that owns `task_bit` (the receiver for `RX_TASK_SET`, the
    /// sender for `TX_TASK_SET`), with the matching `cell`.
    unsafe fn register(
        &self,
        cell: &UnsafeCell<Option<Waker>>,
        task_bit: usize,
        done_bit: usize,
        waker: &Waker,
    ) -> usize {
        let mut state = self.state.load(Acquire);
        if state & task_bit == task_bit {
            // SAFETY: we own the cell's bit; the other side only reads the cell.
            let same = unsafe { cell.with(|w| (*w).as_ref().is_some_and(|old| old.will_wake(waker))) };
            if same {
                return state;
            }
            state = self.state.fetch_and(!task_bit, AcqRel);
            if state & done_bit == done_bit {
                // The other side may be reading the cell: put the bit back, do not touch it.
                self.state.fetch_or(task_bit, AcqRel);
                return state;
            }
        }
        // SAFETY: our bit is clear, so the other side will not read the cell.
        unsafe { cell.with_mut(|w| *w = Some(waker.clone())) };
        // Release publishes the cell; Acquire sees a concurrent completion.
        self.state.fetch_or(task_bit, AcqRel) | task_bit
    }
}

impl<T> Sender<T> {
    /// Sends the value; returns it if the receiver is gone. Never waits.
    pub fn send(mut self, value: T) -> Result<(), T> {
        let inner = self.inner.take().expect("a Sender holds its channel until it sends");
        // SAFETY: before COMPLETE only the sender touches the value.
        unsafe { inner.value.with_mut(|v| *v = Some(value)) };
        if inner.complete() {
            return Ok(());
        }
        // SAFETY: COMPLETE was not set, so the receiver will never read the value.
        let value = unsafe { inner.value.with_mut(|v| (*v).take()) };
        Err(value.expect("the value was stored above"))
    }

    /// Whether the receiver is gone (or closed).
    pub fn is_closed(&self) -> bool {
        self.inner.as_ref().is_some_and(|i| i.state.load(Acquire) & CLOSED == CLOSED)
    }

    /// Completes when the receiver is dropped or closed.
    pub async fn closed(&mut self) {
        std::future::poll_fn(|cx| self.poll_closed(cx)).await
    }

    pub fn poll_closed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let inner = self.inner.as_ref().expect("a Sender holds its channel until it sends");
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        // SAFETY: the sender owns TX_TASK_SET and its cell.
        let state = unsafe { inner.register(&inner.tx_waker, TX_TASK_SET, CLOSED, cx.waker()) };
        if state & CLOSED == CLOSED {
            coop.made_progress();
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            inner.complete(); // complete without a value: the receiver gets `RecvError`
        }
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<T> Receiver<T> {
    /// Prevents the sender from sending; a value already sent can still be received.
    pub fn close(&mut self) {
        if let Some(inner) = &self.inner {
            inner.close();
        }
    }

    /// Takes the value if it has been sent.
    pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let Some(inner) = &self.inner else { return Err(TryRecvError::Closed) };
        let state = inner.state.load(Acquire);
        if state & COMPLETE == COMPLETE {
            // SAFETY: COMPLETE observed with Acquire; we drop `inner` right after, so this is
            // the only take.
            let value = unsafe { inner.take_value() };
            self.inner = None;
            return value.ok_or(TryRecvError::Closed);
        }
        if state & CLOSED == CLOSED {
            // Terminal, as in tokio: the receiver is done and must not be polled again.
            self.inner = None;
            return Err(TryRecvError::Closed);
        }
        Err(TryRecvError::Empty)
    }

    /// True once this receiver has yielded its result (by `.await`/poll or a successful
    /// `try_recv`); it must not be polled again.
    pub fn is_terminated(&self) -> bool {
        self.inner.is_none()
    }

    /// True when there is no value to receive now: nothing sent yet, the sender dropped
    /// without sending, or the value already taken (a terminated receiver is empty).
    pub fn is_empty(&self) -> bool {
        let Some(inner) = &self.inner else { return true };
        if inner.state.load(Acquire) & COMPLETE == COMPLETE {
            // SAFETY: COMPLETE observed with Acquire: the sender never touches the value cell
            // again, and only this receiver (through `&mut self`, not held here) takes it.
            !unsafe { inner.value.with(|v| (*v).is_some()) }
        } else {
            true
        }
    }

    /// Blocks the thread until the value arrives. Panics inside a weft runtime.
    #[track_caller]
    pub fn blocking_recv(self) -> Result<T, RecvError> {
        crate::sync::block_on(self)
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, RecvError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner.as_ref().expect("oneshot::Receiver polled after it completed");
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        let mut state = inner.state.load(Acquire);
        if state & (COMPLETE | CLOSED) == 0 {
            // SAFETY: the receiver owns RX_TASK_SET and its cell.
            state = unsafe { inner.register(&inner.rx_waker, RX_TASK_SET, COMPLETE, cx.waker()) };
        }
        let result = if state & COMPLETE == COMPLETE {
            // SAFETY: COMPLETE observed with Acquire (the loads and RMWs above are Acquire);
            // `inner` is dropped below, so this is the only take.
            unsafe { inner.take_value() }.ok_or(RecvError(()))
        } else if state & CLOSED == CLOSED {
            Err(RecvError(()))
        } else {
            return Poll::Pending;
        };
        coop.made_progress();
        self.inner = None;
        Poll::Ready(result)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if let Some(inner) = &self.inner {
            inner.close();
        }
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}
