//! `RwLock`: an async reader-writer lock that is fair and therefore write-preferring.
//!
//! It is a [`RawSemaphore`](super::batch_semaphore) with `MAX_READS` permits: a reader takes one,
//! a writer takes all of them. Because the semaphore is strictly FIFO, a writer that is waiting
//! blocks every reader that arrives after it (they queue behind it instead of sharing the lock
//! with the current readers), so a steady stream of readers cannot starve a writer. Uncontended
//! read and write locks are one CAS each.
//!
//! The guards and their auto traits are here; narrowing them to a part of the value (`map`,
//! `try_map`, `downgrade_map`, and the mapped write guards) is in `rwlock_map.rs`. A read guard,
//! owned or not, holds a pointer to what it reads, so the same type serves mapped and unmapped.

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
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
    pub(super) max_readers: u32,
    pub(super) sem: RawSemaphore,
    pub(super) data: UnsafeCell<T>,
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
    pub(super) sem: &'a RawSemaphore,
    pub(super) data: *const T,
    pub(super) _borrow: PhantomData<&'a T>,
}

/// Exclusive access; releases every permit on drop.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockWriteGuard<'a, T: ?Sized> {
    pub(super) lock: &'a RwLock<T>,
}

/// Shared access that keeps an `Arc<RwLock>` alive; releases one read permit on drop. `U` is
/// the part of the `T` it points at once narrowed with [`map`](OwnedRwLockReadGuard::map)
/// (`T` itself until then).
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockReadGuard<T: ?Sized, U: ?Sized = T> {
    pub(super) lock: Arc<RwLock<T>>,
    pub(super) data: *const U,
    // As tokio's: the guard is `Unpin` only for `T: Unpin`.
    pub(super) _owns: PhantomData<T>,
}

/// Exclusive access that keeps an `Arc<RwLock>` alive; releases every permit on drop.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockWriteGuard<T: ?Sized> {
    pub(super) lock: Arc<RwLock<T>>,
    // As tokio's: the guard is `Unpin` only for `T: Unpin`.
    pub(super) _owns: PhantomData<T>,
}

// The bounds below are tokio's, to the letter, so a program is `Send`-correct on one exactly
// when it is on the other.
// SAFETY: a read guard only gives `&T`; sending it lets another thread read `T` (`T: Sync`).
unsafe impl<T: ?Sized + Sync> Send for RwLockReadGuard<'_, T> {}
// SAFETY: sharing a read guard only shares `&T` (`T: Sync`); `Send` is asked as well, as tokio
// does.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLockReadGuard<'_, T> {}
// SAFETY: sharing a write guard only shares `&T` (`T: Sync`); `Send` is asked as well, as tokio
// does. (Its `Send` is the compiler's: `&RwLock<T>` is `Send` for `T: Send + Sync`.)
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLockWriteGuard<'_, T> {}
// SAFETY: an owned read guard gives `&U` (`U: Sync`); moving it moves the `Arc` it holds, and
// dropping the last `Arc` may drop the `T` on that thread, which needs `RwLock<T>: Send + Sync`.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Sync> Send for OwnedRwLockReadGuard<T, U> {}
// SAFETY: sharing an owned read guard shares `&U` (`U: Sync`) and the `Arc` (`T: Send + Sync`);
// `U: Send` is asked as well, as tokio does.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Send + Sync> Sync for OwnedRwLockReadGuard<T, U> {}
// SAFETY: sharing an owned write guard only shares `&T` (`T: Sync`); the `Arc` it holds needs
// `RwLock<T>: Send + Sync`. (Its `Send` is the compiler's, from the `Arc`: `T: Send + Sync`.)
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
        OwnedRwLockReadGuard::new(self)
    }

    pub async fn write_owned(self: Arc<Self>) -> OwnedRwLockWriteGuard<T> {
        self.acquire(self.max_readers).await;
        OwnedRwLockWriteGuard { lock: self, _owns: PhantomData }
    }

    pub fn try_read(&self) -> Result<RwLockReadGuard<'_, T>, TryLockError> {
        self.sem.try_acquire(1).map_err(|_| TryLockError::new())?;
        Ok(self.read_guard())
    }

    pub fn try_write(&self) -> Result<RwLockWriteGuard<'_, T>, TryLockError> {
        self.sem.try_acquire(self.max_readers as usize).map_err(|_| TryLockError::new())?;
        Ok(RwLockWriteGuard { lock: self })
    }

    /// Shared access now, or `TryLockError` if a writer holds the lock or waits for it (the
    /// `Arc` is then dropped).
    pub fn try_read_owned(self: Arc<Self>) -> Result<OwnedRwLockReadGuard<T>, TryLockError> {
        self.sem.try_acquire(1).map_err(|_| TryLockError::new())?;
        Ok(OwnedRwLockReadGuard::new(self))
    }

    /// Exclusive access now, or `TryLockError` if anyone holds the lock (the `Arc` is then
    /// dropped).
    pub fn try_write_owned(self: Arc<Self>) -> Result<OwnedRwLockWriteGuard<T>, TryLockError> {
        self.sem.try_acquire(self.max_readers as usize).map_err(|_| TryLockError::new())?;
        Ok(OwnedRwLockWriteGuard { lock: self, _owns: PhantomData })
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
    pub(super) fn read_guard(&self) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard { sem: &self.sem, data: self.data.with(|p| p), _borrow: PhantomData }
    }

    async fn acquire(&self, n: u32) {
        self.sem.acquire(n as usize).await.unwrap_or_else(|_| unreachable!("an RwLock's semaphore is never closed"));
    }
}

impl<T> From<T> for RwLock<T> {
    fn from(value: T) -> Self {
        RwLock::new(value)
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
        // One permit passes to the read guard, the others go back below.
        std::mem::forget(self);
        lock.sem.release(lock.max_readers as usize - 1);
        lock.read_guard()
    }
}

impl<T: ?Sized> OwnedRwLockReadGuard<T> {
    /// The guard for one read permit the caller holds on `lock`.
    pub(super) fn new(lock: Arc<RwLock<T>>) -> OwnedRwLockReadGuard<T> {
        let data = lock.data.with(|p| p);
        OwnedRwLockReadGuard { lock, data, _owns: PhantomData }
    }
}

impl<T: ?Sized, U: ?Sized> OwnedRwLockReadGuard<T, U> {
    /// The lock this guard reads.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }

    /// Takes the `Arc` out without running the drop (which would release the read permit).
    pub(super) fn into_lock(this: Self) -> Arc<RwLock<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never dropped or used again, so the `Arc` is moved out once.
        unsafe { std::ptr::read(&this.lock) }
    }
}

impl<T: ?Sized> OwnedRwLockWriteGuard<T> {
    /// Turns exclusive access into shared access without letting a writer in between.
    pub fn downgrade(self) -> OwnedRwLockReadGuard<T> {
        let lock = Self::into_lock(self);
        // One permit stays with the read guard.
        lock.sem.release(lock.max_readers as usize - 1);
        OwnedRwLockReadGuard::new(lock)
    }

    /// The lock this guard writes.
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }

    /// Takes the `Arc` out without running the drop (which would release every permit).
    pub(super) fn into_lock(this: Self) -> Arc<RwLock<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never dropped or used again, so the `Arc` is moved out once.
        unsafe { std::ptr::read(&this.lock) }
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

impl<T: ?Sized, U: ?Sized> Deref for OwnedRwLockReadGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: the guard holds a read permit of the lock `data` points into (or into a part
        // of its value), so no writer exists while it lives; the `Arc` keeps the lock alive.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedRwLockReadGuard<T, U> {
    fn drop(&mut self) {
        self.lock.sem.release(1);
    }
}

macro_rules! write_guard_impls {
    ([$($lt:lifetime)?] $guard:ident) => {
        impl<$($lt,)? T: ?Sized> Deref for $guard<$($lt,)? T> {
            type Target = T;
            fn deref(&self) -> &T {
                // SAFETY: the guard holds every permit, so no `&mut T` exists elsewhere.
                self.lock.data.with(|p| unsafe { &*p })
            }
        }
        impl<$($lt,)? T: ?Sized> DerefMut for $guard<$($lt,)? T> {
            fn deref_mut(&mut self) -> &mut T {
                // SAFETY: the guard holds every permit, so it is the only guard; `&mut self`
                // makes this the only access through it.
                self.lock.data.with_mut(|p| unsafe { &mut *p })
            }
        }
        impl<$($lt,)? T: ?Sized> Drop for $guard<$($lt,)? T> {
            fn drop(&mut self) {
                self.lock.sem.release(self.lock.max_readers as usize);
            }
        }
    };
}

write_guard_impls!(['a] RwLockWriteGuard);
write_guard_impls!([] OwnedRwLockWriteGuard);

/// `Debug` and `Display` forward to the data, for every guard kind (as tokio).
macro_rules! fmt_guard {
    ($([$($g:tt)*] $ty:ty;)*) => {$(
        impl<$($g)* + fmt::Debug> fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&**self, f)
            }
        }
        impl<$($g)* + fmt::Display> fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }
    )*};
}
pub(super) use fmt_guard;

// The last generic parameter is what the guard dereferences to: it gets the `fmt` bound.
fmt_guard! {
    [T: ?Sized] RwLockReadGuard<'_, T>;
    [T: ?Sized] RwLockWriteGuard<'_, T>;
    [T: ?Sized, U: ?Sized] OwnedRwLockReadGuard<T, U>;
    [T: ?Sized] OwnedRwLockWriteGuard<T>;
}
