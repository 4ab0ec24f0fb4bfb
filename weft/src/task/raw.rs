//! Type-erased task pointers and the reference types built on them.
//!
//! A `RawTask` is a copyable pointer to a task's `Header` plus its vtable; it owns nothing.
//! The owning reference types each account for exactly one unit of the reference count:
//! * `Task<S>`     — the owned-task list's reference (lets shutdown reach every live task);
//! * `Notified<S>` — the right to poll once, held by run queues;
//! * `JoinHandle<T>` / `AbortHandle` — user handles (`join.rs`, `abort.rs`);
//! * a `Waker` — one reference per clone (`waker.rs`).

use std::future::Future;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::task::Waker;

use super::core::{Cell, Header};
use super::harness;
use super::{Id, Schedule};

/// Functions that need the concrete future and scheduler types.
pub(crate) struct Vtable {
    pub(super) poll: unsafe fn(NonNull<Header>),
    pub(super) schedule: unsafe fn(NonNull<Header>),
    pub(super) dealloc: unsafe fn(NonNull<Header>),
    pub(super) try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    pub(super) drop_join_handle_slow: unsafe fn(NonNull<Header>),
    pub(super) shutdown: unsafe fn(NonNull<Header>),
}

#[derive(Clone, Copy)]
pub(crate) struct RawTask {
    ptr: NonNull<Header>,
}

impl RawTask {
    pub(super) fn new<T, S>(
        future: T,
        scheduler: S,
        id: Id,
        spawned_at: &'static std::panic::Location<'static>,
    ) -> RawTask
    where
        T: Future + 'static,
        S: Schedule,
    {
        let cell = Cell::new(future, scheduler, id, harness::vtable::<T, S>(), spawned_at);
        let ptr = NonNull::from(Box::leak(cell)).cast::<Header>();
        RawTask { ptr }
    }

    /// # Safety
    /// `ptr` points at the header of a live task.
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> RawTask {
        RawTask { ptr }
    }

    pub(crate) fn header_ptr(&self) -> NonNull<Header> {
        self.ptr
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: a RawTask only exists while some reference keeps the task allocated.
        unsafe { self.ptr.as_ref() }
    }

    pub(super) fn state(&self) -> &super::state::State {
        &self.header().state
    }

    /// Polls (or cancels) the task; consumes one `Notified` reference.
    pub(super) fn poll(self) {
        // SAFETY: the vtable matches the cell it was created with; the caller gives up the
        // Notified reference it held, which `poll` consumes.
        unsafe { (self.header().vtable.poll)(self.ptr) }
    }

    /// Submits the task to its scheduler; consumes one reference (now a `Notified`'s).
    pub(super) fn schedule(self) {
        // SAFETY: as above; the caller holds a reference that becomes the Notified's.
        unsafe { (self.header().vtable.schedule)(self.ptr) }
    }

    pub(super) fn dealloc(self) {
        // SAFETY: the caller observed the reference count reach zero.
        unsafe { (self.header().vtable.dealloc)(self.ptr) }
    }

    /// # Safety
    /// `dst` points at a `Poll<Result<T::Output, JoinError>>` of the task's output type, and
    /// the caller is the task's (only) `JoinHandle`.
    pub(super) unsafe fn try_read_output(self, dst: *mut (), waker: &Waker) {
        // SAFETY: forwarded contract.
        unsafe { (self.header().vtable.try_read_output)(self.ptr, dst, waker) }
    }

    /// Drops a `JoinHandle` that has taken the output (one RMW; see `State`).
    pub(super) fn drop_join_handle_after_output(self) {
        if self.state().drop_join_handle_after_output() {
            self.dealloc();
        }
    }

    pub(super) fn drop_join_handle_slow(self) {
        // SAFETY: called once, by the JoinHandle being dropped, which owns a reference.
        unsafe { (self.header().vtable.drop_join_handle_slow)(self.ptr) }
    }

    /// Cancels the task for shutdown; consumes the owned list's reference.
    pub(super) fn shutdown(self) {
        // SAFETY: the caller gives up the reference it held.
        unsafe { (self.header().vtable.shutdown)(self.ptr) }
    }

    /// Releases one reference, freeing the task if it was the last.
    pub(super) fn drop_reference(self) {
        if self.state().ref_dec() {
            self.dealloc();
        }
    }
}

/// The owned-task list's reference to a task.
pub(crate) struct Task<S: 'static> {
    raw: RawTask,
    _p: PhantomData<S>,
}

/// A task that is ready to be polled; held by run queues.
pub(crate) struct Notified<S: 'static>(pub(super) Task<S>);

// SAFETY: a task's shared parts are synchronised by its state word; `Task` and `Notified` only
// let the holder poll (under RUNNING) or release the reference, never reach the future
// directly, so they may move between threads even for `!Send` futures — schedulers of `!Send`
// tasks (LocalSet) only ever poll them on their own thread.
unsafe impl<S> Send for Task<S> {}
// SAFETY: as above.
unsafe impl<S> Sync for Task<S> {}

impl<S: 'static> Task<S> {
    /// # Safety
    /// The caller transfers one reference it owns to the new `Task`.
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> Task<S> {
        Task { raw: RawTask { ptr }, _p: PhantomData }
    }

    pub(crate) fn header(&self) -> &Header {
        self.raw.header()
    }

    pub(crate) fn header_ptr(&self) -> NonNull<Header> {
        self.raw.ptr
    }

    /// Gives up ownership without releasing the reference.
    pub(crate) fn into_raw(self) -> NonNull<Header> {
        let ptr = self.raw.ptr;
        std::mem::forget(self);
        ptr
    }

    /// Takes a new reference to the same task (for the owned list at bind time).
    pub(crate) fn clone_ref(&self) -> Task<S> {
        self.raw.state().ref_inc();
        Task { raw: self.raw, _p: PhantomData }
    }

    /// Cancels the task as part of shutdown, consuming this (owned-list) reference.
    pub(crate) fn shutdown(self) {
        let raw = self.raw;
        std::mem::forget(self);
        raw.shutdown();
    }
}

impl<S: 'static> Notified<S> {
    /// Cancels the task unless someone else is running or has completed it; consumes the
    /// reference. Used when draining run queues at shutdown (never-polled tasks are not in
    /// the owned list) and when a closed queue refuses a freshly spawned task.
    pub(crate) fn shutdown(self) {
        let raw = self.0.raw;
        std::mem::forget(self);
        raw.shutdown();
    }

    /// A closed scheduler refuses this `Notified`. A never-polled task (a spawn that raced
    /// shutdown) is cancelled here, on the spawning thread; a bound task is left to the owned
    /// list's shutdown, which runs on a runtime thread (its future may not like this thread).
    pub(crate) fn refuse(self) {
        if self.is_bound() {
            drop(self);
        } else {
            self.shutdown();
        }
    }

    /// True once the task has been bound to an owned list (it has gone idle at least once).
    pub(crate) fn is_bound(&self) -> bool {
        self.header().is_bound()
    }

    /// Polls the task once (or cancels it, if it was aborted); consumes the reference.
    pub(crate) fn run(self) {
        let raw = self.0.raw;
        std::mem::forget(self);
        raw.poll();
    }

    pub(crate) fn header(&self) -> &Header {
        self.0.header()
    }

    pub(crate) fn into_raw(self) -> NonNull<Header> {
        self.0.into_raw()
    }

    /// # Safety
    /// `ptr` came from `Notified::into_raw` of the same scheduler type.
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> Notified<S> {
        // SAFETY: forwarded contract: the reference travels with the pointer.
        Notified(unsafe { Task::from_raw(ptr) })
    }
}

impl<S: 'static> Drop for Task<S> {
    fn drop(&mut self) {
        self.raw.drop_reference();
    }
}
