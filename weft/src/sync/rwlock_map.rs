//! Mapped `RwLock` guards: a lock of an [`RwLock`] held while the guard points at a part of the
//! data (`RwLockWriteGuard::map(guard, |s| &mut s.field)`), as tokio's `RwLockMappedWriteGuard`,
//! `OwnedRwLockMappedWriteGuard` and the mapping functions of the other guards.
//!
//! A mapped guard keeps what releases its permits (the semaphore and the permit count, or the
//! `Arc` of the lock) and a raw pointer into the data that the mapping closure returned.
//! Invariant: the pointer was derived from the `&mut T` (write) or `&T` (read) of a guard that
//! held the permits the mapped guard now holds (the original guard is forgotten, not dropped):
//! every permit for a write guard, so the pointer is valid and unaliased; at least one for a
//! read guard, so no writer exists. Either way it stays valid for as long as the mapped guard
//! lives.
//!
//! The closure runs while the original guard is still whole: if it panics, that guard's drop
//! releases the lock. A mapped write guard cannot be downgraded (tokio's cannot either): the
//! closure may have reached through interior mutability, and a read lock would then share a
//! place that was handed out as `&mut`. `downgrade_map` is offered on the unmapped write guards
//! instead, where the closure only ever sees `&T`.

use std::fmt;
use std::marker::PhantomData;
use std::mem;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::batch_semaphore::RawSemaphore;
use super::rwlock::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// An [`RwLockWriteGuard`] narrowed to a part of the data by [`RwLockWriteGuard::map`]; the
/// lock stays exclusive until it drops.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct RwLockMappedWriteGuard<'a, T: ?Sized> {
    sem: &'a RawSemaphore,
    permits: u32,
    data: *mut T,
    _borrow: PhantomData<&'a mut T>,
}

/// An [`OwnedRwLockWriteGuard`] narrowed to a part `U` of the data; the lock stays exclusive
/// (and alive) until it drops.
#[must_use = "if unused the RwLock will immediately unlock"]
pub struct OwnedRwLockMappedWriteGuard<T: ?Sized, U: ?Sized = T> {
    data: *mut U,
    lock: Arc<RwLock<T>>,
    // As tokio's: the guard is `Unpin` only for `T: Unpin`.
    _owns: PhantomData<T>,
}

// The bounds are tokio's, to the letter.
// SAFETY: the guard is the only access to the `T` it points at (it holds every permit); sending
// it sends `&mut T` to another thread (`T: Send`); `Sync` is asked as well, as tokio does.
unsafe impl<T: ?Sized + Send + Sync> Send for RwLockMappedWriteGuard<'_, T> {}
// SAFETY: sharing the guard shares `&T` only (`DerefMut` needs `&mut self`): `T: Sync`; `Send`
// is asked as well, as tokio does.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLockMappedWriteGuard<'_, T> {}
// SAFETY: as `RwLockMappedWriteGuard` for the `U`; the `Arc<RwLock<T>>` moves with it, which
// needs `RwLock<T>: Send + Sync`, i.e. `T: Send + Sync`.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Send + Sync> Send for OwnedRwLockMappedWriteGuard<T, U> {}
// SAFETY: sharing shares `&U` (`U: Sync`) and the `Arc<RwLock<T>>` (`T: Send + Sync`).
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Send + Sync> Sync for OwnedRwLockMappedWriteGuard<T, U> {}

impl<'a, T: ?Sized> RwLockWriteGuard<'a, T> {
    /// Narrows the guard to a part of the data; the lock stays exclusive until the returned
    /// guard drops. If `f` panics, the lock is released.
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let lock = this.lock;
        // Every permit passes to the mapped guard: `this` must not release them.
        mem::forget(this);
        RwLockMappedWriteGuard { sem: &lock.sem, permits: lock.max_readers, data, _borrow: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back (still exclusive) when `f` returns
    /// `None`.
    pub fn try_map<F, U: ?Sized>(mut this: Self, f: F) -> Result<RwLockMappedWriteGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let lock = this.lock;
        mem::forget(this);
        Ok(RwLockMappedWriteGuard { sem: &lock.sem, permits: lock.max_readers, data, _borrow: PhantomData })
    }

    /// The whole data as a mapped guard (`map(this, |t| t)`).
    pub fn into_mapped(this: Self) -> RwLockMappedWriteGuard<'a, T> {
        Self::map(this, |t| t)
    }

    /// Narrows the guard to a part of the value with `f` (run while still exclusive), then
    /// downgrades it: readers get in only after `f` returns. If `f` panics, the lock is
    /// released.
    pub fn downgrade_map<F, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let lock = this.lock;
        // One permit passes to the read guard, the others go back.
        mem::forget(this);
        lock.sem.release(lock.max_readers as usize - 1);
        RwLockReadGuard { sem: &lock.sem, data, _borrow: PhantomData }
    }

    /// As [`downgrade_map`](Self::downgrade_map), or gives the write guard back unchanged when
    /// `f` returns `None`.
    pub fn try_downgrade_map<F, U: ?Sized>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const U,
            None => return Err(this),
        };
        let lock = this.lock;
        mem::forget(this);
        lock.sem.release(lock.max_readers as usize - 1);
        Ok(RwLockReadGuard { sem: &lock.sem, data, _borrow: PhantomData })
    }
}

impl<'a, T: ?Sized> RwLockReadGuard<'a, T> {
    /// Narrows the guard to a part of the value. If `f` panics, the read lock is released.
    pub fn map<F, U: ?Sized>(this: Self, f: F) -> RwLockReadGuard<'a, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let sem = this.sem;
        // The read permit passes to the new guard.
        mem::forget(this);
        RwLockReadGuard { sem, data, _borrow: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back unchanged when `f` returns `None`.
    pub fn try_map<F, U: ?Sized>(this: Self, f: F) -> Result<RwLockReadGuard<'a, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const U,
            None => return Err(this),
        };
        let sem = this.sem;
        mem::forget(this);
        Ok(RwLockReadGuard { sem, data, _borrow: PhantomData })
    }
}

impl<'a, T: ?Sized> RwLockMappedWriteGuard<'a, T> {
    /// Narrows the guard further.
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> RwLockMappedWriteGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let (sem, permits) = (this.sem, this.permits);
        mem::forget(this);
        RwLockMappedWriteGuard { sem, permits, data, _borrow: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back when `f` returns `None`.
    pub fn try_map<F, U: ?Sized>(mut this: Self, f: F) -> Result<RwLockMappedWriteGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let (sem, permits) = (this.sem, this.permits);
        mem::forget(this);
        Ok(RwLockMappedWriteGuard { sem, permits, data, _borrow: PhantomData })
    }
}

impl<T: ?Sized> Deref for RwLockMappedWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: `data` came from the `&mut` of a guard holding every permit, which this guard
        // now holds (module invariant).
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> DerefMut for RwLockMappedWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as `deref`; `&mut self` makes this the only access through the guard.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized> Drop for RwLockMappedWriteGuard<'_, T> {
    fn drop(&mut self) {
        self.sem.release(self.permits as usize);
    }
}

impl<T: ?Sized> OwnedRwLockWriteGuard<T> {
    /// Narrows the guard to a part of the data; the lock stays exclusive (and alive) until the
    /// returned guard drops. If `f` panics, the lock is released.
    pub fn map<F, U: ?Sized>(mut this: Self, f: F) -> OwnedRwLockMappedWriteGuard<T, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        OwnedRwLockMappedWriteGuard { data, lock: Self::into_lock(this), _owns: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back (still exclusive) when `f` returns
    /// `None`.
    pub fn try_map<F, U: ?Sized>(mut this: Self, f: F) -> Result<OwnedRwLockMappedWriteGuard<T, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        Ok(OwnedRwLockMappedWriteGuard { data, lock: Self::into_lock(this), _owns: PhantomData })
    }

    /// The whole data as a mapped guard (`map(this, |t| t)`).
    pub fn into_mapped(this: Self) -> OwnedRwLockMappedWriteGuard<T> {
        Self::map(this, |t| t)
    }

    /// Narrows the guard to a part of the value with `f` (run while still exclusive), then
    /// downgrades it: readers get in only after `f` returns. If `f` panics, the lock is
    /// released.
    pub fn downgrade_map<F, U: ?Sized>(this: Self, f: F) -> OwnedRwLockReadGuard<T, U>
    where
        F: FnOnce(&T) -> &U,
    {
        let data = f(&*this) as *const U;
        let lock = Self::into_lock(this);
        // One permit passes to the read guard, the others go back.
        lock.sem.release(lock.max_readers as usize - 1);
        OwnedRwLockReadGuard { lock, data, _owns: PhantomData }
    }

    /// As [`downgrade_map`](Self::downgrade_map), or gives the write guard back unchanged when
    /// `f` returns `None`.
    pub fn try_downgrade_map<F, U: ?Sized>(this: Self, f: F) -> Result<OwnedRwLockReadGuard<T, U>, Self>
    where
        F: FnOnce(&T) -> Option<&U>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const U,
            None => return Err(this),
        };
        let lock = Self::into_lock(this);
        lock.sem.release(lock.max_readers as usize - 1);
        Ok(OwnedRwLockReadGuard { lock, data, _owns: PhantomData })
    }
}

impl<T: ?Sized, U: ?Sized> OwnedRwLockReadGuard<T, U> {
    /// Narrows the guard to a part of the value. If `f` panics, the read lock is released.
    pub fn map<F, V: ?Sized>(this: Self, f: F) -> OwnedRwLockReadGuard<T, V>
    where
        F: FnOnce(&U) -> &V,
    {
        let data = f(&*this) as *const V;
        OwnedRwLockReadGuard { lock: Self::into_lock(this), data, _owns: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back unchanged when `f` returns `None`.
    pub fn try_map<F, V: ?Sized>(this: Self, f: F) -> Result<OwnedRwLockReadGuard<T, V>, Self>
    where
        F: FnOnce(&U) -> Option<&V>,
    {
        let data = match f(&*this) {
            Some(data) => data as *const V,
            None => return Err(this),
        };
        Ok(OwnedRwLockReadGuard { lock: Self::into_lock(this), data, _owns: PhantomData })
    }
}

impl<T: ?Sized, U: ?Sized> OwnedRwLockMappedWriteGuard<T, U> {
    /// Takes the `Arc` out without running the drop (which would release every permit).
    fn into_lock(this: Self) -> Arc<RwLock<T>> {
        let this = mem::ManuallyDrop::new(this);
        // SAFETY: `this` is never dropped or used again, so the `Arc` is moved out once.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Narrows the guard further.
    pub fn map<F, V: ?Sized>(mut this: Self, f: F) -> OwnedRwLockMappedWriteGuard<T, V>
    where
        F: FnOnce(&mut U) -> &mut V,
    {
        let data = f(&mut *this) as *mut V;
        OwnedRwLockMappedWriteGuard { data, lock: Self::into_lock(this), _owns: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back when `f` returns `None`.
    pub fn try_map<F, V: ?Sized>(mut this: Self, f: F) -> Result<OwnedRwLockMappedWriteGuard<T, V>, Self>
    where
        F: FnOnce(&mut U) -> Option<&mut V>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut V,
            None => return Err(this),
        };
        Ok(OwnedRwLockMappedWriteGuard { data, lock: Self::into_lock(this), _owns: PhantomData })
    }

    /// The lock this guard writes (the whole lock, not only the mapped part).
    pub fn rwlock(this: &Self) -> &Arc<RwLock<T>> {
        &this.lock
    }
}

impl<T: ?Sized, U: ?Sized> Deref for OwnedRwLockMappedWriteGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: `data` came from the `&mut` of a guard holding every permit, which this guard
        // now holds (module invariant); the `Arc` keeps the data alive.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> DerefMut for OwnedRwLockMappedWriteGuard<T, U> {
    fn deref_mut(&mut self) -> &mut U {
        // SAFETY: as `deref`; `&mut self` makes this the only access through the guard.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedRwLockMappedWriteGuard<T, U> {
    fn drop(&mut self) {
        self.lock.sem.release(self.lock.max_readers as usize);
    }
}

super::rwlock::fmt_guard! {
    [T: ?Sized] RwLockMappedWriteGuard<'_, T>;
    [T: ?Sized, U: ?Sized] OwnedRwLockMappedWriteGuard<T, U>;
}
