//! The receiving half shared by both flavors (`Receiver` and `UnboundedReceiver` wrap it).

use std::future::poll_fn;
use std::task::{Context, Poll};

use super::chan::{Capacity, Chan};
use super::error::TryRecvError;
use crate::loom::sync::Arc;

pub(super) struct RxCore<T, S: Capacity> {
    pub(super) chan: Arc<Chan<T, S>>,
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
