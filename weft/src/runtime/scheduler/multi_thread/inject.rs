//! The injection queue: a FIFO shared by all workers for tasks scheduled from outside them
//! (`block_on`, other threads, remote wakes) and for local-queue overflow.
//!
//! A `VecDeque` of task references behind one mutex, plus an atomic length so the (very
//! common) "is it empty?" check takes no lock. The critical section only copies pointers:
//! no task header is touched under the lock, so a thread holding it never waits on a cache
//! miss to another core's memory. (The first version was an intrusive linked list through the
//! task headers; `pop_n` then walked up to 128 cold headers under the lock and showed up as
//! 7–8% of a 1M-task `spawn_outside` profile, with lock contention on top.)
//!
//! Batches (local-queue overflow, `pop_n`) take the lock once per batch.

use std::collections::VecDeque;

use crate::loom::lock;
use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};
use crate::loom::sync::Mutex;
use crate::task::Notified;

pub(crate) struct Inject<S: 'static> {
    len: AtomicUsize,
    synced: Mutex<Synced<S>>,
}

struct Synced<S: 'static> {
    queue: VecDeque<Notified<S>>,
    is_closed: bool,
}

impl<S: 'static> Inject<S> {
    pub(crate) fn new() -> Inject<S> {
        Inject { len: AtomicUsize::new(0), synced: Mutex::new(Synced { queue: VecDeque::new(), is_closed: false }) }
    }

    pub(crate) fn len(&self) -> usize {
        // Acquire: pairs with the Release stores below, so a non-zero length means the pushed
        // tasks are visible to the `pop` that follows (which also takes the lock).
        self.len.load(Acquire)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes the queue; later pushes refuse their task. Returns false if already closed.
    pub(crate) fn close(&self) -> bool {
        let mut s = lock(&self.synced);
        let was = s.is_closed;
        s.is_closed = true;
        !was
    }

    /// Pushes one task; a closed queue refuses it (`Notified::refuse`).
    pub(crate) fn push(&self, task: Notified<S>) {
        let mut s = lock(&self.synced);
        if s.is_closed {
            drop(s);
            task.refuse();
            return;
        }
        s.queue.push_back(task);
        self.len.store(s.queue.len(), Release);
    }

    /// Pushes a batch in order with one lock acquisition.
    pub(crate) fn push_batch(&self, tasks: impl Iterator<Item = Notified<S>>) {
        let mut s = lock(&self.synced);
        if s.is_closed {
            drop(s);
            tasks.for_each(Notified::refuse);
            return;
        }
        s.queue.extend(tasks);
        self.len.store(s.queue.len(), Release);
    }

    pub(crate) fn pop(&self) -> Option<Notified<S>> {
        if self.is_empty() {
            return None;
        }
        let mut s = lock(&self.synced);
        let task = s.queue.pop_front();
        self.len.store(s.queue.len(), Release);
        task
    }

    /// Pops up to `max` tasks with one lock acquisition, handing each to `f` after unlocking.
    pub(crate) fn pop_n(&self, max: usize, mut f: impl FnMut(Notified<S>)) -> usize {
        if max == 0 || self.is_empty() {
            return 0;
        }
        let mut buf: [Option<Notified<S>>; 128] = [const { None }; 128];
        let n = {
            let mut s = lock(&self.synced);
            let n = max.min(s.queue.len()).min(buf.len());
            for (slot, task) in buf.iter_mut().zip(s.queue.drain(..n)) {
                *slot = Some(task);
            }
            self.len.store(s.queue.len(), Release);
            n
        };
        for task in buf.iter_mut().take(n) {
            f(task.take().expect("filled above"));
        }
        n
    }
}
