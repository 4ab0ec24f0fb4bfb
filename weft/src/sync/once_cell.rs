//! `OnceCell`: a value set at most once, possibly by an async initialiser.
//!
//! An atomic flag says whether the value is there (readers pay one Acquire load). Initialisers
//! serialise on a one-permit semaphore: the permit holder runs its initialiser; if it
//! succeeds it stores the value, sets the flag and closes the semaphore (waking every waiter,
//! who then read the value); if it fails or is cancelled, the permit passes to the next
//! waiter, which tries its own initialiser.

use std::fmt;
use std::future::Future;
use std::mem::MaybeUninit;

use super::batch_semaphore::{RawSemaphore, TryAcquireError};
use crate::loom::sync::atomic::{AtomicBool, Ordering::*};
use crate::loom::UnsafeCell;

/// A thread-safe cell written once.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let cell = weft::sync::OnceCell::new();
/// let v = cell.get_or_init(|| async { 1 + 1 }).await;
/// assert_eq!(*v, 2);
/// assert_eq!(cell.set(3), Err(weft::sync::SetError::AlreadyInitializedError(3)));
/// # });
/// ```
pub struct OnceCell<T> {
    set: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
    init: RawSemaphore,
}

// SAFETY: the value is written once by the permit holder before `set` (Release) and only read
// after `set` (Acquire); sharing the cell shares `&T` (`Sync`), and moving it moves `T` (`Send`).
unsafe impl<T: Send + Sync> Sync for OnceCell<T> {}
// SAFETY: moving the cell moves the (possibly set) `T` with it, which `T: Send` allows.
unsafe impl<T: Send> Send for OnceCell<T> {}

/// `set` failed.
#[derive(Debug, PartialEq, Eq)]
pub enum SetError<T> {
    /// The cell already holds a value; yours is returned.
    AlreadyInitializedError(T),
    /// Another task is initialising the cell right now; yours is returned.
    InitializingError(T),
}

impl<T> fmt::Display for SetError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetError::AlreadyInitializedError(_) => f.write_str("AlreadyInitializedError"),
            SetError::InitializingError(_) => f.write_str("InitializingError"),
        }
    }
}

impl<T: fmt::Debug> std::error::Error for SetError<T> {}

impl<T> SetError<T> {
    /// True for [`SetError::AlreadyInitializedError`].
    pub fn is_already_init_err(&self) -> bool {
        matches!(self, SetError::AlreadyInitializedError(_))
    }

    /// True for [`SetError::InitializingError`].
    pub fn is_initializing_err(&self) -> bool {
        matches!(self, SetError::InitializingError(_))
    }
}

impl<T> OnceCell<T> {
    pub fn new() -> OnceCell<T> {
        OnceCell {
            set: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
            init: RawSemaphore::new(1),
        }
    }

    /// `new` usable in a `static`. Not available under `--cfg loom`, as in tokio.
    #[cfg(not(loom))]
    pub const fn const_new() -> OnceCell<T> {
        OnceCell {
            set: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
            init: RawSemaphore::const_new(1),
        }
    }

    /// A cell already holding `value`, usable in a `static`. Not available under `--cfg loom`.
    #[cfg(not(loom))]
    pub const fn const_new_with(value: T) -> OnceCell<T> {
        OnceCell {
            set: AtomicBool::new(true),
            value: UnsafeCell::new(MaybeUninit::new(value)),
            // No initialiser permit: every path checks `set` first, and none may ever store.
            init: RawSemaphore::const_new(0),
        }
    }

    pub fn new_with(value: Option<T>) -> OnceCell<T> {
        let cell = OnceCell::new();
        if let Some(v) = value {
            // SAFETY: nobody else can see the new cell.
            unsafe { cell.store(v) };
        }
        cell
    }

    pub fn initialized(&self) -> bool {
        self.set.load(Acquire)
    }

    pub fn get(&self) -> Option<&T> {
        if self.initialized() {
            // SAFETY: `set` (Acquire) means the value was written and is never written again.
            Some(unsafe { self.get_unchecked() })
        } else {
            None
        }
    }

    pub fn get_mut(&mut self) -> Option<&mut T> {
        if self.set.load(Acquire) {
            // SAFETY: initialised, and `&mut self` is exclusive.
            Some(self.value.with_mut(|p| unsafe { (*p).assume_init_mut() }))
        } else {
            None
        }
    }

    /// Sets the value if the cell is empty and nobody is initialising it.
    pub fn set(&self, value: T) -> Result<(), SetError<T>> {
        if self.initialized() {
            return Err(SetError::AlreadyInitializedError(value));
        }
        match self.init.try_acquire(1) {
            Ok(()) => {
                // SAFETY: we hold the only permit and the cell is empty.
                unsafe { self.store(value) };
                Ok(())
            }
            Err(TryAcquireError::Closed) => Err(SetError::AlreadyInitializedError(value)),
            Err(TryAcquireError::NoPermits) => Err(SetError::InitializingError(value)),
        }
    }

    /// The value, running `f` to produce it if the cell is empty (one initialiser at a time;
    /// if it is cancelled, the next waiter runs its own).
    pub async fn get_or_init<F, Fut>(&self, f: F) -> &T
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        match self.get_or_try_init(|| async { Ok::<T, std::convert::Infallible>(f().await) }).await {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// As `get_or_init`, with a fallible initialiser; on `Err` the cell stays empty.
    pub async fn get_or_try_init<E, F, Fut>(&self, f: F) -> Result<&T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        if let Some(v) = self.get() {
            return Ok(v);
        }
        match self.init.acquire(1).await {
            Err(_) => {
                // Closed: another initialiser succeeded.
                Ok(self.get().expect("the semaphore closes only after the value is stored"))
            }
            Ok(()) => {
                if let Some(v) = self.get() {
                    self.init.release(1);
                    return Ok(v);
                }
                // If `f` panics or this future is dropped, the permit must go back.
                struct Release<'a>(&'a RawSemaphore);
                impl Drop for Release<'_> {
                    fn drop(&mut self) {
                        self.0.release(1);
                    }
                }
                let guard = Release(&self.init);
                let value = f().await?;
                std::mem::forget(guard);
                // SAFETY: we hold the only permit and the cell is empty.
                Ok(unsafe { self.store(value) })
            }
        }
    }

    /// # Safety
    /// The caller holds the init permit (or exclusive access) and the cell is empty.
    unsafe fn store(&self, value: T) -> &T {
        // SAFETY: exclusive writer (caller); readers wait for `set`.
        self.value.with_mut(|p| unsafe { (*p).write(value) });
        self.set.store(true, Release);
        // Wakes every waiting initialiser: they read the value.
        self.init.close();
        // SAFETY: the value was written just above and `set` published it; it is never
        // written again.
        unsafe { self.get_unchecked() }
    }

    /// # Safety
    /// `set` was observed true.
    unsafe fn get_unchecked(&self) -> &T {
        // SAFETY: initialised (caller) and never written again.
        self.value.with(|p| unsafe { (*p).assume_init_ref() })
    }

    pub fn into_inner(mut self) -> Option<T> {
        self.take()
    }

    /// Empties the cell, returning the value.
    pub fn take(&mut self) -> Option<T> {
        if self.set.swap(false, AcqRel) {
            self.init = RawSemaphore::new(1);
            // SAFETY: it was initialised, and the flag is now clear so it is not read again.
            Some(self.value.with_mut(|p| unsafe { (*p).assume_init_read() }))
        } else {
            None
        }
    }
}

impl<T> Drop for OnceCell<T> {
    fn drop(&mut self) {
        if self.set.load(Acquire) {
            // SAFETY: initialised and dropped exactly once, here.
            self.value.with_mut(|p| unsafe { (*p).assume_init_drop() });
        }
    }
}

impl<T> Default for OnceCell<T> {
    fn default() -> Self {
        OnceCell::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for OnceCell<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnceCell").field("value", &self.get()).finish()
    }
}

impl<T: Clone> Clone for OnceCell<T> {
    fn clone(&self) -> Self {
        OnceCell::new_with(self.get().cloned())
    }
}

/// Equal when both are unset, or both set to equal values (as tokio's).
impl<T: PartialEq> PartialEq for OnceCell<T> {
    fn eq(&self, other: &OnceCell<T>) -> bool {
        self.get() == other.get()
    }
}

impl<T: Eq> Eq for OnceCell<T> {}

impl<T> From<T> for OnceCell<T> {
    fn from(value: T) -> Self {
        OnceCell::new_with(Some(value))
    }
}
