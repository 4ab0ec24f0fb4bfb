//! A worker's local run queue: a bounded single-producer, multi-consumer ring buffer.
//!
//! The owning worker pushes at `tail` and pops at `head`; other workers steal half of the
//! queue at once. This is the design of the Chase–Lev deque's bounded variants as used by Go's
//! and tokio's schedulers (steal-half, FIFO pop), not a copy of either.
//!
//! `head` packs two 32-bit indices: `steal` (the first slot a stealer is still copying) and
//! `real` (the first slot still in the queue). When no steal is in progress they are equal.
//! A stealer first advances `real` past the half it claims (CAS), copies the tasks into its
//! own queue, then advances `steal` to `real` (CAS). The owner may keep popping meanwhile, but
//! must not overwrite slots in `[steal, real)`, which is why capacity checks use `steal`.
//!
//! When the ring is full, the owner moves half of it plus the new task to the injection queue
//! in one batch (one lock), so a burst of a million spawns pays one lock per 128 tasks.
//!
//! Orderings: `tail` is written only by the owner (Release, so a stealer that reads it with
//! Acquire sees the slot contents); `head` CASes are AcqRel so a claimed slot's contents are
//! read only after the claim, and the owner's reuse of a slot happens after the stealer's
//! final CAS releasing it.

use std::mem::MaybeUninit;

use super::inject::Inject;
use crate::loom::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use crate::loom::sync::Arc;
use crate::loom::UnsafeCell;
use crate::task::Runnable;

#[cfg(not(loom))]
pub(crate) const CAPACITY: usize = 256;
#[cfg(loom)]
pub(crate) const CAPACITY: usize = 4;
const MASK: usize = CAPACITY - 1;

/// Producer (owner) handle.
pub(crate) struct Local<S: 'static> {
    inner: Arc<Inner<S>>,
}

/// Consumer handle for other workers.
pub(crate) struct Steal<S: 'static>(Arc<Inner<S>>);

struct Inner<S: 'static> {
    head: AtomicU64,
    tail: AtomicU32,
    buffer: Box<[UnsafeCell<MaybeUninit<Runnable<S>>>]>,
}

// SAFETY: slots are handed between threads through the head/tail protocol above; each slot is
// accessed by one thread at a time.
unsafe impl<S> Send for Inner<S> {}
// SAFETY: sharing `Inner` between the owner and thieves is the point; the head/tail protocol gives
// each slot one accessor at a time, and only `Runnable`s (which are `Send`) move through it.
unsafe impl<S> Sync for Inner<S> {}

fn pack(steal: u32, real: u32) -> u64 {
    ((steal as u64) << 32) | real as u64
}

fn unpack(v: u64) -> (u32, u32) {
    ((v >> 32) as u32, v as u32)
}

pub(crate) fn local<S: 'static>() -> (Steal<S>, Local<S>) {
    let buffer = (0..CAPACITY).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect();
    let inner = Arc::new(Inner { head: AtomicU64::new(0), tail: AtomicU32::new(0), buffer });
    (Steal(inner.clone()), Local { inner })
}

impl<S: 'static> Inner<S> {
    /// # Safety
    /// The caller has exclusive access to slot `idx` (see the module protocol).
    unsafe fn write(&self, idx: u32, task: Runnable<S>) {
        // SAFETY: `write`'s `# Safety`: the caller has exclusive access to this slot.
        self.buffer[idx as usize & MASK].with_mut(|p| unsafe { (*p).write(task) });
    }

    /// # Safety
    /// The caller has exclusive access to slot `idx`, which holds a task it now takes.
    unsafe fn read(&self, idx: u32) -> Runnable<S> {
        // SAFETY: `read`'s `# Safety`: the caller has exclusive access to this slot, which holds an
        // initialised task.
        self.buffer[idx as usize & MASK].with(|p| unsafe { (*p).assume_init_read() })
    }

    fn len(&self) -> usize {
        let (_, real) = unpack(self.head.load(Acquire));
        let tail = self.tail.load(Acquire);
        tail.wrapping_sub(real) as usize
    }
}

impl<S: 'static> Local<S> {
    pub(crate) fn len(&self) -> usize {
        self.inner.len()
    }

    pub(crate) fn has_tasks(&self) -> bool {
        self.len() > 0
    }

    /// Free slots. Slots claimed by an in-progress steal still count as occupied (measured
    /// from the steal head, not the real head), so this is an underestimate by at most the
    /// stolen count: pushing this many never overflows. `push_back_or_overflow` re-checks
    /// anyway.
    pub(crate) fn remaining_slots(&self) -> usize {
        let (steal, _) = unpack(self.inner.head.load(Acquire));
        let tail = self.inner.tail.load(Relaxed);
        CAPACITY - tail.wrapping_sub(steal) as usize
    }

    /// Pushes at the tail; on overflow moves half the queue to `inject`. Returns whether it
    /// overflowed (the task went to `inject`; counted by the worker metrics). Inlined: the
    /// worker's yield path calls it once per poll, and left to itself LLVM stops inlining it
    /// as soon as `run_task` grows (an unrelated extra argument is enough; a plain `#[inline]`
    /// hint does not change that), which costs every poll of `yield_many`.
    #[inline(always)]
    pub(crate) fn push_back_or_overflow(&mut self, mut task: Runnable<S>, inject: &Inject<S>) -> bool {
        let tail = loop {
            let (steal, real) = unpack(self.inner.head.load(Acquire));
            // Only we write `tail`.
            let tail = self.inner.tail.load(Relaxed);
            if tail.wrapping_sub(steal) < CAPACITY as u32 {
                break tail;
            } else if steal != real {
                // A stealer is freeing room right now; don't wait for it.
                inject.push(task);
                return true;
            }
            match self.push_overflow(task, real, tail, inject) {
                Ok(()) => return true,
                Err(t) => task = t, // lost a race with a stealer: there is room now
            }
        };
        // SAFETY: slot `tail` is outside [steal, tail) so no one else reads it.
        unsafe { self.inner.write(tail, task) };
        // Release: publishes the slot to stealers (Acquire load of tail) and our own pops.
        self.inner.tail.store(tail.wrapping_add(1), Release);
        false
    }

    fn push_overflow(
        &mut self,
        task: Runnable<S>,
        head: u32,
        tail: u32,
        inject: &Inject<S>,
    ) -> Result<(), Runnable<S>> {
        const TAKEN: u32 = (CAPACITY / 2) as u32;
        assert_eq!(tail.wrapping_sub(head) as usize, CAPACITY, "queue is not full");
        let prev = pack(head, head);
        let next_head = head.wrapping_add(TAKEN);
        // Claim the oldest half. Release: nothing to publish to stealers beyond what tail did;
        // Acquire is not needed, the slots were written by us.
        if self.inner.head.compare_exchange(prev, pack(next_head, next_head), Release, Relaxed).is_err() {
            return Err(task);
        }
        let inner = &self.inner;
        // SAFETY: slots [head, head+TAKEN) were just claimed by us and hold tasks.
        let batch = (0..TAKEN).map(|i| unsafe { inner.read(head.wrapping_add(i)) });
        inject.push_batch(batch.chain(std::iter::once(task)));
        Ok(())
    }

    pub(crate) fn pop(&mut self) -> Option<Runnable<S>> {
        let mut head = self.inner.head.load(Acquire);
        let idx = loop {
            let (steal, real) = unpack(head);
            let tail = self.inner.tail.load(Relaxed);
            if real == tail {
                return None;
            }
            let next_real = real.wrapping_add(1);
            let next = if steal == real { pack(next_real, next_real) } else { pack(steal, next_real) };
            match self.inner.head.compare_exchange(head, next, AcqRel, Acquire) {
                Ok(_) => break real,
                Err(actual) => head = actual,
            }
        };
        // SAFETY: the CAS made slot `idx` ours.
        Some(unsafe { self.inner.read(idx) })
    }
}

impl<S: 'static> Steal<S> {
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Steals half of this queue into `dst` (the caller's own queue) and returns one task to
    /// run at once.
    pub(crate) fn steal_into(&self, dst: &mut Local<S>) -> Option<Runnable<S>> {
        let dst_tail = dst.inner.tail.load(Relaxed);
        let (dst_steal, _) = unpack(dst.inner.head.load(Acquire));
        if dst_tail.wrapping_sub(dst_steal) as usize > CAPACITY / 2 {
            // Not enough room to take half of a full queue.
            return None;
        }
        let mut n = self.steal_into2(dst, dst_tail);
        if n == 0 {
            return None;
        }
        n -= 1;
        let ret_pos = dst_tail.wrapping_add(n);
        // SAFETY: we copied into [dst_tail, dst_tail+n], not yet published: ours alone.
        let ret = unsafe { dst.inner.read(ret_pos) };
        if n > 0 {
            dst.inner.tail.store(dst_tail.wrapping_add(n), Release);
        }
        Some(ret)
    }

    fn steal_into2(&self, dst: &mut Local<S>, dst_tail: u32) -> u32 {
        let mut prev = self.0.head.load(Acquire);
        let (n, next) = loop {
            let (steal, real) = unpack(prev);
            let src_tail = self.0.tail.load(Acquire);
            if steal != real {
                // Another worker is stealing from this queue.
                return 0;
            }
            let avail = src_tail.wrapping_sub(real);
            let n = avail - avail / 2;
            if n == 0 {
                return 0;
            }
            let next = pack(steal, real.wrapping_add(n));
            match self.0.head.compare_exchange(prev, next, AcqRel, Acquire) {
                Ok(_) => break (n, next),
                Err(actual) => prev = actual,
            }
        };
        let (first, _) = unpack(next);
        for i in 0..n {
            // SAFETY: [first, first+n) is claimed by our CAS (the owner won't reuse it until
            // `steal` moves), and the destination slots are free and unpublished.
            unsafe {
                let task = self.0.read(first.wrapping_add(i));
                dst.inner.write(dst_tail.wrapping_add(i), task);
            }
        }
        // Release the claimed slots back to the owner: steal := real.
        let mut prev = next;
        loop {
            let (_, real) = unpack(prev);
            match self.0.head.compare_exchange(prev, pack(real, real), AcqRel, Acquire) {
                Ok(_) => return n,
                Err(actual) => {
                    let (s, r) = unpack(actual);
                    debug_assert_ne!(s, r, "steal marker vanished during a steal");
                    prev = actual;
                }
            }
        }
    }
}

impl<S: 'static> Drop for Local<S> {
    fn drop(&mut self) {
        // Drop whatever is left (only at shutdown, after the tasks were cancelled).
        while self.pop().is_some() {}
    }
}
