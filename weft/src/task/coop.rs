//! Cooperative budget: a task may make at most `BUDGET` units of progress on leaf futures
//! (timers, JoinHandles, later channels and I/O) per poll; after that those futures return
//! `Pending` (waking the task at once), so a loop over always-ready resources still yields.
//!
//! The budget is a thread-local counter set by the scheduler before each task poll (and by
//! `block_on` before each poll of its future). Outside a runtime it is unconstrained, so the
//! leaf futures work on any executor.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Units of progress per task poll (the same as tokio's, so comparisons are like for like).
pub(crate) const BUDGET: u8 = 128;

thread_local! {
    /// `None` = unconstrained.
    static CURRENT: Cell<Option<u8>> = const { Cell::new(None) };
    /// Times a leaf future on this thread returned `Pending` because the budget ran out
    /// (read by the runtime metrics: `budget_forced_yield_count`).
    static FORCED_YIELDS: Cell<u64> = const { Cell::new(0) };
}

/// This thread's total of budget-forced yields (see `FORCED_YIELDS`).
pub(crate) fn forced_yields_on_this_thread() -> u64 {
    FORCED_YIELDS.try_with(|c| c.get()).unwrap_or(0)
}

/// Runs `f` with a fresh budget, restoring the previous one afterwards.
pub(crate) struct BudgetGuard(Option<u8>);

impl BudgetGuard {
    // Left out of line on purpose. Forced inline it makes `ping_pong` and `ask_1t` in
    // `weft-lab actors` cheaper but `weft-lab micro --filter mpsc` dearer
    // (docs/notes/performance-figures.md, "Inlining and layout choices").
    pub(crate) fn new(budget: Option<u8>) -> BudgetGuard {
        BudgetGuard(CURRENT.try_with(|c| c.replace(budget)).unwrap_or(None))
    }
}

impl Drop for BudgetGuard {
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|c| c.set(self.0));
    }
}

/// Returned by [`poll_proceed`]: if the leaf future ends up making no progress it must not
/// consume the unit, so the unit is given back on drop unless `made_progress` was called
/// (tokio's `task::coop::RestoreOnPending`).
#[must_use = "the unit is given back on drop unless made_progress is called"]
#[derive(Debug)]
pub struct RestoreOnPending(Cell<Option<u8>>, std::marker::PhantomData<*const ()>);

impl RestoreOnPending {
    /// The leaf future made progress: keep the unit spent.
    #[inline]
    pub fn made_progress(&self) {
        self.0.set(None);
    }
}

impl Drop for RestoreOnPending {
    // Inlined into every leaf future's poll: out of line, every mpsc send pays a call.
    #[inline]
    fn drop(&mut self) {
        if let Some(prev) = self.0.get() {
            let _ = CURRENT.try_with(|c| c.set(Some(prev)));
        }
    }
}

/// Takes one unit of the task's budget, or wakes the task and returns `Pending` when it is
/// exhausted (tokio's `task::coop::poll_proceed`, for leaf futures outside the runtime: call
/// it first in `poll`, and `made_progress` on the guard when the poll did work).
#[inline]
pub fn poll_proceed(cx: &mut Context<'_>) -> Poll<RestoreOnPending> {
    let cur = CURRENT.try_with(|c| c.get()).unwrap_or(None);
    match cur {
        None => Poll::Ready(RestoreOnPending(Cell::new(None), std::marker::PhantomData)),
        Some(0) => {
            let _ = FORCED_YIELDS.try_with(|c| c.set(c.get() + 1));
            cx.waker().wake_by_ref();
            Poll::Pending
        }
        Some(n) => {
            let _ = CURRENT.try_with(|c| c.set(Some(n - 1)));
            Poll::Ready(RestoreOnPending(Cell::new(Some(n)), std::marker::PhantomData))
        }
    }
}

/// Takes one unit of budget without a `Context`: true if taken (or unconstrained), false if
/// the budget is exhausted. For fast paths that fall back to a coop-aware future (which then
/// yields) when this says no; such a fast path that ends up doing no work should call
/// `give_back_unit`.
#[inline]
pub(crate) fn try_take_unit() -> bool {
    CURRENT
        .try_with(|c| match c.get() {
            None => true,
            Some(0) => false,
            Some(n) => {
                c.set(Some(n - 1));
                true
            }
        })
        .unwrap_or(true)
}

/// Returns a unit taken by `try_take_unit` that bought no progress.
#[inline]
pub(crate) fn give_back_unit() {
    let _ = CURRENT.try_with(|c| {
        if let Some(n) = c.get() {
            c.set(Some(n.saturating_add(1).min(BUDGET)));
        }
    });
}

/// True when the current task still has budget (or is unconstrained). Public as
/// `task::coop::has_budget_remaining`, like tokio's.
pub fn has_budget_remaining() -> bool {
    CURRENT.try_with(|c| c.get() != Some(0)).unwrap_or(true)
}

/// Consumes one unit of budget; yields if the budget is exhausted. Use in long CPU loops.
pub async fn consume_budget() {
    let mut done = false;
    std::future::poll_fn(|cx| {
        if done {
            return Poll::Ready(());
        }
        let restore = std::task::ready!(poll_proceed(cx));
        restore.made_progress();
        done = true;
        Poll::Ready(())
    })
    .await
}

/// Makes `fut` spend the task's budget like weft's own leaf futures: each poll first takes a
/// unit (yielding, with a wake, when the budget is spent), and gives it back unless `fut`
/// completed. For futures of other crates that never return `Pending` on their own, so a
/// loop over them still lets the worker run other tasks.
pub fn cooperative<F: Future>(fut: F) -> Coop<F> {
    Coop { fut }
}

pin_project_lite::pin_project! {
    /// Future returned by [`cooperative`].
    #[must_use = "futures do nothing unless polled"]
    #[derive(Debug)]
    pub struct Coop<F: Future> {
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for Coop<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let coop = std::task::ready!(poll_proceed(cx));
        let out = self.project().fut.poll(cx);
        if out.is_ready() {
            coop.made_progress();
        }
        out
    }
}

/// Runs a future without a budget (its leaf futures never force a yield).
pub fn unconstrained<F: Future>(inner: F) -> Unconstrained<F> {
    Unconstrained { inner }
}

/// Future returned by [`unconstrained`].
pub struct Unconstrained<F> {
    inner: F,
}

impl<F: Future> Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _guard = BudgetGuard::new(None);
        // SAFETY: structural pinning of `inner`; it is never moved out of the pinned struct.
        unsafe { self.map_unchecked_mut(|u| &mut u.inner) }.poll(cx)
    }
}
