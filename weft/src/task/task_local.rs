//! Task-local storage: a value bound to a future (or a closure) rather than to a thread.
//!
//! A `LocalKey<T>` (declared by `task_local!`) wraps a `thread_local!` slot holding an
//! `Option<T>`. `scope(value, fut)` returns a `TaskLocalFuture` that owns the value between
//! polls and swaps it into the thread's slot for the duration of each poll (and of the inner
//! future's drop), then swaps it back out, so whichever worker polls the task sees the value
//! and no other task does. Nested scopes of the same key nest naturally: each swap restores
//! what was there before, also when the inner poll panics (a guard does the swap back).
//!
//! Rejected alternative: storing task-locals in the task header. It would cost every task a
//! field, and `sync_scope` (no task at all) would still need the thread slot.

use std::cell::RefCell;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A key for task-local data; declare one with [`task_local!`](crate::task_local).
pub struct LocalKey<T: 'static> {
    #[doc(hidden)]
    pub inner: std::thread::LocalKey<RefCell<Option<T>>>,
}

impl<T: 'static> LocalKey<T> {
    /// Sets the value for the duration of `f`'s polls (and its drop).
    pub fn scope<F: Future>(&'static self, value: T, f: F) -> TaskLocalFuture<T, F> {
        TaskLocalFuture { local: self, slot: Some(value), future: Some(f), _pinned: std::marker::PhantomPinned }
    }

    /// Sets the value while `f` runs.
    #[track_caller]
    pub fn sync_scope<F: FnOnce() -> R, R>(&'static self, value: T, f: F) -> R {
        let mut slot = Some(value);
        match self.scope_inner(&mut slot, f) {
            Ok(r) => r,
            Err(e) => e.panic(),
        }
    }

    /// Swaps `slot` in, runs `f`, swaps it back out (also on unwind).
    fn scope_inner<F: FnOnce() -> R, R>(&'static self, slot: &mut Option<T>, f: F) -> Result<R, ScopeInnerErr> {
        struct Guard<'a, T: 'static> {
            local: &'static LocalKey<T>,
            slot: &'a mut Option<T>,
        }
        impl<T: 'static> Drop for Guard<'_, T> {
            fn drop(&mut self) {
                // The slot was borrowable on entry and no borrow outlives `f`, so this
                // cannot fail; if the thread-local is being destroyed, nothing to restore.
                let _ = self.local.inner.try_with(|cell| {
                    if let Ok(mut v) = cell.try_borrow_mut() {
                        std::mem::swap(self.slot, &mut *v);
                    }
                });
            }
        }
        self.inner.try_with(|cell| {
            cell.try_borrow_mut().map(|mut v| std::mem::swap(slot, &mut *v)).map_err(|_| ScopeInnerErr::BorrowError)
        })??;
        let _guard = Guard { local: self, slot };
        Ok(f())
    }

    /// Runs `f` with a reference to the value.
    ///
    /// # Panics
    /// If the value is not set (outside any `scope`/`sync_scope` of this key).
    #[track_caller]
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        match self.try_with(f) {
            Ok(r) => r,
            Err(_) => panic!("cannot access a task-local storage value without setting it first"),
        }
    }

    /// Runs `f` with a reference to the value, or returns `AccessError` if it is not set.
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        let f = Some(f);
        self.inner
            .try_with(move |cell| {
                let guard = cell.try_borrow().ok()?;
                let value = guard.as_ref()?;
                f.map(|f| f(value))
            })
            .ok()
            .flatten()
            .ok_or(AccessError { _private: () })
    }
}

impl<T: Clone + 'static> LocalKey<T> {
    /// A clone of the value.
    ///
    /// # Panics
    /// If the value is not set.
    #[track_caller]
    pub fn get(&'static self) -> T {
        self.with(|v| v.clone())
    }

    /// A clone of the value, or `AccessError` if it is not set.
    pub fn try_get(&'static self) -> Result<T, AccessError> {
        self.try_with(|v| v.clone())
    }
}

impl<T: 'static> fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("LocalKey { .. }")
    }
}

pin_project_lite::pin_project! {
    /// A future with a task-local value set while it is polled; see [`LocalKey::scope`].
    pub struct TaskLocalFuture<T, F>
    where
        T: 'static,
    {
        local: &'static LocalKey<T>,
        slot: Option<T>,
        #[pin]
        future: Option<F>,
        #[pin]
        _pinned: std::marker::PhantomPinned,
    }

    impl<T: 'static, F> PinnedDrop for TaskLocalFuture<T, F> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            let mut future = this.future;
            if future.is_some() && this.slot.is_some() {
                // Drop the inner future with the value set, as tokio does: its destructors
                // may read the task-local. Failing to enter the scope here just drops it bare.
                let _ = this.local.scope_inner(this.slot, || future.set(None));
            }
        }
    }
}

impl<T: 'static, F> TaskLocalFuture<T, F> {
    /// Takes the value out of the future; `None` if it was already taken. The inner future
    /// stays and may still be polled, as in tokio: it then runs with the value unset.
    pub fn take_value(self: Pin<&mut Self>) -> Option<T> {
        self.project().slot.take()
    }
}

impl<T: 'static, F: Future> Future for TaskLocalFuture<T, F> {
    type Output = F::Output;

    #[track_caller]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let mut future = this.future;
        let res = this.local.scope_inner(this.slot, || match future.as_mut().as_pin_mut() {
            Some(fut) => {
                let res = fut.poll(cx);
                if res.is_ready() {
                    future.set(None);
                }
                Some(res)
            }
            None => None,
        });
        match res {
            Ok(Some(res)) => res,
            Ok(None) => panic!("`TaskLocalFuture` polled after completion"),
            Err(e) => e.panic(),
        }
    }
}

impl<T: 'static + fmt::Debug, F> fmt::Debug for TaskLocalFuture<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocalFuture").field("value", &self.slot).finish()
    }
}

/// Returned by [`LocalKey::try_with`] when the value is not set.
#[derive(Clone, Copy, Eq, PartialEq)]
pub struct AccessError {
    _private: (),
}

impl fmt::Debug for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessError").finish()
    }
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt("task-local value not set", f)
    }
}

impl Error for AccessError {}

enum ScopeInnerErr {
    BorrowError,
    AccessError,
}

impl ScopeInnerErr {
    #[track_caller]
    fn panic(&self) -> ! {
        match self {
            ScopeInnerErr::BorrowError => {
                panic!("cannot enter a task-local scope while the task-local storage is borrowed")
            }
            ScopeInnerErr::AccessError => {
                panic!("cannot enter a task-local scope during or after destruction of the underlying thread-local")
            }
        }
    }
}

impl From<std::thread::AccessError> for ScopeInnerErr {
    fn from(_: std::thread::AccessError) -> Self {
        ScopeInnerErr::AccessError
    }
}
