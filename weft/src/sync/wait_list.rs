//! An intrusive, doubly linked FIFO of waiters, for the waiter queues of `Semaphore` and
//! `Notify`.
//!
//! Each waiting future embeds one [`Node`] and is pinned while the node is linked, so joining
//! the queue allocates nothing, and leaving it (a cancelled `acquire`, a dropped `Notified`) is
//! O(1) from anywhere in the queue. That O(1) removal is what makes cancellation exact: the
//! dropped future unlinks itself and returns whatever it had been given, instead of leaving a
//! tombstone for someone else to skip.
//!
//! The list itself is not synchronised: it lives inside the owner's (facade) `Mutex`, and every
//! link field of every node is touched only while that mutex is held. A node's payload `T`
//! decides for itself how its fields are shared (the owners use facade `UnsafeCell`s touched
//! under the same mutex, plus one atomic for the lock-free "was I granted?" check).

use std::marker::PhantomPinned;
use std::ptr::NonNull;

use crate::loom::UnsafeCell;

/// Links of one node. Touched only under the owning list's mutex.
struct Links<T> {
    prev: Option<NonNull<Node<T>>>,
    next: Option<NonNull<Node<T>>>,
}

/// One waiter: the links plus the owner's payload. Must stay pinned while linked.
pub(crate) struct Node<T> {
    links: UnsafeCell<Links<T>>,
    pub(crate) data: T,
    _pinned: PhantomPinned,
}

impl<T> Node<T> {
    pub(crate) fn new(data: T) -> Node<T> {
        Node { links: UnsafeCell::new(Links { prev: None, next: None }), data, _pinned: PhantomPinned }
    }
}

/// A FIFO of pinned nodes (head = oldest waiter).
pub(crate) struct WaitList<T> {
    head: Option<NonNull<Node<T>>>,
    tail: Option<NonNull<Node<T>>>,
}

// SAFETY: the list only holds pointers to nodes whose payloads are `Send` (the owners' node
// payloads are made of atomics, cells touched under the list's mutex, and `Waker`s); moving the
// list between threads moves nothing but those pointers, and it is only used under a mutex.
unsafe impl<T: Send> Send for WaitList<T> {}

impl<T> WaitList<T> {
    pub(crate) const fn new() -> WaitList<T> {
        WaitList { head: None, tail: None }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// The oldest waiter, still linked.
    pub(crate) fn front(&self) -> Option<NonNull<Node<T>>> {
        self.head
    }

    /// Links `node` at the back.
    ///
    /// # Safety
    /// `node` is pinned, not in any list, and stays alive until it is unlinked (by
    /// `pop_front` or `remove`); the caller holds the mutex that owns this list.
    pub(crate) unsafe fn push_back(&mut self, node: NonNull<Node<T>>) {
        // SAFETY: `push_back`'s `# Safety`: `node` stays alive until it is unlinked and is in
        // no list, so nobody else reads or writes its links, and the caller holds the mutex
        // that owns this list.
        unsafe {
            (*node.as_ptr()).links.with_mut(|l| {
                (*l).prev = self.tail;
                (*l).next = None;
            });
        }
        match self.tail {
            // SAFETY: `tail` is linked, hence alive (push_back's contract), and we hold the mutex.
            Some(tail) => unsafe { (*tail.as_ptr()).links.with_mut(|l| (*l).next = Some(node)) },
            None => self.head = Some(node),
        }
        self.tail = Some(node);
    }

    /// Unlinks and returns the oldest waiter.
    pub(crate) fn pop_front(&mut self) -> Option<NonNull<Node<T>>> {
        let head = self.head?;
        // SAFETY: `head` is linked, hence alive, and `&mut self` means we hold the mutex.
        unsafe { self.remove(head) };
        Some(head)
    }

    /// Unlinks and returns the newest waiter.
    pub(crate) fn pop_back(&mut self) -> Option<NonNull<Node<T>>> {
        let tail = self.tail?;
        // SAFETY: `tail` is linked, hence alive, and `&mut self` means we hold the mutex.
        unsafe { self.remove(tail) };
        Some(tail)
    }

    /// Unlinks `node`.
    ///
    /// # Safety
    /// `node` is linked in *this* list (the owners track that with a flag kept under the same
    /// mutex); the caller holds the mutex.
    pub(crate) unsafe fn remove(&mut self, node: NonNull<Node<T>>) {
        // SAFETY: `node` is linked in this list (caller), so it is alive; we hold the mutex.
        let (prev, next) = unsafe { (*node.as_ptr()).links.with_mut(|l| ((*l).prev.take(), (*l).next.take())) };
        match prev {
            // SAFETY: a linked neighbour is alive; we hold the mutex.
            Some(p) => unsafe { (*p.as_ptr()).links.with_mut(|l| (*l).next = next) },
            None => {
                debug_assert_eq!(self.head, Some(node), "unlinking a node that is not in this list");
                self.head = next;
            }
        }
        match next {
            // SAFETY: a linked neighbour is alive (its future unlinks it under this mutex before it
            // is freed); we hold the mutex, which guards the links.
            Some(n) => unsafe { (*n.as_ptr()).links.with_mut(|l| (*l).prev = prev) },
            None => {
                debug_assert_eq!(self.tail, Some(node), "unlinking a node that is not in this list");
                self.tail = prev;
            }
        }
    }
}
