//! `RwLock`: an async reader-writer lock that is fair and therefore write-preferring.
//!
//! It is a [`RawSemaphore`](super::batch_semaphore) with `MAX_READS` permits: a reader takes one,
//! a writer takes all of them. Because the semaphore is strictly FIFO, a writer that is waiting
//! blocks every reader that arrives after it (they queue behind it instead of sharing the lock
//! with the current readers), so a steady stream of readers cannot starve a writer. Uncontended
//! read and write locks are one CAS each.

use std::fmt;
use std::ops::{Deref, DerefMut};

use super::batch_semaphore::RawSemaphore;
use super::mutex::TryLockError;
use crate::loom::UnsafeCell;
// The owned variants take the user's `std::sync::Arc` (under loom too: it only carries
// ownership, every synchronising access is inside the semaphore, which loom models).
use std::sync::Arc;

/// The most concurrent readers (a writer takes this many permits).
const MAX_READS: u32 = u32::MAX >> 3;

/// A fair, write-preferring async reader-writer lock.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let lock = weft::sync::RwLock::new(5);
/// {
///     let (a, b) = (lock.read().await, lock.read().await);
///     assert_eq!(*a + *b, 10);
/// }
/// *lock.write().await += 1;
/// assert_eq!(*lock.read().await, 6);
/// # });
/// ```
pub struct RwLock<T: ?Sized> {
    max_readers: u32,
    sem: RawSemaphore,
    data: UnsafeCell<T>,
}

// SAFETY: readers share `&T` across threads (needs `Sync`), a writer gets `&mut T` possibly on
// another thread (needs `Send`); the semaphore keeps readers and the writer apart.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: readers on several threads share `&T` (needs `T: Sync`) and a writer may get `&mut T` on
// any thread (needs `T: Send`); the semaphore keeps readers and the writer apart.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

/// Shared access; releases one read permit on drop. It points at the data rather than the
/// lock so that [`map`](RwLockReadGuard::map) and `downgrade_map` can narrow it to a part of
/// the value.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockReadGuard<'a, T: ?Sized> {
    sem: &'a RawSemaphore,
    data: *const T,
    _borrow: std::marker::PhantomData<&'a T>,
}

/// Exclusive access; releases every permit on drop.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
}

/// Shared access that keeps an `Arc<RwLock>` alive.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockReadGuard<T: ?Sized> {
    lock: Arc<RwLock<T>>,
}

/// Exclusive access that keeps an `Arc<RwLock>` alive.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockWriteGuard<T: ?Sized> {
    lock: Arc<RwLock<T>>,
}

// SAFETY: a read guard only gives `&T`.
unsafe impl<T: ?Sized + Sync> Send for RwLockReadGuard<'_, T> {}
// SAFETY: sharing a read guard only shares `&T`, which `T: Sync` allows.
unsafe impl<T: ?Sized + Sync> Sync for RwLockReadGuard<'_, T> {}
// SAFETY: a write guard gives `&mut T` (moving it moves access: `Send`), shared it gives `&T`.
unsafe impl<T: ?Sized + Sync> Sync for RwLockWriteGuard<'_, T> {}
// SAFETY: an owned read guard only gives `&T` (`T: Sync`); moving it moves the `Arc` it holds,
// which needs `RwLock<T>: Send + Sync`.
unsafe impl<T: ?Sized + Send + Sync> Send for OwnedRwLockReadGuard<T> {}
// SAFETY: sharing an owned read guard only shares `&T` (`T: Sync`); the `Arc` it holds needs
// `RwLock<T>: Send + Sync`.
unsafe impl<T: ?Sized + Send + Sync> Sync for OwnedRwLockReadGuard<T> {}
// SAFETY: sharing an owned write guard only shares `&T` (`T: Sync`); the `Arc` it holds needs
// `RwLock<T>: Send + Sync`.
unsafe impl<T: ?Sized + Send + Sync> Sync for OwnedRwLockWriteGuard<T> {}

impl<T> RwLock<T> {
    pub fn new(value: T) -> RwLock<T> {
        RwLock::with_max_readers(value, MAX_READS)
    }

    /// A lock admitting at most `max_readers` readers at once. Panics if it is 0 or above
    /// `u32::MAX >> 3`.
    #[track_caller]
    pub fn with_max_readers(value: T, max_readers: u32) -> RwLock<T> {
        assert!(max_readers > 0, "a RwLock may not be created with 0 readers");
        assert!(max_readers <= MAX_READS, "a RwLock may not be created with more than {MAX_READS} readers");
        RwLock { max_readers, sem: RawSemaphore::new(max_readers as usize), data: UnsafeCell::new(value) }
    }

    /// `new` usable in a `static`. Not available under `--cfg loom`, as in tokio.
    #[cfg(not(loom))]
    pub const fn const_new(value: T) -> RwLock<T> {
        RwLock::const_with_max_readers(value, MAX_READS)
    }

    /// `with_max_readers` usable in a `static`. Not available under `--cfg loom`.
    #[cfg(not(loom))]
    #[track_caller]
    pub const fn const_with_max_readers(value: T, max_readers: u32) -> RwLock<T> {
        assert!(max_readers > 0, "a RwLock may not be created with 0 readers");
        assert!(max_readers <= MAX_READS, "a RwLock may not be created with more than `u32::MAX >> 3` readers");
        RwLock { max_readers, sem: RawSemaphore::const_new(max_readers as usize), data: UnsafeCell::new(value) }
    }

    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Waits for shared access, behind any writer already waiting.
    pub async fn read(&self) -> RwLockReadGuard<'_, T> {
        self.acquire(1).await;
        self.read_guard()
    }

    /// Waits for exclusive access; readers that arrive later wait behind it.
    pub async fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.acquire(self.max_readers).await;
        RwLockWriteGuard { lock: self }
    }

    pub async fn read_owned(self: Arc<Self>) -> OwnedRwLockReadGuard<T> {
        self.acquire(1).await;
        OwnedRwLockReadGuard { lock: self }
    }

    pub async fn write_owned(self: Arc<Self>) -> OwnedRwLockWriteGuard<T> {
        self.acquire(self.max_readers).await;
        OwnedRwLockWriteGuard { lock: self }
    }

    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        self.sem.try_acquire(1).map_err(|_| TryLockError::new())?;
        Ok(self.read_guard())
    }

    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        self.sem.try_acquire(self.max_readers as usize).map_err(|_| TryLockError::new())?;
        Ok(RwLockWriteGuard { lock: self })
    }

    #[track_caller]
    pub fn blocking_read(&self) -> RwLockReadGuard<'_, T> {
        crate::sync::block_on(self.read())
    }

    #[track_caller]
    pub fn blocking_write(&self) -> RwLockWriteGuard<'_, T> {
        crate::sync::block_on(self.write())
    }

    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` is exclusive.
        self.data.with_mut(|p| unsafe { &mut *p })
    }

    /// The guard for one read permit the caller holds.
    fn read_guard(&self) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard { sem: &self.sem, data: self.data.with(|p| p), _borrow: std::marker::PhantomData }
    }

    async fn acquire(&self, n: u32) {
        self.sem.acquire(n as usize).await.unwrap_or_else(|_| unreachable!("an RwLock's semaphore is never closed"));
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RwLock");
        match self.try_read() {
            Ok(guard) => d.field("data", &&*guard),
            Err(_) => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// Turns exclusive access into shared access without letting a writer in between.
    pub fn downgrade(self) -> RwLockReadGuard<'a, T> {
        let lock = self.lock;
        std::mem::forget(self);
        lock.sem.release(lock.max_readers as usize - 1);
        lock.read_guard()
    }

    /// Narrows the write guard to a part of the value with `f` (run while still exclusive),
    /// then downgrades it: readers get in only after `f` returns.
    pub fn downgrade_map<F: FnOnce(&T) -> &U, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U> {
        let lock = this.lock;
        // SAFETY: `this` holds every permit, so no `&mut T` exists while `f` reads.
        let data: *const U = f(lock.data.with(|p| unsafe { &*p }));
        std::mem::forget(this);
        lock.sem.release(lock.max_readers as usize - 1);
        RwLockReadGuard { sem: &lock.sem, data, _borrow: std::marker::PhantomData }
    }

    /// Like `downgrade_map`, but `f` may decline (`None`): the write guard is then given
    /// back unchanged.
    pub fn try_downgrade_map<F: FnOnce(&T) -> Option<&U>, U: ?Sized>(
        this: Self,
        f: F,
    ) -> Result<RwLockReadGuard<'a, U>, Self> {
        let lock = this.lock;
        // SAFETY: `this` holds every permit, so no `&mut T` exists while `f` reads.
        let Some(data) = f(lock.data.with(|p| unsafe { &*p })).map(|u| u as *const U) else {
            return Err(this);
        };
        std::mem::forget(this);
        lock.sem.release(lock.max_readers as usize - 1);
        Ok(RwLockReadGuard { sem: &lock.sem, data, _borrow: std::marker::PhantomData })
    }
}

impl<'a, T: ?Sized> RwLockReadGuard<'a, T> {
    /// Narrows the guard to a part of the value.
    pub fn map<F: FnOnce(&T) -> &U, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U> {
        let data: *const U = f(&*this);
        let sem = this.sem;
        std::mem::forget(this);
        RwLockReadGuard { sem, data, _borrow: std::marker::PhantomData }
    }

    /// Like `map`, but `f` may decline (`None`): the guard is then given back unchanged.
    pub fn try_map<F: FnOnce(&T) -> Option<&U>, U: ?Sized>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self> {
        let Some(data) = f(&*this).map(|u| u as *const U) else {
            return Err(this);
        };
        let sem = this.sem;
        std::mem::forget(this);
        Ok(RwLockReadGuard { sem, data, _borrow: std::marker::PhantomData })
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds a read permit for the lock `data` points into (or into a part
        // of its value), so no writer exists while it lives; `'a` keeps the lock alive.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> Drop for RwLockReadGuard<'_, T> {
    fn drop(&mut self) {
        self.sem.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized> OwnedRwLockWriteGuard<T> {
    pub fn downgrade(self) -> OwnedRwLockReadGuard<T> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the Arc is moved out exactly once.
        let lock = unsafe { std::ptr::read(&this.lock) };
        lock.sem.release(lock.max_readers as usize - 1);
        OwnedRwLockReadGuard { lock }
    }
}

macro_rules! guard_impls {
    ([$($lt:lifetime)?] $guard:ident, $permits:expr) => {
        impl<$($lt,)? T: ?Sized> Deref for $guard<$($lt,)? T> {
            type Target = T;
            fn deref(&self) -> &T {
                // SAFETY: the guard holds read or write permits, so no writer other than this
                // guard exists.
                self.lock.data.with(|p| unsafe { &*p })
            }
        }
        impl<$($lt,)? T: ?Sized> Drop for $guard<$($lt,)? T> {
            fn drop(&mut self) {
                let permits: fn(&RwLock<T>) -> usize = $permits;
                self.lock.sem.release(permits(&self.lock));
            }
        }
        impl<$($lt,)? T: ?Sized + fmt::Debug> fmt::Debug for $guard<$($lt,)? T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }
    };
}

guard_impls!(['a] RwLockWriteGuard, |l| l.max_readers as usize);
guard_impls!([] OwnedRwLockReadGuard, |_| 1);
guard_impls!([] OwnedRwLockWriteGuard, |l| l.max_readers as usize);

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds every permit, so it is the only guard.
        self.lock.data.with_mut(|p| unsafe { &mut *p })
    }
}

impl<T: ?Sized> DerefMut for OwnedRwLockWriteGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds every permit, so it is the only guard.
        self.lock.data.with_mut(|p| unsafe { &mut *p })
    }
}
