//! A worker's LIFO slot, which the monitor can empty while the worker is stuck in a poll.
//!
//! The slot holds the task most recently woken by the running task (`worker.rs`). A task
//! that wakes another and then blocks its thread (a synchronous call, a long computation)
//! would keep the woken task there for the whole blocking poll if only the local queue could
//! be stolen, so the monitor can take the slot's task too (`compensate.rs`).
//!
//! The worker touches its slot on every message hand-off (a write when a task wakes another,
//! a take before the next poll), so the slot must stay as cheap as a plain field: no
//! read-modify-write on the worker's side. Mutual exclusion is an *asymmetric Dekker
//! handshake* between the worker and the monitor:
//!
//! * worker, during a poll: `busy = true`; compiler-only fence; read `claim`. If clear, it owns
//!   the slot until `busy = false` (a release store). If set, it clears `busy` and backs off:
//!   a write goes to the local queue instead, a take waits until the monitor is done.
//! * worker, between polls: the end of the poll, published in its `PollSlot` (an even
//!   sequence number, `monitor.rs`), plays `busy = false` for good: after it, a compiler fence
//!   and a read of `claim` (waiting while it is set) are enough, until the next poll begins.
//! * monitor: `claim = true`; `membarrier(PRIVATE_EXPEDITED)`, which runs a full memory barrier
//!   on every CPU running one of this process's threads; then it reads the worker's sequence
//!   (still the stuck poll's?) and `busy`. If the poll goes on and `busy` is clear, it owns
//!   the slot until `claim = false` (release); otherwise it gives up until its next sample.
//!
//! The barrier splits each worker's instruction stream in two. If the worker's `busy = true`
//! (or its end-of-poll store) came before it, the monitor sees it; if after, the worker's read
//! of `claim`, later in its program order, sees the monitor's `claim = true`. So at most one
//! side proceeds. The expensive half (a syscall sending inter-processor interrupts,
//! microseconds) runs only in the monitor, only for a worker stuck past the long-poll
//! threshold, and only when its slot is not empty. The worker's half costs one load per take
//! between polls (the common case: the run loop), two stores and a load per access during a
//! poll, and nothing for a write into an empty slot: a plain release store, because the
//! monitor only ever replaces a task it has read with null, so it cannot lose one written
//! meanwhile.
//!
//! Invariant: only the thread holding the worker's core writes a task into the slot; the
//! worker and the monitor take one out only inside their half of the handshake. So a task
//! in the slot is owned by exactly one of: the slot, the worker, the monitor.
//!
//! The handshake on a write over a task is out of line (`replace_occupied`): inlined into the
//! wake path it made `schedule` too big to inline `with_scheduler`, which costs even the
//! current-thread runtime (no LIFO slot). The callgrind figures behind this shape, and the
//! command that reproduces them, are in docs/notes/performance-figures.md ("LIFO slot").
//!
//! Where `membarrier` is not available (not Linux, a kernel before 4.14, a seccomp filter
//! that refuses it), `heavy_barrier` fails and the monitor leaves the slot alone: the task
//! waits in the slot for the blocking poll to end.
//! Under loom both halves use `fence(SeqCst)`, which is what the barrier provides.
//!
//! Rejected: an atomic slot that both sides `swap` (what tokio tried when it made its LIFO
//! slot stealable, tokio-rs/tokio#7431, then reverted for a performance regression and
//! made opt-in): two locked instructions per message hand-off, on every worker, to serve the
//! rare stuck one.

use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use crate::loom::sync::atomic::{AtomicBool, AtomicPtr, Ordering::*};
use crate::task::core::Header;
use crate::task::Runnable;

/// One worker's slot, on its own cache lines (the monitor reads it only while the worker is
/// stuck; thieves never touch it).
#[repr(align(128))]
pub(crate) struct LifoSlot<S: 'static> {
    task: AtomicPtr<Header>,
    /// The worker is between its read of `claim` and its last access to `task`.
    busy: AtomicBool,
    /// The monitor wants the task (or is taking it).
    claim: AtomicBool,
    _p: PhantomData<fn() -> S>,
}

impl<S: 'static> LifoSlot<S> {
    pub(crate) fn new() -> LifoSlot<S> {
        LifoSlot {
            task: AtomicPtr::new(ptr::null_mut()),
            busy: AtomicBool::new(false),
            claim: AtomicBool::new(false),
            _p: PhantomData,
        }
    }

    /// Worker side: whether a task is in the slot (a stale `true` right after the monitor
    /// took it only costs one more look).
    #[inline]
    pub(crate) fn is_some(&self) -> bool {
        !self.task.load(Relaxed).is_null()
    }

    /// Worker side: `busy = true`, then whether the monitor stayed away (if not, `busy` is
    /// cleared again).
    #[inline]
    fn enter(&self) -> bool {
        self.busy.store(true, Relaxed);
        light_fence();
        if self.claim.load(Acquire) {
            self.busy.store(false, Release);
            return false;
        }
        true
    }

    /// Worker side: puts `task` in the slot and returns the one it displaces; `Err(task)`
    /// while the monitor is taking the slot's task (queue `task` elsewhere).
    #[inline]
    pub(crate) fn replace(&self, task: Runnable<S>) -> Result<Option<Runnable<S>>, Runnable<S>> {
        if !self.is_some() {
            // Into an empty slot: nothing to displace, so no handshake. The monitor, which
            // only ever replaces a task it read with null, may take this one at once; the
            // release pairs with its acquire load. (The slot is empty whenever a task wakes
            // one other per poll, as in every message ping-pong.)
            self.task.store(task.into_raw().as_ptr(), Release);
            return Ok(None);
        }
        self.replace_occupied(task)
    }

    /// `replace` over a task: out of line, so that the wake path inlined into every waker
    /// stays small.
    #[inline(never)]
    fn replace_occupied(&self, task: Runnable<S>) -> Result<Option<Runnable<S>>, Runnable<S>> {
        if !self.enter() {
            return Err(task);
        }
        let prev = self.task.load(Relaxed);
        self.task.store(task.into_raw().as_ptr(), Relaxed);
        self.busy.store(false, Release);
        // SAFETY: a non-null pointer in the slot is a `Runnable<S>`'s reference, put there by
        // `replace`; inside the handshake nobody else can take it (module comment).
        Ok(NonNull::new(prev).map(|p| unsafe { Runnable::from_raw(p) }))
    }

    /// Worker side, at any time (also during a poll): takes the slot's task, waiting out a
    /// monitor that is taking it.
    pub(crate) fn take(&self) -> Option<Runnable<S>> {
        if !self.is_some() {
            return None;
        }
        while !self.enter() {
            self.wait_for_monitor();
        }
        let task = self.take_owned();
        self.busy.store(false, Release);
        task
    }

    /// Worker side, between polls: takes the slot's task, waiting out a monitor that is
    /// taking it. The caller must have published the end of its last poll (`PollSlot::end`)
    /// and begun none since, which is what stands in for `busy` (module comment); in debug
    /// builds `between_polls` checks it.
    #[inline]
    pub(crate) fn take_between_polls(&self, between_polls: impl FnOnce() -> bool) -> Option<Runnable<S>> {
        if !self.is_some() {
            return None;
        }
        debug_assert!(between_polls(), "take_between_polls during a poll: use take");
        light_fence();
        if self.claim.load(Acquire) {
            self.wait_for_monitor();
        }
        self.take_owned()
    }

    /// Worker side, owning the slot: empties it.
    #[inline]
    fn take_owned(&self) -> Option<Runnable<S>> {
        let task = self.task.load(Relaxed);
        if !task.is_null() {
            self.task.store(ptr::null_mut(), Relaxed);
        }
        // SAFETY: a non-null pointer in the slot is a `Runnable<S>`'s reference, put there by
        // `replace`; the caller owns the slot (inside its half of the handshake, or between
        // polls with `claim` clear) and has just nulled it, so the reference is taken once.
        NonNull::new(task).map(|p| unsafe { Runnable::from_raw(p) })
    }

    #[cold]
    fn wait_for_monitor(&self) {
        while self.claim.load(Acquire) {
            crate::loom::thread::yield_now();
        }
    }

    /// Monitor side: takes the task of a worker that is stuck in a poll. `still_stuck` reads
    /// the worker's poll sequence (after the barrier) and says whether it is still the stuck
    /// poll's. `None` if the slot is empty, the poll ended, the worker is touching the slot
    /// right now, or the barrier is not available.
    pub(crate) fn steal(&self, still_stuck: impl FnOnce() -> bool) -> Option<Runnable<S>> {
        if !self.is_some() {
            return None;
        }
        self.claim.store(true, Relaxed);
        let mut task = ptr::null_mut();
        if heavy_barrier() && still_stuck() && !self.busy.load(Acquire) {
            task = self.task.load(Acquire);
            if !task.is_null() {
                self.task.store(ptr::null_mut(), Relaxed);
            }
        }
        self.claim.store(false, Release);
        // SAFETY: a non-null pointer in the slot is a `Runnable<S>`'s reference, put there by
        // `replace`; the monitor owned the slot inside its half of the handshake (barrier done,
        // poll still stuck, `busy` clear) and nulled it there, so the reference is taken once.
        NonNull::new(task).map(|p| unsafe { Runnable::from_raw(p) })
    }
}

impl<S: 'static> Drop for LifoSlot<S> {
    fn drop(&mut self) {
        // Shutdown drains the slot; should a task still be here, its reference is released
        // (as an `Option<Runnable>` field would release it).
        let task = self.task.load(Relaxed);
        // SAFETY: a non-null pointer in the slot is a `Runnable<S>`'s reference, put there by
        // `replace`; `&mut self`, so neither the worker nor the monitor can reach the slot.
        drop(NonNull::new(task).map(|p| unsafe { Runnable::<S>::from_raw(p) }));
    }
}

/// The worker's half: keeps the compiler from moving the `claim` load above the `busy`
/// store; the CPU's reordering is the monitor's barrier's business.
#[inline(always)]
fn light_fence() {
    #[cfg(loom)]
    crate::loom::sync::atomic::fence(SeqCst);
    #[cfg(not(loom))]
    std::sync::atomic::compiler_fence(SeqCst);
}

/// The monitor's half: a full barrier on every CPU running a thread of this process.
/// Returns false where the kernel does not offer one.
#[cfg(loom)]
fn heavy_barrier() -> bool {
    crate::loom::sync::atomic::fence(SeqCst);
    true
}

/// The monitor's half: a full barrier on every CPU running a thread of this process.
/// Returns false where the kernel does not offer one.
#[cfg(all(not(loom), target_os = "linux"))]
fn heavy_barrier() -> bool {
    use std::sync::OnceLock;
    // From <linux/membarrier.h>.
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let registered = *REGISTERED.get_or_init(|| {
        // SAFETY: membarrier takes two integers and touches no memory of ours.
        unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0 }
    });
    // SAFETY: membarrier takes two integers and touches no memory of ours; the process
    // registered for private expedited barriers above, so the command is allowed.
    registered && unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0 }
}

/// The monitor's half: no portable process-wide barrier, so the slot stays the worker's.
#[cfg(all(not(loom), not(target_os = "linux")))]
fn heavy_barrier() -> bool {
    false
}
