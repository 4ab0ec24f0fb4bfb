//! `timeout`: bound any future by a deadline.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::error::Elapsed;
use super::{sleep_until, Instant, Sleep};

/// Requires `future` to complete within `duration`, else `Err(Elapsed)` (the future is
/// dropped with the `Timeout`). Works on every weft future, I/O included.
#[track_caller]
pub fn timeout<F: IntoFuture>(duration: Duration, future: F) -> Timeout<F::IntoFuture> {
    let deadline = Instant::now().add_or_far_future(duration);
    Timeout { value: future.into_future(), delay: sleep_until(deadline) }
}

/// Requires `future` to complete before `deadline`.
#[track_caller]
pub fn timeout_at<F: IntoFuture>(deadline: Instant, future: F) -> Timeout<F::IntoFuture> {
    Timeout { value: future.into_future(), delay: sleep_until(deadline) }
}

pin_project_lite::pin_project! {
    /// Future returned by [`timeout`] and [`timeout_at`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    #[derive(Debug)]
    pub struct Timeout<F> {
        #[pin]
        value: F,
        #[pin]
        delay: Sleep,
    }
}

impl<F> Timeout<F> {
    pub fn get_ref(&self) -> &F {
        &self.value
    }
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.value
    }
    pub fn into_inner(self) -> F {
        self.value
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let had_budget = crate::task::coop::has_budget_remaining();
        if let Poll::Ready(v) = this.value.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        // If the inner future used up the budget, still let the deadline fire: a timeout
        // must not be starved by the very future it bounds.
        let _unconstrained = (had_budget && !crate::task::coop::has_budget_remaining())
            .then(|| crate::task::coop::BudgetGuard::new(None));
        let delay = this.delay.poll(cx);
        match delay {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed::new())),
            Poll::Pending => Poll::Pending,
        }
    }
}
