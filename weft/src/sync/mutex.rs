//! `Mutex`: an async mutual-exclusion lock that is fair (FIFO) and cancel-safe.
//!
//! It is a one-permit [`RawSemaphore`](super::batch_semaphore) plus the data: locking is one
//! CAS when uncontended, unlocking is one CAS when nobody waits, and waiters are served in the
//! order they arrived. A cancelled `lock()` unlinks its waiter and, if it had already been
//! handed the lock, passes it straight on to the next waiter.
//!
//! Hold the guard across `.await` only when you must; for data touched briefly without awaiting,
//! a blocking `std::sync::Mutex` is cheaper.

use std::fmt;
use std::ops::{Deref, DerefMut};

use super::batch_semaphore::{RawSemaphore, TryAcquireError};
use crate::loom::UnsafeCell;
// The owned variants take the user's `std::sync::Arc` (under loom too: it only carries
// ownership, every synchronising access is inside the semaphore, which loom models).
use std::sync::Arc;

/// A fair async mutex.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let m = weft::sync::Mutex::new(0);
/// *m.lock().await += 1;
/// assert_eq!(*m.lock().await, 1);
/// # });
/// ```
pub struct Mutex<T: ?Sized> {
    pub(super) sem: RawSemaphore,
    // Access is serialised by the semaphore (Acquire on lock, Release on unlock).
    pub(super) data: UnsafeCell<T>,
}

// SAFETY: the data is only reached through a guard, and the semaphore admits one guard at a
// time, so sharing the mutex shares `T` with one thread at a time: `T: Send` suffices.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: sharing the mutex hands `&mut T` to one guard holder at a time (the semaphore has one
// permit), so `T: Send` suffices.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

/// Access to a locked [`Mutex`]; unlocks on drop.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MutexGuard<'a, T: ?Sized> {
    pub(super) lock: &'a Mutex<T>,
}

/// Access to a locked `Arc<Mutex>`; unlocks on drop, keeps the mutex alive.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct OwnedMutexGuard<T: ?Sized> {
    pub(super) lock: Arc<Mutex<T>>,
}

// SAFETY: a guard gives `&T`/`&mut T`; sending it sends access to `T` (needs `T: Send`), and
// sharing it shares `&T` (needs `T: Sync`).
unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}
// SAFETY: sharing an owned guard shares `&T`, which `T: Sync` allows.
unsafe impl<T: ?Sized + Sync> Sync for OwnedMutexGuard<T> {}

/// `try_lock` failed: the mutex is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TryLockError(());

impl fmt::Display for TryLockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("operation would block")
    }
}

impl std::error::Error for TryLockError {}

impl TryLockError {
    pub(crate) fn new() -> TryLockError {
        TryLockError(())
    }
}

impl<T> Mutex<T> {
    pub fn new(value: T) -> Mutex<T> {
        Mutex { sem: RawSemaphore::new(1), data: UnsafeCell::new(value) }
    }

    /// `new` usable in a `static`. Not available under `--cfg loom`, as in tokio.
    #[cfg(not(loom))]
    pub const fn const_new(value: T) -> Mutex<T> {
        Mutex { sem: RawSemaphore::const_new(1), data: UnsafeCell::new(value) }
    }

    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Waits for the lock (FIFO). Cancel-safe: a dropped `lock()` future never holds the lock.
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        self.acquire().await;
        MutexGuard { lock: self }
    }

    /// Locks from synchronous code by blocking the thread. Panics inside an async context of a
    /// weft runtime would deadlock, so do not call it from a task.
    #[track_caller]
    pub fn blocking_lock(&self) -> MutexGuard<'_, T> {
        crate::sync::block_on(self.lock())
    }

    /// `lock_owned` from synchronous code, blocking the thread; the same caveat as
    /// [`blocking_lock`](Mutex::blocking_lock).
    #[track_caller]
    pub fn blocking_lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        crate::sync::block_on(self.lock_owned())
    }

    pub async fn lock_owned(self: Arc<Self>) -> OwnedMutexGuard<T> {
        self.acquire().await;
        OwnedMutexGuard { lock: self }
    }

    pub fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        match self.sem.try_acquire(1) {
            Ok(()) => Ok(MutexGuard { lock: self }),
            Err(TryAcquireError::NoPermits | TryAcquireError::Closed) => Err(TryLockError(())),
        }
    }

    pub fn try_lock_owned(self: Arc<Self>) -> Result<OwnedMutexGuard<T>, TryLockError> {
        match self.sem.try_acquire(1) {
            Ok(()) => Ok(OwnedMutexGuard { lock: self }),
            Err(_) => Err(TryLockError(())),
        }
    }

    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` is exclusive.
        self.data.with_mut(|p| unsafe { &mut *p })
    }

    async fn acquire(&self) {
        // The semaphore of a mutex is never closed, so acquiring cannot fail.
        self.sem.acquire(1).await.unwrap_or_else(|_| unreachable!("a Mutex's semaphore is never closed"));
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Ok(guard) => d.field("data", &&*guard),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// The mutex this guard locks.
    pub fn mutex(this: &Self) -> &'a Mutex<T> {
        this.lock
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex's only permit, so no other guard exists.
        self.lock.data.with(|p| unsafe { &*p })
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the only permit, and `&mut self` makes this the only access.
        self.lock.data.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.sem.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized> OwnedMutexGuard<T> {
    pub fn mutex(this: &Self) -> &Arc<Mutex<T>> {
        &this.lock
    }
}

impl<T: ?Sized> Deref for OwnedMutexGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex's only permit.
        self.lock.data.with(|p| unsafe { &*p })
    }
}

impl<T: ?Sized> DerefMut for OwnedMutexGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the only permit; `&mut self` makes this the only access.
        self.lock.data.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T: ?Sized> Drop for OwnedMutexGuard<T> {
    fn drop(&mut self) {
        self.lock.sem.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for OwnedMutexGuard<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}
