//! `yield_now`: let other tasks run before this one continues.
//!
//! The first poll wakes the task's own waker and returns `Pending`. A wake during the task's
//! own poll leaves `NOTIFIED` set, so when the poll returns the scheduler re-submits the task
//! through `Schedule::yield_now`, i.e. to the *back* of the run queue — never to the LIFO
//! slot, which would let a yield loop starve its neighbours.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Yields execution back to the scheduler once.
pub async fn yield_now() {
    YieldNow { yielded: false }.await
}

struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
