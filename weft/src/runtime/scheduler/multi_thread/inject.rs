//! The injection queue: a FIFO shared by all workers for tasks scheduled from outside them
//! (`block_on`, other threads, remote wakes) and for local-queue overflow.
//!
//! An intrusive singly linked list through `Header::queue_next`, behind one mutex, plus an
//! atomic length so that the (very common) "is it empty?" check takes no lock. Batches are
//! linked outside the lock and spliced in with one acquisition, so an overflowing local
//! queue pays one lock per half-queue moved.
//!
//! Rejected, both slower on `spawn_outside` 1M (docs/notes/performance-figures.md, "Injection
//! queue"): a `VecDeque` of references, also more variable (growing it copies megabytes
//! under the lock), and a queue of 64-slot chunks. Walking headers in `pop_n` costs less than
//! either.

use std::ptr::NonNull;

use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::Mutex;
use crate::task::core::Header;
use crate::task::Runnable;

pub(crate) struct Inject<S: 'static> {
    len: AtomicUsize,
    synced: Mutex<Synced>,
    _p: std::marker::PhantomData<S>,
}

struct Synced {
    head: Option<NonNull<Header>>,
    tail: Option<NonNull<Header>>,
    is_closed: bool,
}

// SAFETY: the list holds task references (Send); links are touched only under the mutex.
unsafe impl Send for Synced {}

fn set_next(node: NonNull<Header>, next: Option<NonNull<Header>>) {
    // SAFETY: `queue_next` belongs to the queue holding the task's Runnable, which is us,
    // and is only touched under our lock or before the node is published to the list.
    unsafe { node.as_ref() }.queue_next.with_mut(|p| unsafe { *p = next });
}

fn get_next(node: NonNull<Header>) -> Option<NonNull<Header>> {
    // SAFETY: `queue_next` belongs to the queue holding the task's Runnable (us); it is read only
    // under our lock or before the node is published.
    unsafe { node.as_ref() }.queue_next.with(|p| unsafe { *p })
}

impl<S: 'static> Inject<S> {
    pub(crate) fn new() -> Inject<S> {
        Inject {
            len: AtomicUsize::new(0),
            synced: Mutex::new(Synced { head: None, tail: None, is_closed: false }),
            _p: std::marker::PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        // Acquire: pairs with the Release stores below, so a non-zero length means the pushed
        // tasks are visible to the `pop` that follows (which also takes the lock).
        self.len.load(Acquire)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the queue; later pushes drop their task. Returns false if already closed.
    pub(crate) fn close(&self) -> bool {
        let mut s = lock(&self.synced);
        let was = s.is_closed;
        s.is_closed = true;
        !was
    }

    /// Pushes one task; a closed queue refuses it (`Runnable::refuse`).
    pub(crate) fn push(&self, task: Runnable<S>) {
        let node = task.into_raw();
        set_next(node, None);
        self.splice(node, node, 1);
    }

    /// Pushes a batch in order with one lock acquisition.
    pub(crate) fn push_batch(&self, tasks: impl Iterator<Item = Runnable<S>>) {
        let mut first: Option<NonNull<Header>> = None;
        let mut last: Option<NonNull<Header>> = None;
        let mut n = 0;
        for task in tasks {
            let node = task.into_raw();
            set_next(node, None);
            match last {
                Some(l) => set_next(l, Some(node)),
                None => first = Some(node),
            }
            last = Some(node);
            n += 1;
        }
        if let (Some(first), Some(last)) = (first, last) {
            self.splice(first, last, n);
        }
    }

    fn splice(&self, first: NonNull<Header>, last: NonNull<Header>, n: usize) {
        let mut s = lock(&self.synced);
        if s.is_closed {
            drop(s);
            let mut cur = Some(first);
            while let Some(node) = cur {
                cur = get_next(node);
                // SAFETY: pointers in the chain came from `Runnable::into_raw`.
                unsafe { Runnable::<S>::from_raw(node) }.refuse();
            }
            return;
        }
        match s.tail {
            Some(t) => set_next(t, Some(first)),
            None => s.head = Some(first),
        }
        s.tail = Some(last);
        self.len.store(self.len.load(Relaxed) + n, Release);
    }

    pub(crate) fn pop(&self) -> Option<Runnable<S>> {
        if self.is_empty() {
            return None;
        }
        let mut s = lock(&self.synced);
        let node = s.head?;
        s.head = get_next(node);
        if s.head.is_none() {
            s.tail = None;
        }
        set_next(node, None);
        self.len.store(self.len.load(Relaxed) - 1, Release);
        // SAFETY: the pointer came from `Runnable::into_raw` in `push`.
        Some(unsafe { Runnable::from_raw(node) })
    }

    /// Pops up to `max` tasks with one lock acquisition, handing each to `f` after unlocking.
    pub(crate) fn pop_n(&self, max: usize, mut f: impl FnMut(Runnable<S>)) -> usize {
        if max == 0 || self.is_empty() {
            return 0;
        }
        let (chain, n) = {
            let mut s = lock(&self.synced);
            let Some(first) = s.head else { return 0 };
            let mut last = first;
            let mut n = 1;
            while n < max {
                match get_next(last) {
                    Some(next) => {
                        last = next;
                        n += 1;
                    }
                    None => break,
                }
            }
            s.head = get_next(last);
            if s.head.is_none() {
                s.tail = None;
            }
            set_next(last, None);
            self.len.store(self.len.load(Relaxed) - n, Release);
            (first, n)
        };
        let mut cur = Some(chain);
        while let Some(node) = cur {
            cur = get_next(node);
            set_next(node, None);
            // SAFETY: pointers in the list came from `Runnable::into_raw`.
            f(unsafe { Runnable::from_raw(node) });
        }
        n
    }
}

fn drop_chain<S: 'static>(mut cur: Option<NonNull<Header>>) {
    while let Some(node) = cur {
        cur = get_next(node);
        // SAFETY: pointers in the chain came from `Runnable::into_raw`.
        drop(unsafe { Runnable::<S>::from_raw(node) });
    }
}

impl<S: 'static> Drop for Inject<S> {
    fn drop(&mut self) {
        let head = lock(&self.synced).head.take();
        drop_chain::<S>(head);
    }
}
