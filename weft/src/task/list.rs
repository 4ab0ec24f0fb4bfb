//! `OwnedTasks`: every live task of a scheduler, so that shutdown can cancel all of them.
//!
//! An intrusive doubly linked list through the task headers, split into shards, each behind
//! its own lock. Tasks are bound *lazily*, the first time they go idle (see `task/mod.rs`):
//! a task that completes in its first poll never takes a shard lock. A worker binds to its
//! own shard, so the lock is almost never contended (completion on another worker, after a
//! steal, is the only cross-thread access). The shard index is written once, by the binding
//! poller, and read by `remove` to find the lock.
//!
//! Shutdown closes each shard under its lock (no later `bind` succeeds), then pops and cancels
//! the tasks in batches, so user destructors never run under a shard lock.
//!
//! Rejected: a global counter plus a lock-free list (tasks would still need removal on
//! completion, which is where the lock-free versions get complicated and slow), and no list at
//! all (a detached task whose waker sits in some user structure could then never be dropped
//! at shutdown).

use std::marker::PhantomData;
use std::ptr::NonNull;

use crossbeam_utils::CachePadded;

use super::core::Header;
use super::raw::{Task, TaskRef};
use crate::loom::{lock, sync::Mutex};

pub(crate) struct OwnedTasks<S: 'static> {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    _p: PhantomData<S>,
}

struct Shard {
    head: Option<NonNull<Header>>,
    closed: bool,
}

// SAFETY: the shard only holds pointers to task headers, which are Send + Sync; the list
// links inside them are only touched under this shard's lock.
unsafe impl Send for Shard {}

const UNBOUND: u32 = u32::MAX;

impl<S: 'static> OwnedTasks<S> {
    pub(crate) fn new(num_shards: usize) -> OwnedTasks<S> {
        let shards =
            (0..num_shards.max(1)).map(|_| CachePadded::new(Mutex::new(Shard { head: None, closed: false }))).collect();
        OwnedTasks { shards, _p: PhantomData }
    }

    /// Adds a task that is going idle for the first time (called by its poller, which holds
    /// `RUNNING`), taking the given reference. Returns false if the list is closed; the
    /// reference is released and the caller must cancel the task itself.
    pub(crate) fn bind(&self, task: Task<S>, shard: usize) -> bool {
        let idx = shard % self.shards.len();
        let mut shard = lock(&self.shards[idx]);
        if shard.closed {
            drop(shard);
            drop(task);
            return false;
        }
        // SAFETY: only the poller (holding RUNNING) writes `owner`, once; readers obtain the
        // task after the poller's `transition_to_idle` (AcqRel), which publishes it.
        task.header().owner.with_mut(|p| unsafe { *p = idx as u32 });
        let ptr = task.into_raw();
        // SAFETY: we hold the shard lock, which guards the links of every task in it.
        unsafe { push_front(&mut shard, ptr) };
        true
    }

    /// Removes a completed task; `None` if shutdown already took it out of the list.
    pub(crate) fn remove(&self, task: TaskRef<'_>) -> Option<Task<S>> {
        let header = task.header();
        // SAFETY: `owner` is written once before publication (see `bind`).
        let idx = header.owner.with(|p| unsafe { *p });
        if idx == UNBOUND {
            return None;
        }
        let mut shard = lock(&self.shards[idx as usize]);
        // SAFETY: we hold the lock guarding the links.
        if unsafe { unlink(&mut shard, task.header_ptr()) } {
            // SAFETY: `bind` linked this task with the reference of a `Task<S>` (`into_raw`);
            // unlinking it passes that reference to the returned `Task<S>`.
            Some(unsafe { Task::from_raw(task.header_ptr()) })
        } else {
            None
        }
    }

    /// Closes the list and cancels every task in it. Idempotent; safe to call from several
    /// threads (each task is popped by exactly one of them).
    pub(crate) fn close_and_shutdown_all(&self) {
        for shard in self.shards.iter() {
            loop {
                let mut batch = Vec::with_capacity(64);
                {
                    let mut g = lock(shard);
                    g.closed = true;
                    while batch.len() < 64 {
                        let Some(head) = g.head else { break };
                        // SAFETY: we hold the lock; `head` is linked in this shard.
                        unsafe { unlink(&mut g, head) };
                        // SAFETY: `bind` linked it with a `Task<S>`'s reference, which now belongs to this one.
                        batch.push(unsafe { Task::<S>::from_raw(head) });
                    }
                }
                if batch.is_empty() {
                    break;
                }
                for task in batch {
                    task.shutdown();
                }
            }
        }
    }

    /// The listed tasks (for `Handle::dump_tasks`), shard by shard under each shard's lock;
    /// `timed`: whether the runtime times polls (else the dump reports no poll times).
    pub(crate) fn dump(&self, timed: bool) -> Vec<crate::runtime::TaskInfo> {
        use crate::runtime::{TaskInfo, TaskState};
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            let g = lock(shard);
            let mut cur = g.head;
            while let Some(node) = cur {
                // SAFETY: we hold the shard lock and `node` is linked in it, so the list's
                // reference keeps the task allocated while we read it.
                let header = unsafe { node.as_ref() };
                let s = header.state.load();
                let state = if s.is_complete() {
                    TaskState::Complete
                } else if s.is_running() {
                    TaskState::Running
                } else if s.is_notified() {
                    TaskState::Scheduled
                } else {
                    TaskState::Idle
                };
                // SAFETY: `node` is linked in this shard and we hold the shard lock: the list's
                // reference keeps the task allocated while the lock is held, which it is for
                // this view's whole use.
                let stats = unsafe { TaskRef::from_raw(node) }.stats().snapshot();
                out.push(TaskInfo {
                    id: header.id(),
                    spawn_location: header.spawned_at,
                    state,
                    age: stats.age,
                    poll_count: stats.polls,
                    total_poll_time: timed.then_some(stats.total_poll_time),
                    max_poll_time: timed.then_some(stats.max_poll_time),
                });
                // SAFETY: `node` is live and linked in this shard, whose lock `g` we hold.
                cur = unsafe { next(node) };
            }
        }
        out
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| lock(s).head.is_none())
    }
}

/// # Safety
/// `node` is live and the caller holds the lock of the shard whose list `node` is (or is about
/// to be) in: that lock guards every task's owned-list links.
unsafe fn prev(node: NonNull<Header>) -> Option<NonNull<Header>> {
    // SAFETY: `prev`'s `# Safety`: live node, links guarded by the lock the caller holds.
    unsafe { node.as_ref().owned_prev.with(|p| *p) }
}

/// # Safety
/// As for `prev`.
unsafe fn next(node: NonNull<Header>) -> Option<NonNull<Header>> {
    // SAFETY: `next`'s `# Safety`: live node, links guarded by the lock the caller holds.
    unsafe { node.as_ref().owned_next.with(|p| *p) }
}

/// # Safety
/// As for `prev`; the lock makes this write the only access to the link.
unsafe fn set_prev(node: NonNull<Header>, v: Option<NonNull<Header>>) {
    // SAFETY: `set_prev`'s `# Safety`: live node, links guarded by the lock the caller holds.
    unsafe { node.as_ref().owned_prev.with_mut(|p| *p = v) }
}

/// # Safety
/// As for `prev`; the lock makes this write the only access to the link.
unsafe fn set_next(node: NonNull<Header>, v: Option<NonNull<Header>>) {
    // SAFETY: `set_next`'s `# Safety`: live node, links guarded by the lock the caller holds.
    unsafe { node.as_ref().owned_next.with_mut(|p| *p = v) }
}

/// # Safety
/// The caller holds the shard's lock and `node` is live and in no list.
unsafe fn push_front(shard: &mut Shard, node: NonNull<Header>) {
    // SAFETY: for every link access below, `push_front`'s `# Safety`: the shard lock is held and
    // `node` and the old head are live (the head is linked, so the list holds its reference).
    unsafe {
        set_prev(node, None);
        set_next(node, shard.head);
        if let Some(old) = shard.head {
            set_prev(old, Some(node));
        }
    }
    shard.head = Some(node);
}

/// Unlinks `node` if it is in this shard's list; returns whether it was.
///
/// # Safety
/// The caller holds the shard's lock and `node` is live and was bound to this shard.
unsafe fn unlink(shard: &mut Shard, node: NonNull<Header>) -> bool {
    // SAFETY: for every link access below, `unlink`'s `# Safety`: the shard lock is held, `node`
    // is live, and its neighbours are linked in this list, which holds their references.
    unsafe {
        let (p, n) = (prev(node), next(node));
        match p {
            Some(p) => set_next(p, n),
            None if shard.head == Some(node) => shard.head = n,
            None => return false,
        }
        if let Some(n) = n {
            set_prev(n, p);
        }
        set_prev(node, None);
        set_next(node, None);
    }
    true
}
