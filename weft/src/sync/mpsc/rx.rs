//! The receiving half shared by both flavors: `RxCore`, which `Receiver` and
//! `UnboundedReceiver` wrap, and `receiver_methods!`, which writes their public methods (and
//! `Debug`) once, so the two flavors cannot drift apart in behaviour or docs.

use std::future::poll_fn;
use std::task::{Context, Poll};

use super::chan::{Capacity, Chan};
use super::error::TryRecvError;
use crate::task::arena_arc::ArenaArc;

pub(super) struct RxCore<T, S: Capacity> {
    pub(super) chan: ArenaArc<Chan<T, S>>,
}

impl<T, S: Capacity> RxCore<T, S> {
    pub(super) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        // SAFETY: `&mut self` on the only receiver makes this the single consumer.
        unsafe { self.chan.rx_poll_recv(cx) }
    }

    pub(super) async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    pub(super) fn try_recv(&mut self) -> Result<T, TryRecvError> {
        // SAFETY: `&mut self` makes this the channel's single consumer, which `rx_try_pop`
        // requires.
        if let Some(v) = unsafe { self.chan.rx_try_pop() } {
            return Ok(v);
        }
        if self.chan.rx_done() {
            // A push may have landed between the pop and the check.
            // SAFETY: `&mut self` makes this the channel's single consumer, which `rx_try_pop`
            // requires.
            return unsafe { self.chan.rx_try_pop() }.ok_or(TryRecvError::Disconnected);
        }
        Err(TryRecvError::Empty)
    }

    pub(super) fn poll_recv_many(&mut self, cx: &mut Context<'_>, buffer: &mut Vec<T>, limit: usize) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        let first = match self.poll_recv(cx) {
            Poll::Ready(Some(v)) => v,
            Poll::Ready(None) => return Poll::Ready(0),
            Poll::Pending => return Poll::Pending,
        };
        buffer.push(first);
        let mut n = 1;
        while n < limit {
            // SAFETY: `&mut self` makes this the channel's single consumer, which `rx_try_pop`
            // requires.
            match unsafe { self.chan.rx_try_pop() } {
                Some(v) => {
                    buffer.push(v);
                    n += 1;
                }
                None => break,
            }
        }
        Poll::Ready(n)
    }

    pub(super) async fn recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
        poll_fn(|cx| self.poll_recv_many(cx, buffer, limit)).await
    }

    #[track_caller]
    pub(super) fn blocking_recv(&mut self) -> Option<T> {
        crate::sync::block_on(self.recv())
    }

    pub(super) fn close(&mut self) {
        self.chan.close_rx();
    }

    pub(super) fn is_closed(&self) -> bool {
        self.chan.is_rx_closed() || self.chan.strong_count() == 0
    }

    pub(super) fn len(&self) -> usize {
        self.chan.rx_len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.chan.rx_is_empty()
    }
}

impl<T, S: Capacity> Drop for RxCore<T, S> {
    fn drop(&mut self) {
        // SAFETY: the single consumer, as its last act.
        unsafe { self.chan.rx_drop() };
    }
}

/// The public receiver type of a flavor: `$rx` wraps an `RxCore` in its `core` field, and
/// `$sender`/`$weak` name that flavor's sender types (for the docs). Every method forwards to
/// the `RxCore`, so both flavors share one body and one doc (tokio's semantics, stated once).
macro_rules! receiver_methods {
    ($rx:ident, $sender:literal, $weak:literal) => {
        impl<T> $rx<T> {
            #[doc = concat!("The number of [`", $sender, "`] handles still alive (strong senders; a")]
            #[doc = "reserved `OwnedPermit` holds one too)."]
            pub fn sender_strong_count(&self) -> usize {
                self.core.chan.strong_count()
            }

            #[doc = concat!("The number of [`", $weak, "`] handles still alive.")]
            pub fn sender_weak_count(&self) -> usize {
                self.core.chan.weak_count()
            }

            /// Receives the next message, waiting for one if the queue is empty.
            ///
            /// Returns `None` once the channel is closed and every message sent before that
            /// has been received: no further message can arrive. The channel is closed when
            /// every sender has been dropped or when [`close`](Self::close) was called; permits
            /// reserved before `close` (bounded channels) may still send, and `recv` returns
            /// `None` only once they are used or dropped.
            ///
            /// Cancel-safe: a `recv` future dropped before it completes (a `select!` branch
            /// that lost) has taken no message.
            pub async fn recv(&mut self) -> Option<T> {
                self.core.recv().await
            }

            /// Polls for the next message: `Ready(Some(message))` if one is queued,
            /// `Ready(None)` once the channel is closed and drained (see [`recv`](Self::recv)),
            /// `Pending` otherwise, with `cx`'s waker registered to be woken by the next send
            /// or by the channel closing. Only the waker of the most recent call (to this or
            /// [`poll_recv_many`](Self::poll_recv_many)) is woken. `Pending` may be returned
            /// spuriously (a sender is between claiming a slot and writing it); the waker is
            /// then already woken.
            pub fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<T>> {
                self.core.poll_recv(cx)
            }

            /// Receives a message if one is queued now, without waiting.
            ///
            /// `Err(TryRecvError::Empty)` if the queue is empty but senders (or reserved
            /// permits) remain; `Err(TryRecvError::Disconnected)` if it is empty and none remain
            /// or the channel was closed with no permit left out.
            pub fn try_recv(&mut self) -> Result<T, $crate::sync::mpsc::error::TryRecvError> {
                self.core.try_recv()
            }

            /// Waits for at least one message, then appends up to `limit` messages to
            /// `buffer` and returns how many it appended.
            ///
            /// Returns 0 immediately when `limit` is 0; for a non-zero `limit`, returns 0 only
            /// when the channel is closed and drained (as `recv` returns `None`). Cancel-safe,
            /// like `recv`.
            pub async fn recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
                self.core.recv_many(buffer, limit).await
            }

            /// `recv_many` as a poll: `Ready(n)` with `n` messages appended to `buffer` (0 as
            /// for `recv_many`), or `Pending` with `cx`'s waker registered as in
            /// [`poll_recv`](Self::poll_recv).
            pub fn poll_recv_many(
                &mut self,
                cx: &mut std::task::Context<'_>,
                buffer: &mut Vec<T>,
                limit: usize,
            ) -> std::task::Poll<usize> {
                self.core.poll_recv_many(cx, buffer, limit)
            }

            /// [`recv`](Self::recv) from synchronous code, blocking the thread.
            ///
            /// # Panics
            /// When called on a thread running a weft runtime (it would block that runtime).
            #[track_caller]
            pub fn blocking_recv(&mut self) -> Option<T> {
                self.core.blocking_recv()
            }

            /// [`recv_many`](Self::recv_many) from synchronous code, blocking the thread.
            ///
            /// # Panics
            /// When called on a thread running a weft runtime (it would block that runtime).
            #[track_caller]
            pub fn blocking_recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
                $crate::sync::block_on(self.core.recv_many(buffer, limit))
            }

            /// Closes the channel without dropping the receiver: sends fail from now on
            /// (returning their values) and the senders' `closed()` futures complete, while
            /// the messages already queued can still be received. Permits reserved before
            /// (bounded channels) may still send. To lose no message, keep calling `recv`
            /// until it returns `None`.
            pub fn close(&mut self) {
                self.core.close();
            }

            /// Whether the channel is closed: every sender has been dropped, or
            /// [`close`](Self::close) was called. Messages may still be queued.
            pub fn is_closed(&self) -> bool {
                self.core.is_closed()
            }

            /// The number of messages queued now.
            pub fn len(&self) -> usize {
                self.core.len()
            }

            /// Whether no message is queued now.
            pub fn is_empty(&self) -> bool {
                self.core.is_empty()
            }
        }

        impl<T> std::fmt::Debug for $rx<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($rx)).field("len", &self.len()).finish()
            }
        }
    };
}

pub(super) use receiver_methods;
