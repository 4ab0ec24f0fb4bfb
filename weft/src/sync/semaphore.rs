//! `Semaphore`: a fair (FIFO) async counting semaphore, the public face of
//! [`RawSemaphore`](super::batch_semaphore) (which holds the algorithm and its essay).

use std::fmt;

use super::batch_semaphore::{self as raw, RawSemaphore};
// The owned variants take the user's `std::sync::Arc` (under loom too: it only carries
// ownership, every synchronising access is inside the semaphore, which loom models).
use std::sync::Arc;

/// A counting semaphore: `acquire` waits for a permit, dropping the permit returns it.
///
/// Waiters are served strictly in order: a large `acquire_many` at the head of the queue is
/// not overtaken by later small requests. Acquiring is cancel-safe: dropping an `acquire`
/// future returns every permit it held or had been assigned.
///
/// ```
/// # weft::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use weft::sync::Semaphore;
/// let sem = Semaphore::new(2);
/// let a = sem.acquire().await.unwrap();
/// let _b = sem.acquire().await.unwrap();
/// assert!(sem.try_acquire().is_err());
/// drop(a);
/// assert!(sem.try_acquire().is_ok());
/// # });
/// ```
pub struct Semaphore {
    raw: RawSemaphore,
}

/// `acquire` failed because the semaphore was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquireError(());

/// `try_acquire` failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore was closed.
    Closed,
    /// Not enough permits were available.
    NoPermits,
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
        }
    }
}

impl std::error::Error for TryAcquireError {}

impl From<raw::TryAcquireError> for TryAcquireError {
    fn from(e: raw::TryAcquireError) -> Self {
        match e {
            raw::TryAcquireError::Closed => TryAcquireError::Closed,
            raw::TryAcquireError::NoPermits => TryAcquireError::NoPermits,
        }
    }
}

/// Permits borrowed from a [`Semaphore`]; returned on drop.
#[must_use = "dropping the permit releases it at once"]
pub struct SemaphorePermit<'a> {
    sem: &'a Semaphore,
    /// `usize`, not `u32`: merged permits may exceed `u32::MAX` (tokio allows it).
    permits: usize,
}

/// Permits taken from an `Arc<Semaphore>`; returned on drop.
#[must_use = "dropping the permit releases it at once"]
pub struct OwnedSemaphorePermit {
    sem: Arc<Semaphore>,
    /// `usize`, not `u32`: merged permits may exceed `u32::MAX` (tokio allows it).
    permits: usize,
}

impl Semaphore {
    /// The most permits a semaphore may hold.
    pub const MAX_PERMITS: usize = raw::MAX_PERMITS;

    /// A semaphore with `permits` permits. Panics above [`Semaphore::MAX_PERMITS`].
    pub fn new(permits: usize) -> Semaphore {
        Semaphore { raw: RawSemaphore::new(permits) }
    }

    /// `new` usable in a `static`. Not available under `--cfg loom`, as in tokio.
    #[cfg(not(loom))]
    pub const fn const_new(permits: usize) -> Semaphore {
        Semaphore { raw: RawSemaphore::const_new(permits) }
    }

    /// Blocks the thread until a permit is acquired. Panics when called inside a runtime
    /// (as tokio's does); use `acquire().await` there.
    #[track_caller]
    pub fn blocking_acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        crate::sync::block_on(self.acquire())
    }

    /// Blocks the thread until `n` permits are acquired. Panics when called inside a runtime.
    #[track_caller]
    pub fn blocking_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        crate::sync::block_on(self.acquire_many(n))
    }

    /// Blocks the thread until a permit is acquired. Panics when called inside a runtime.
    #[track_caller]
    pub fn blocking_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        crate::sync::block_on(self.acquire_owned())
    }

    /// Blocks the thread until `n` permits are acquired. Panics when called inside a runtime.
    #[track_caller]
    pub fn blocking_acquire_many_owned(self: Arc<Self>, n: u32) -> Result<OwnedSemaphorePermit, AcquireError> {
        crate::sync::block_on(self.acquire_many_owned(n))
    }

    pub fn available_permits(&self) -> usize {
        self.raw.available_permits()
    }

    /// Adds `n` permits (to the waiters first, in order). Panics past `MAX_PERMITS`.
    pub fn add_permits(&self, n: usize) {
        self.raw.release(n);
    }

    /// Removes up to `n` currently available permits; returns how many were removed.
    pub fn forget_permits(&self, n: usize) -> usize {
        self.raw.forget_permits(n)
    }

    /// Waits for one permit. Cancel-safe; fails only if the semaphore is closed.
    pub async fn acquire(&self) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.acquire_many(1).await
    }

    /// Waits for `n` permits at once (FIFO: it is not overtaken while it waits).
    pub async fn acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, AcquireError> {
        self.raw.acquire(n as usize).await.map_err(|_| AcquireError(()))?;
        Ok(SemaphorePermit { sem: self, permits: n as usize })
    }

    pub fn try_acquire(&self) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.try_acquire_many(1)
    }

    pub fn try_acquire_many(&self, n: u32) -> Result<SemaphorePermit<'_>, TryAcquireError> {
        self.raw.try_acquire(n as usize)?;
        Ok(SemaphorePermit { sem: self, permits: n as usize })
    }

    /// As [`acquire`](Self::acquire), with a permit that keeps the semaphore alive.
    pub async fn acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.acquire_many_owned(1).await
    }

    pub async fn acquire_many_owned(self: Arc<Self>, n: u32) -> Result<OwnedSemaphorePermit, AcquireError> {
        self.raw.acquire(n as usize).await.map_err(|_| AcquireError(()))?;
        Ok(OwnedSemaphorePermit { sem: self, permits: n as usize })
    }

    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.try_acquire_many_owned(1)
    }

    pub fn try_acquire_many_owned(self: Arc<Self>, n: u32) -> Result<OwnedSemaphorePermit, TryAcquireError> {
        self.raw.try_acquire(n as usize)?;
        Ok(OwnedSemaphorePermit { sem: self, permits: n as usize })
    }

    /// Closes the semaphore: waiting and future acquires fail; permits already held stay valid.
    pub fn close(&self) {
        self.raw.close();
    }

    pub fn is_closed(&self) -> bool {
        self.raw.is_closed()
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Semaphore").field("permits", &self.available_permits()).finish()
    }
}

impl<'a> SemaphorePermit<'a> {
    /// Keeps the permits out of the semaphore for good.
    pub fn forget(mut self) {
        self.permits = 0;
    }

    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// The semaphore these permits came from.
    pub fn semaphore(&self) -> &'a Semaphore {
        self.sem
    }

    /// Moves `n` of this permit's permits into a new permit; `None` (and nothing moved) if
    /// this permit holds fewer than `n`.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = Some(n).filter(|&n| n <= self.permits)?;
        self.permits -= n;
        Some(SemaphorePermit { sem: self.sem, permits: n })
    }

    /// Merges `other` (from the same semaphore) into `self`. Panics on different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: SemaphorePermit<'a>) {
        assert!(std::ptr::eq(self.sem, other.sem), "merging permits of different semaphores");
        self.permits += other.permits;
        other.permits = 0;
    }
}

impl Drop for SemaphorePermit<'_> {
    fn drop(&mut self) {
        self.sem.add_permits(self.permits);
    }
}

impl fmt::Debug for SemaphorePermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemaphorePermit").field("permits", &self.permits).finish()
    }
}

impl OwnedSemaphorePermit {
    pub fn forget(mut self) {
        self.permits = 0;
    }

    pub fn num_permits(&self) -> usize {
        self.permits
    }

    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }

    /// Moves `n` of this permit's permits into a new permit; `None` (and nothing moved) if
    /// this permit holds fewer than `n`.
    pub fn split(&mut self, n: usize) -> Option<Self> {
        let n = Some(n).filter(|&n| n <= self.permits)?;
        self.permits -= n;
        Some(OwnedSemaphorePermit { sem: self.sem.clone(), permits: n })
    }

    /// Merges `other` (from the same semaphore) into `self`. Panics on different semaphores.
    #[track_caller]
    pub fn merge(&mut self, mut other: OwnedSemaphorePermit) {
        assert!(Arc::ptr_eq(&self.sem, &other.sem), "merging permits of different semaphores");
        self.permits += other.permits;
        other.permits = 0;
    }
}

impl Drop for OwnedSemaphorePermit {
    fn drop(&mut self) {
        self.sem.add_permits(self.permits);
    }
}

impl fmt::Debug for OwnedSemaphorePermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedSemaphorePermit").field("permits", &self.permits).finish()
    }
}
