//! Mapped mutex guards: the lock of a [`Mutex`] held while the guard points at a part of the
//! data (`MutexGuard::map(guard, |s| &mut s.field)`), as tokio's `MappedMutexGuard`.
//!
//! A mapped guard keeps what unlocks (the semaphore, or the `Arc` of the mutex) and a raw
//! pointer into the data that the mapping closure returned. Invariant: the pointer was derived
//! from the `&mut T` of a guard that held the mutex's only permit, and the mapped guard
//! inherits that permit (the original guard is forgotten, not dropped), so the pointer is valid
//! and unaliased for as long as the mapped guard lives.
//!
//! The closure runs while the original guard is still whole: if it panics, that guard's drop
//! unlocks the mutex. A mapped guard has no `mutex()` accessor (tokio's has none either: the
//! pointer may be into anything reachable from the data).

use std::fmt;
use std::marker::PhantomData;
use std::mem::{self, ManuallyDrop};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::batch_semaphore::RawSemaphore;
use super::mutex::{Mutex, MutexGuard, OwnedMutexGuard};

/// A [`MutexGuard`] narrowed to a part of the data by [`MutexGuard::map`]; unlocks on drop.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct MappedMutexGuard<'a, T: ?Sized> {
    sem: &'a RawSemaphore,
    data: *mut T,
    _borrow: PhantomData<&'a mut T>,
}

/// An [`OwnedMutexGuard`] narrowed to a part of the data; unlocks on drop, keeps the mutex
/// alive.
#[must_use = "if unused the Mutex will immediately unlock"]
pub struct OwnedMappedMutexGuard<T: ?Sized, U: ?Sized = T> {
    data: *mut U,
    lock: Arc<Mutex<T>>,
}

// SAFETY: the guard is the only access to the `U` it points at (it holds the mutex's only
// permit); sending it sends `&mut U` to another thread, which `U: Send` allows.
unsafe impl<T: ?Sized + Send> Send for MappedMutexGuard<'_, T> {}
// SAFETY: sharing the guard shares `&U` only (`DerefMut` needs `&mut self`): `U: Sync`.
unsafe impl<T: ?Sized + Sync> Sync for MappedMutexGuard<'_, T> {}
// SAFETY: as `MappedMutexGuard` for the `U`; the `Arc<Mutex<T>>` moves with it, which needs
// `Mutex<T>: Send + Sync`, i.e. `T: Send`.
unsafe impl<T: ?Sized + Send, U: ?Sized + Send> Send for OwnedMappedMutexGuard<T, U> {}
// SAFETY: sharing shares `&U` (`U: Sync`) and the `Arc<Mutex<T>>` (`T: Send`); tokio asks
// `Send + Sync` of both, and so does weft, so a program valid on one is valid on the other.
unsafe impl<T: ?Sized + Send + Sync, U: ?Sized + Send + Sync> Sync for OwnedMappedMutexGuard<T, U> {}

impl<'a, T: ?Sized> MutexGuard<'a, T> {
    /// Narrows the guard to a part of the data; the mutex stays locked until the returned
    /// guard drops. If `f` panics, the mutex is unlocked.
    pub fn map<U: ?Sized, F>(mut this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let sem = &this.lock.sem;
        // The permit passes to the mapped guard: `this` must not release it.
        mem::forget(this);
        MappedMutexGuard { sem, data, _borrow: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back when `f` returns `None`.
    pub fn try_map<U: ?Sized, F>(mut this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let sem = &this.lock.sem;
        mem::forget(this);
        Ok(MappedMutexGuard { sem, data, _borrow: PhantomData })
    }
}

impl<'a, T: ?Sized> MappedMutexGuard<'a, T> {
    /// Narrows the guard further.
    pub fn map<U, F>(mut this: Self, f: F) -> MappedMutexGuard<'a, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        let sem = this.sem;
        mem::forget(this);
        MappedMutexGuard { sem, data, _borrow: PhantomData }
    }

    /// As [`map`](Self::map), or gives the guard back when `f` returns `None`.
    pub fn try_map<U, F>(mut this: Self, f: F) -> Result<MappedMutexGuard<'a, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        let sem = this.sem;
        mem::forget(this);
        Ok(MappedMutexGuard { sem, data, _borrow: PhantomData })
    }
}

impl<T: ?Sized> Deref for MappedMutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: `data` came from the `&mut` of a guard holding the only permit, which this
        // guard now holds (module invariant).
        unsafe { &*self.data }
    }
}

impl<T: ?Sized> DerefMut for MappedMutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as `deref`; `&mut self` makes this the only access through the guard.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized> Drop for MappedMutexGuard<'_, T> {
    fn drop(&mut self) {
        self.sem.release(1);
    }
}

/// Takes the `Arc` out of an owned guard without running its drop (which would unlock).
fn into_lock<T: ?Sized>(guard: OwnedMutexGuard<T>) -> Arc<Mutex<T>> {
    let guard = ManuallyDrop::new(guard);
    // SAFETY: `guard` is never dropped or used again, so the `Arc` is moved out exactly once.
    unsafe { std::ptr::read(&guard.lock) }
}

impl<T: ?Sized> OwnedMutexGuard<T> {
    /// Narrows the guard to a part of the data; the mutex stays locked (and alive) until the
    /// returned guard drops. If `f` panics, the mutex is unlocked.
    pub fn map<U: ?Sized, F>(mut this: Self, f: F) -> OwnedMappedMutexGuard<T, U>
    where
        F: FnOnce(&mut T) -> &mut U,
    {
        let data = f(&mut *this) as *mut U;
        OwnedMappedMutexGuard { data, lock: into_lock(this) }
    }

    /// As [`map`](Self::map), or gives the guard back when `f` returns `None`.
    pub fn try_map<U: ?Sized, F>(mut this: Self, f: F) -> Result<OwnedMappedMutexGuard<T, U>, Self>
    where
        F: FnOnce(&mut T) -> Option<&mut U>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut U,
            None => return Err(this),
        };
        Ok(OwnedMappedMutexGuard { data, lock: into_lock(this) })
    }
}

impl<T: ?Sized, U: ?Sized> OwnedMappedMutexGuard<T, U> {
    /// Takes the `Arc` out without running the drop (which would unlock).
    fn into_lock(this: Self) -> Arc<Mutex<T>> {
        let this = ManuallyDrop::new(this);
        // SAFETY: `this` is never dropped or used again, so the `Arc` is moved out once.
        unsafe { std::ptr::read(&this.lock) }
    }

    /// Narrows the guard further.
    pub fn map<S, F>(mut this: Self, f: F) -> OwnedMappedMutexGuard<T, S>
    where
        F: FnOnce(&mut U) -> &mut S,
    {
        let data = f(&mut *this) as *mut S;
        OwnedMappedMutexGuard { data, lock: Self::into_lock(this) }
    }

    /// As [`map`](Self::map), or gives the guard back when `f` returns `None`.
    pub fn try_map<S, F>(mut this: Self, f: F) -> Result<OwnedMappedMutexGuard<T, S>, Self>
    where
        F: FnOnce(&mut U) -> Option<&mut S>,
    {
        let data = match f(&mut *this) {
            Some(data) => data as *mut S,
            None => return Err(this),
        };
        Ok(OwnedMappedMutexGuard { data, lock: Self::into_lock(this) })
    }
}

impl<T: ?Sized, U: ?Sized> Deref for OwnedMappedMutexGuard<T, U> {
    type Target = U;
    fn deref(&self) -> &U {
        // SAFETY: `data` came from the `&mut` of a guard holding the only permit, which this
        // guard now holds (module invariant); the `Arc` keeps the data alive.
        unsafe { &*self.data }
    }
}

impl<T: ?Sized, U: ?Sized> DerefMut for OwnedMappedMutexGuard<T, U> {
    fn deref_mut(&mut self) -> &mut U {
        // SAFETY: as `deref`; `&mut self` makes this the only access through the guard.
        unsafe { &mut *self.data }
    }
}

impl<T: ?Sized, U: ?Sized> Drop for OwnedMappedMutexGuard<T, U> {
    fn drop(&mut self) {
        self.lock.sem.release(1);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MappedMutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: ?Sized, U: ?Sized + fmt::Debug> fmt::Debug for OwnedMappedMutexGuard<T, U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// `Display` forwards to the data, for every guard kind (as tokio).
macro_rules! display_guard {
    ($([$($g:tt)*] $ty:ty;)*) => {$(
        impl<$($g)*> fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&**self, f)
            }
        }
    )*};
}

display_guard! {
    [T: ?Sized + fmt::Display] MutexGuard<'_, T>;
    [T: ?Sized + fmt::Display] OwnedMutexGuard<T>;
    [T: ?Sized + fmt::Display] MappedMutexGuard<'_, T>;
    [T: ?Sized, U: ?Sized + fmt::Display] OwnedMappedMutexGuard<T, U>;
}
