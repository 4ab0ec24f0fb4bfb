//! `JoinSet`: a set of spawned tasks awaited in completion order; aborts them all on drop.
//!
//! Each entry owns a small waker that, when its task completes, queues the entry's index on
//! a shared ready list and wakes whoever awaits `join_next`. `join_next` therefore polls only
//! entries that were woken — O(1) per completion, not O(n) per call.

use std::collections::VecDeque;
use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{AbortHandle, Id, JoinError, JoinHandle};
use crate::loom::lock;
use crate::loom::sync::{Arc, Mutex};
use crate::runtime::Handle;
use crate::util::wake::{self, Wake};

/// A collection of tasks, awaited as they complete.
pub struct JoinSet<T> {
    entries: Vec<Option<Entry<T>>>,
    free: Vec<usize>,
    len: usize,
    ready: Arc<Ready>,
}

struct Entry<T> {
    handle: JoinHandle<T>,
    waker: Waker,
}

struct Ready {
    inner: Mutex<ReadyInner>,
}

struct ReadyInner {
    queue: VecDeque<usize>,
    waiter: Option<Waker>,
}

struct EntryWaker {
    index: usize,
    ready: Arc<Ready>,
}

impl Wake for EntryWaker {
    fn wake_by_ref(arc: &Arc<Self>) {
        let waiter = {
            let mut r = lock(&arc.ready.inner);
            r.queue.push_back(arc.index);
            r.waiter.take()
        };
        if let Some(w) = waiter {
            w.wake();
        }
    }
}

impl<T> JoinSet<T> {
    pub fn new() -> JoinSet<T> {
        JoinSet {
            entries: Vec::new(),
            free: Vec::new(),
            len: 0,
            ready: Arc::new(Ready { inner: Mutex::new(ReadyInner { queue: VecDeque::new(), waiter: None }) }),
        }
    }

    /// Number of tasks in the set (completed tasks leave it when returned by `join_next`).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let index = self.free.pop().unwrap_or_else(|| {
            self.entries.push(None);
            self.entries.len() - 1
        });
        let waker = wake::waker(Arc::new(EntryWaker { index, ready: self.ready.clone() }));
        self.entries[index] = Some(Entry { handle, waker });
        self.len += 1;
        // Poll it once from `join_next` so that its join waker gets registered.
        lock(&self.ready.inner).queue.push_back(index);
        abort
    }

    /// Spawns a task on the current runtime into the set.
    #[track_caller]
    pub fn spawn<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        self.insert(crate::spawn(future))
    }

    /// Spawns a task on `handle`'s runtime into the set.
    #[track_caller]
    pub fn spawn_on<F>(&mut self, future: F, handle: &Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        self.insert(handle.spawn(future))
    }

    /// Spawns a `!Send` task on the current `LocalSet` into the set.
    #[track_caller]
    pub fn spawn_local<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
        T: 'static,
    {
        self.insert(super::spawn_local(future))
    }

    /// Spawns a `!Send` task on `local_set` into the set (it runs when that `LocalSet` is
    /// driven).
    #[track_caller]
    pub fn spawn_local_on<F>(&mut self, future: F, local_set: &super::LocalSet) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
        T: 'static,
    {
        self.insert(local_set.spawn_local(future))
    }

    /// Runs a blocking closure on the current runtime's blocking pool, its result joining the
    /// set like a task's. Panics outside a runtime.
    #[track_caller]
    pub fn spawn_blocking<F>(&mut self, f: F) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.insert(super::spawn_blocking(f))
    }

    /// Like [`spawn_blocking`](JoinSet::spawn_blocking), on `handle`'s runtime.
    #[track_caller]
    pub fn spawn_blocking_on<F>(&mut self, f: F, handle: &Handle) -> AbortHandle
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.insert(handle.spawn_blocking(f))
    }

    /// Waits for the next task to complete; `None` when the set is empty.
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// Waits for the next task to complete and returns its id with its output; `None` when the
    /// set is empty. A failed task's id is in its `JoinError`.
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// Returns a completed task's result if one is ready, without waiting.
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id().map(|r| r.map(|(_, v)| v))
    }

    /// Returns a completed task's id and result if one is ready, without waiting.
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        // Not a yield point: a completed task is returned even when the caller's coop budget
        // is spent (a loop draining finished tasks must see them all, as with tokio).
        let _unconstrained = crate::task::coop::BudgetGuard::new(None);
        let waker = Waker::noop();
        match self.poll_join_next_with_id(&mut Context::from_waker(waker)) {
            Poll::Ready(r) => r,
            Poll::Pending => None,
        }
    }

    /// Polls for the next completed task (tokio's `poll_join_next`): `Ready(None)` when the set
    /// is empty, `Pending` (with `cx` registered) while every task is still running.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx).map(|r| r.map(|r| r.map(|(_, v)| v)))
    }

    /// As [`poll_join_next`](Self::poll_join_next), with the completed task's id.
    pub fn poll_join_next_with_id(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<(Id, T), JoinError>>> {
        loop {
            if self.len == 0 {
                return Poll::Ready(None);
            }
            if !crate::task::coop::has_budget_remaining() {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let index = {
                let mut r = lock(&self.ready.inner);
                match r.queue.pop_front() {
                    Some(i) => i,
                    None => {
                        let old = r.waiter.replace(cx.waker().clone());
                        // The replaced waker is dropped after the lock is released: its
                        // destructor is user code and may complete one of our tasks, whose
                        // entry waker takes this lock.
                        drop(r);
                        drop(old);
                        return Poll::Pending;
                    }
                }
            };
            let Some(Some(entry)) = self.entries.get_mut(index) else { continue };
            let mut ecx = Context::from_waker(&entry.waker);
            if let Poll::Ready(res) = Pin::new(&mut entry.handle).poll(&mut ecx) {
                let id = entry.handle.id();
                self.entries[index] = None;
                self.free.push(index);
                self.len -= 1;
                return Poll::Ready(Some(res.map(|v| (id, v))));
            }
        }
    }

    /// Aborts every task (they stay in the set until joined, as cancelled).
    pub fn abort_all(&mut self) {
        for e in self.entries.iter().flatten() {
            e.handle.abort();
        }
    }

    /// Removes every task from the set without aborting them.
    pub fn detach_all(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.len = 0;
        lock(&self.ready.inner).queue.clear();
    }

    /// Aborts every task and waits for them to finish.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Waits for every task; panics (resuming the panic) if one panicked, like tokio's.
    pub async fn join_all(mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        while let Some(res) = self.join_next().await {
            match res {
                Ok(v) => out.push(v),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => panic!("a task in JoinSet::join_all was cancelled: {e}"),
            }
        }
        out
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet::new()
    }
}

/// Spawns each future on the current runtime (panics outside one), as tokio's does.
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
        let mut set = JoinSet::new();
        set.extend(iter);
        set
    }
}

/// Spawns each future on the current runtime (panics outside one).
impl<T, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for future in iter {
            self.spawn(future);
        }
    }
}

impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        self.abort_all();
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len).finish()
    }
}
