//! Synchronisation for tasks: channels (`mpsc`, `oneshot`, `broadcast`, `watch`) and async
//! locks (`Mutex`, `RwLock`, `Semaphore`, `Notify`, `Barrier`, `OnceCell`, `SetOnce`).
//!
//! Names and signatures follow `tokio::sync`, and nothing here needs a weft runtime: the
//! primitives only use the `Waker` they are polled with, so they work on any executor. Inside
//! a weft task their leaf futures (`recv`, `send`, `acquire`, `lock`, the oneshot receiver)
//! take part in the cooperative budget (`task::coop`), so a loop over a channel that is never
//! empty still yields to the scheduler.
//!
//! # Glossary
//! * **waiter** — a pending future queued on a primitive. Waiters of `Semaphore` (and so of
//!   `Mutex`, `RwLock`, bounded `mpsc` senders, `OnceCell`) and of `Notify` (and so of `watch`,
//!   `Barrier`, `SetOnce`, `Sender::closed`) are intrusive nodes inside the futures themselves
//!   (`wait_list.rs`): no allocation to wait, O(1) removal when a future is dropped.
//! * **permit** — a unit of a semaphore; for the bounded channel, one slot of capacity.
//! * **parked receiver** — an mpsc receiver that found its queue empty and registered its waker.
//!
//! # The primitives and their algorithms
//! * `batch_semaphore` — the fair semaphore at the bottom of the locks and the bounded channel.
//!   One state word holds the permits and a `WAITERS` flag; permits never sit in the word while
//!   someone waits, so the lock-free fast paths (one CAS to acquire, one to release) cannot
//!   overtake a queued waiter. Waiters are served strictly FIFO; a cancelled waiter returns
//!   what it was given.
//! * `mpsc` — a lock-free linked list of 15-slot blocks (one CAS per send, none per receive,
//!   blocks recycled so steady state does not allocate), with the receiver's "parked" bit in
//!   the tail word so busy receivers cost senders nothing extra. Bounded = list + semaphore.
//!   Essay in `mpsc/mod.rs`.
//! * `oneshot` — one `Arc`, one state word handing two waker cells back and forth; `send` is a
//!   write and a CAS.
//! * `broadcast` — a power-of-two ring of individually locked slots; receivers read their own
//!   slot in parallel and only take the tail mutex when they must wait or have lagged.
//! * `watch` — the value under a reader-writer lock, a version counter, and a `Notify`.
//! * `Notify` — a state word (`EMPTY`/`WAITING`/`NOTIFIED` plus a `notify_waiters`
//!   generation) and an intrusive FIFO; storing and consuming a permit take no lock.
//! * `Mutex`, `RwLock` — a semaphore of 1 (resp. `MAX_READS`) permits beside the data; the
//!   FIFO order makes `RwLock` write-preferring: a waiting writer holds back later readers.
//! * `Barrier`, `OnceCell`, `SetOnce` — built from the above.
//!
//! # Who may touch what
//! * Intrusive node links and waker cells: only under the owning primitive's mutex. The
//!   "granted"/"notified" flag of a node: written under the mutex, read without it by the
//!   node's own future.
//! * An mpsc queue's receive cursor: only the receiver (`&mut Receiver`) and the channel's
//!   destructor. A slot's value: its sender until `ready`, then the receiver.
//! * A oneshot's value and waker cells: handed over by the bits of its state word.
//!
//! # Locks
//! Every internal mutex here is a leaf: no primitive calls user code or another primitive's
//! lock while holding one, and wakers are called after unlocking (`wake_list.rs`). The
//! exceptions are the *value* locks users hold on purpose (a `watch::Ref`, and a broadcast
//! slot's read lock while the value is cloned); the tail mutex of `broadcast` may be held
//! while taking a slot lock (tail → slot), never the reverse.
//!
//! # Rejected alternatives
//! * A ring buffer (Vyukov's bounded MPMC) for the bounded channel: equally fast, but `reserve`
//!   and `Permit` need capacity that is separate from storage, and the unbounded flavor would
//!   have needed a second queue; one list + a semaphore serves both.
//! * Waiter lists keyed by id in a map: simpler, but each wait would allocate and each removal
//!   would search; the intrusive list does neither.
//! * A global mutex around each channel (as some actor runtimes do): fast on one core, but every send and receive would contend on it with many producers.

/// `Debug` (the value not shown: `T` need not be `Debug`), `Display` ("channel closed", tokio's
/// text) and `Error` for a channel's `SendError<T>`, which hands back the value that was not sent.
macro_rules! closed_send_error {
    ($ty:ident) => {
        impl<T> std::fmt::Debug for $ty<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty)).finish_non_exhaustive()
            }
        }

        impl<T> std::fmt::Display for $ty<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("channel closed")
            }
        }

        impl<T> std::error::Error for $ty<T> {}
    };
}

pub(crate) mod batch_semaphore;
mod wait_list;
mod wake_list;

mod barrier;
pub mod broadcast;
pub mod mpsc;
mod mutex;
mod mutex_map;
mod notify;
mod once_cell;
pub mod oneshot;
mod rwlock;
mod rwlock_map;
mod semaphore;
mod set_once;
pub mod watch;

#[cfg(all(test, loom))]
mod loom_channels;
#[cfg(all(test, loom))]
mod loom_tests;

pub use barrier::{Barrier, BarrierWaitResult};
pub use mutex::{Mutex, MutexGuard, OwnedMutexGuard, TryLockError};
pub use mutex_map::{MappedMutexGuard, OwnedMappedMutexGuard};
pub use notify::{Notified, Notify};
pub use once_cell::{OnceCell, SetError};
pub use rwlock::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
pub use rwlock_map::{OwnedRwLockMappedWriteGuard, RwLockMappedWriteGuard};
pub use semaphore::{AcquireError, OwnedSemaphorePermit, Semaphore, SemaphorePermit, TryAcquireError};
pub use set_once::{SetOnce, SetOnceError};

/// Named future types of this module, where tokio puts them (`tokio::sync::futures`).
pub mod futures {
    pub use super::notify::{Notified, OwnedNotified};
}

mod block_on;
pub(crate) use block_on::block_on;
