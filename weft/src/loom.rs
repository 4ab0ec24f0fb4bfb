//! The one door through which the runtime reaches atomics, locks, cells, `Arc` and threads.
//!
//! Under `--cfg loom` every item here is loom's model-checked twin; otherwise it is the
//! standard library's. Nothing else in the runtime imports `std::sync::atomic`, `std::sync::Mutex`,
//! `std::cell::UnsafeCell` or `std::thread::spawn` directly, so the same source runs both in
//! production and under the model checker (`RUSTFLAGS="--cfg loom" cargo test -p weft --lib loom`).
//!
//! `UnsafeCell` is wrapped so that both builds share one access API (`with` / `with_mut`), as
//! loom requires: loom tracks every access to detect data races, std compiles it away.

#![allow(unused_imports, dead_code)]

#[cfg(not(loom))]
mod imp {
    pub(crate) mod sync {
        pub(crate) use std::sync::{
            Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, WaitTimeoutResult, Weak,
        };
        pub(crate) mod atomic {
            pub(crate) use std::sync::atomic::{
                fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
            };
        }
    }
    pub(crate) mod thread {
        pub(crate) use std::thread::{current, park, spawn, yield_now, Builder, JoinHandle, Thread};
    }
    pub(crate) fn spin_loop() {
        std::hint::spin_loop();
    }

    /// `UnsafeCell` with loom's closure-based access API.
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) const fn new(data: T) -> UnsafeCell<T> {
            UnsafeCell(std::cell::UnsafeCell::new(data))
        }
        pub(crate) fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }

    impl<T: ?Sized> UnsafeCell<T> {
        #[inline(always)]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }
        #[inline(always)]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }

    // Unwind safety (tokio declares its channels, `Notify`, `JoinHandle` and sockets
    // unwind-safe for every `T`; so does weft). Every weft cell is written only by runtime code
    // that finishes its update before running anything that may panic (user wakers, `Drop`s,
    // closures run after the cell is consistent again), so a panic caught across a `&` to a
    // weft type never exposes a half-written cell.
    impl<T: ?Sized> std::panic::RefUnwindSafe for UnsafeCell<T> {}
    impl<T: ?Sized> std::panic::UnwindSafe for UnsafeCell<T> {}
}

#[cfg(loom)]
mod imp {
    pub(crate) mod sync {
        pub(crate) use loom::sync::{
            Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, WaitTimeoutResult,
        };
        pub(crate) mod atomic {
            pub(crate) use loom::sync::atomic::{
                fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
            };
        }
    }
    pub(crate) mod thread {
        pub(crate) use loom::thread::{current, park, spawn, yield_now, Builder, JoinHandle, Thread};
    }
    pub(crate) fn spin_loop() {
        loom::thread::yield_now();
    }
    pub(crate) use loom::cell::UnsafeCell;
}

pub(crate) use imp::*;

/// Process-wide counters that must *not* be modeled by loom (they only hand out unique
/// numbers, and loom requires each model iteration to perform the same modeled operations;
/// a counter whose thread-local cache survives between iterations would break that).
/// Per-task statistics (`task/stats.rs`) use them too: pure observations that no decision reads.
pub(crate) mod unmodeled {
    pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    pub(crate) use std::sync::OnceLock;
}

/// Read-locks an `RwLock`, ignoring poisoning (see [`lock`]).
pub(crate) fn read<T>(l: &sync::RwLock<T>) -> sync::RwLockReadGuard<'_, T> {
    match l.read() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Write-locks an `RwLock`, ignoring poisoning (see [`lock`]).
pub(crate) fn write<T>(l: &sync::RwLock<T>) -> sync::RwLockWriteGuard<'_, T> {
    match l.write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Locks a mutex, ignoring poisoning: runtime code never panics while holding its own locks,
/// and user code never runs under them, so a poisoned flag could only come from an abort path.
pub(crate) fn lock<T>(m: &sync::Mutex<T>) -> sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}
