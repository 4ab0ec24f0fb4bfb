//! `SetOnce`: a value set at most once (synchronously), which tasks can `wait` for.
//!
//! A small state word (`EMPTY → SETTING → SET`) picks the one setter; the value is published
//! by the Release store of `SET`, and waiters use a [`Notify`] with the "create `Notified`,
//! then check" order, so a `set` racing with `wait` is never missed.

use std::fmt;
use std::mem::MaybeUninit;

use super::Notify;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::UnsafeCell;

const EMPTY: usize = 0;
const SETTING: usize = 1;
const SET: usize = 2;

/// A cell set once, awaitable.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// let cell = Arc::new(weft::sync::SetOnce::new());
/// let c = cell.clone();
/// weft::spawn(async move { c.set(5).unwrap() });
/// assert_eq!(*cell.wait().await, 5);
/// # });
/// ```
pub struct SetOnce<T> {
    state: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
    notify: Notify,
}

// SAFETY: the value is written once (by the thread that won EMPTY → SETTING) before the
// Release store of SET, and read only after an Acquire load of SET.
unsafe impl<T: Send + Sync> Sync for SetOnce<T> {}
// SAFETY: moving the cell moves the (possibly set) `T` with it, which `T: Send` allows.
unsafe impl<T: Send> Send for SetOnce<T> {}

/// `set` failed: the cell was already set (or being set); the value is returned.
#[derive(Debug, PartialEq, Eq)]
pub struct SetOnceError<T>(pub T);

impl<T> fmt::Display for SetOnceError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SetOnce already initialized")
    }
}

impl<T: fmt::Debug> std::error::Error for SetOnceError<T> {}

impl<T> SetOnce<T> {
    pub fn new() -> SetOnce<T> {
        SetOnce { state: AtomicUsize::new(EMPTY), value: UnsafeCell::new(MaybeUninit::uninit()), notify: Notify::new() }
    }

    /// `new` usable in a `static`. Not available under `--cfg loom`, as in tokio.
    #[cfg(not(loom))]
    pub const fn const_new() -> SetOnce<T> {
        SetOnce {
            state: AtomicUsize::new(EMPTY),
            value: UnsafeCell::new(MaybeUninit::uninit()),
            notify: Notify::const_new(),
        }
    }

    /// A cell already holding `value`, usable in a `static`. Not available under `--cfg loom`.
    #[cfg(not(loom))]
    pub const fn const_new_with(value: T) -> SetOnce<T> {
        SetOnce {
            state: AtomicUsize::new(SET),
            value: UnsafeCell::new(MaybeUninit::new(value)),
            notify: Notify::const_new(),
        }
    }

    pub fn new_with(value: Option<T>) -> SetOnce<T> {
        let cell = SetOnce::new();
        if let Some(v) = value {
            let _ = cell.set(v);
        }
        cell
    }

    pub fn initialized(&self) -> bool {
        self.state.load(Acquire) == SET
    }

    pub fn get(&self) -> Option<&T> {
        if self.initialized() {
            // SAFETY: SET observed with Acquire: written, never written again.
            Some(self.value.with(|p| unsafe { (*p).assume_init_ref() }))
        } else {
            None
        }
    }

    /// Sets the value and wakes every waiter; fails if it was already set.
    pub fn set(&self, value: T) -> Result<(), SetOnceError<T>> {
        if self.state.compare_exchange(EMPTY, SETTING, Acquire, Relaxed).is_err() {
            return Err(SetOnceError(value));
        }
        // SAFETY: winning EMPTY → SETTING makes this the only writer; readers wait for SET.
        self.value.with_mut(|p| unsafe { (*p).write(value) });
        self.state.store(SET, Release);
        self.notify.notify_waiters();
        Ok(())
    }

    /// Waits until the value is set.
    pub async fn wait(&self) -> &T {
        loop {
            let notified = self.notify.notified();
            if let Some(v) = self.get() {
                return v;
            }
            notified.await;
        }
    }

    pub fn into_inner(self) -> Option<T> {
        // Clearing the state first means `Drop` below will not drop the value again.
        if self.state.swap(EMPTY, AcqRel) == SET {
            // SAFETY: it was set, and the state is EMPTY now, so it is moved out exactly once.
            Some(self.value.with_mut(|p| unsafe { (*p).assume_init_read() }))
        } else {
            None
        }
    }
}

impl<T> Drop for SetOnce<T> {
    fn drop(&mut self) {
        if self.state.load(Acquire) == SET {
            // SAFETY: set, dropped exactly once, here.
            self.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

/// A cell already set to `value` (as `new_with(Some(value))`).
/// Equal when both are unset, or both set to equal values (as tokio's).
impl<T: PartialEq> PartialEq for SetOnce<T> {
    fn eq(&self, other: &SetOnce<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for SetOnce<T> {}

/// A new cell holding a clone of the value, if one was set.
impl<T: Clone> Clone for SetOnce<T> {
    fn clone(&self) -> SetOnce<T> {
        match self.get() {
            Some(value) => SetOnce::from(value.clone()),
            None => SetOnce::default(),
        }
    }
}

impl<T> From<T> for SetOnce<T> {
    fn from(value: T) -> SetOnce<T> {
        SetOnce::new_with(Some(value))
    }
}

impl<T> Default for SetOnce<T> {
    fn default() -> Self {
        SetOnce::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for SetOnce<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SetOnce").field("value", &self.get()).finish()
    }
}
