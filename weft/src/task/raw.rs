//! Task pointers the compiler checks: one borrowed view and the owning reference types.
//!
//! The state word counts references (`state.rs`); each unit is held by exactly one value of
//! an *owning* type, and only owning types give a unit back, through `Drop` or a method that
//! takes `self`:
//! * `OwnedRef` — one reference, scheduler type erased; the core of the others below and of
//!   `JoinHandle` / `AbortHandle` (`join.rs`, `abort.rs`). A `Waker` is an `OwnedRef` turned
//!   into its data pointer (`waker.rs`).
//! * `Task<S>` — the owned-task list's reference (lets shutdown reach every live task);
//! * `Runnable<S>` — the right to poll once, held by run queues.
//!
//! `TaskRef<'a>` is the non-owning view: `Copy`, it releases nothing, and its lifetime ties
//! it to the owner it was borrowed from, so it cannot outlive the reference that keeps the
//! task allocated.
//!
//! `unsafe` is confined to the constructors that turn a raw header pointer into one of these
//! types (`OwnedRef::from_raw`, `Task::from_raw`, `Runnable::from_raw`, `TaskRef::from_raw`),
//! each stating in `# Safety` which reference the new value stands for, and to the vtable
//! calls below, which rely on exactly that.

use std::alloc::Layout;
use std::future::Future;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::task::Waker;

use super::arena::TaskArena;
use super::core::{Cell, Header};
use super::harness;
use super::state::{State, TransitionToNotifiedByRef, TransitionToNotifiedByVal};
use super::stats::TaskStats;
use super::{Id, Schedule};

/// Functions that need the concrete future and scheduler types. Each takes the header of the
/// `Cell<T, S>` whose vtable it is (a vtable is stored only in the header of a cell of its
/// own types, by `Cell::new`); the `# Safety` of each is on its implementation in
/// `harness.rs`.
pub(crate) struct Vtable {
    /// Gives up one reference (a `Runnable`'s): polls, or cancels if aborted.
    pub(super) poll: unsafe fn(NonNull<Header>),
    /// Gives up one reference, which becomes a `Runnable` submitted to the scheduler.
    pub(super) schedule: unsafe fn(NonNull<Header>),
    /// Frees the cell; the reference count has reached zero.
    pub(super) dealloc: unsafe fn(NonNull<Header>),
    /// The `JoinHandle` (keeping its reference) reads the output if it is ready.
    pub(super) try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    /// Gives up the `JoinHandle`'s reference when the output was not read.
    pub(super) drop_join_handle_slow: unsafe fn(NonNull<Header>),
    /// Gives up one reference (the owned list's or a drained `Runnable`'s): cancels the task.
    pub(super) shutdown: unsafe fn(NonNull<Header>),
    /// The task's statistics (in the trailer, whose offset depends on the future's type).
    pub(super) stats: unsafe fn(NonNull<Header>) -> NonNull<TaskStats>,
}

/// Allocates a task cell and returns its two initial references.
pub(super) fn allocate<T, S>(
    future: T,
    scheduler: S,
    id: Id,
    spawned_at: &'static std::panic::Location<'static>,
) -> (Runnable<S>, OwnedRef)
where
    T: Future + 'static,
    S: Schedule,
{
    let (polls, schedules) = (scheduler.time_polls(), scheduler.time_schedules());
    let mem = alloc_cell::<T, S>(&scheduler);
    // SAFETY: `mem` is fresh memory for one `Cell<T, S>` (size and alignment of its layout).
    unsafe { Cell::init(mem.as_ptr(), future, scheduler, id, harness::vtable::<T, S>(), spawned_at, polls, schedules) };
    let ptr = mem.cast::<Header>();
    // SAFETY: `State::new` starts the count at two references, one for each value built
    // here; the cell is a `Cell<T, S>`, so `S` is its scheduler type.
    unsafe { (Runnable::from_raw(ptr), OwnedRef::from_raw(ptr)) }
}

/// Memory for a `Cell<T, S>`: a slot of the scheduler's arena when it serves the layout, else
/// the global allocator. `free_cell` decides the same way, from the same two facts.
#[inline(always)]
fn alloc_cell<T: Future + 'static, S: Schedule>(scheduler: &S) -> NonNull<Cell<T, S>> {
    let layout = Layout::new::<Cell<T, S>>();
    if let (Some(arena), Some(class)) = (scheduler.arena(), TaskArena::class_of(layout)) {
        return arena.alloc(class).cast();
    }
    // SAFETY: a cell's layout is never zero-sized (it holds the header).
    match NonNull::new(unsafe { std::alloc::alloc(layout) }) {
        Some(p) => p.cast(),
        None => std::alloc::handle_alloc_error(layout),
    }
}

/// Gives back the memory of a `Cell<T, S>` whose contents were already dropped or moved out.
///
/// # Safety
/// `cell` came from `alloc_cell::<T, S>` with a scheduler value whose `arena()` is `scheduler`'s
/// (the cell's own scheduler, moved out of it), and nothing uses the memory again.
pub(super) unsafe fn free_cell<T: Future + 'static, S: Schedule>(scheduler: &S, cell: NonNull<Cell<T, S>>) {
    let layout = Layout::new::<Cell<T, S>>();
    if let (Some(arena), Some(class)) = (scheduler.arena(), TaskArena::class_of(layout)) {
        // SAFETY: `alloc_cell` took it from this arena's `class` (same scheduler arena, same
        // layout), and the caller is done with it.
        unsafe { arena.free(cell.cast(), class) };
    } else {
        // SAFETY: `alloc_cell` took it from the global allocator with this layout.
        unsafe { std::alloc::dealloc(cell.as_ptr().cast(), layout) };
    }
}

/// A borrowed view of a task. Holding one promises nothing new: some owner lent it, and the
/// lifetime keeps the view from outliving that owner.
#[derive(Clone, Copy)]
pub(crate) struct TaskRef<'a> {
    ptr: NonNull<Header>,
    _p: PhantomData<&'a Header>,
}

impl<'a> TaskRef<'a> {
    /// # Safety
    /// `ptr` is the header of a task that stays allocated for `'a`: the caller holds a
    /// reference (or borrows from a holder) for at least that long.
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> TaskRef<'a> {
        TaskRef { ptr, _p: PhantomData }
    }

    pub(crate) fn header(self) -> &'a Header {
        // SAFETY: `TaskRef::from_raw`'s contract keeps the task allocated for `'a`.
        unsafe { self.ptr.as_ref() }
    }

    pub(super) fn state(self) -> &'a State {
        &self.header().state
    }

    pub(crate) fn header_ptr(self) -> NonNull<Header> {
        self.ptr
    }

    /// The task's statistics (poll count, poll time, age), for the task dump.
    pub(crate) fn stats(self) -> &'a TaskStats {
        // SAFETY: the vtable in a header is that cell's own (`Cell::new`), and `from_raw`'s
        // contract keeps the cell, and so its trailer, allocated for `'a`.
        unsafe { (self.header().vtable.stats)(self.ptr).as_ref() }
    }

    /// Takes a new reference to the task.
    pub(super) fn new_ref(self) -> OwnedRef {
        self.state().ref_inc();
        // SAFETY: `ref_inc` just took the reference the returned value stands for.
        unsafe { OwnedRef::from_raw(self.ptr) }
    }

    /// `Waker::wake_by_ref`: submits the task if it was idle, with a reference taken for it.
    pub(super) fn wake_by_ref(self) {
        match self.state().transition_to_notified_by_ref() {
            TransitionToNotifiedByRef::Submit => {
                // SAFETY: the transition took a reference (`ref_inc`) for this submission.
                unsafe { OwnedRef::from_raw(self.ptr) }.schedule();
            }
            TransitionToNotifiedByRef::DoNothing => {}
        }
    }

    /// Sets `CANCELLED`; if the task was idle, submits it (with a reference taken for that)
    /// so that its scheduler drops the future on the thread that owns it (`LocalSet`).
    pub(super) fn abort(self) {
        if self.state().transition_to_notified_and_cancel() {
            // SAFETY: the transition returned true after taking a reference for this
            // submission.
            unsafe { OwnedRef::from_raw(self.ptr) }.schedule();
        }
    }
}

/// One counted reference to a task, scheduler type erased. Dropping it releases the
/// reference and frees the task if it was the last.
pub(crate) struct OwnedRef {
    ptr: NonNull<Header>,
}

impl OwnedRef {
    /// # Safety
    /// `ptr` is the header of a live task and the caller transfers one reference it owns to
    /// the new value (and does not release that reference any other way).
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> OwnedRef {
        OwnedRef { ptr }
    }

    /// The view of the task, valid while this reference is held.
    pub(crate) fn task(&self) -> TaskRef<'_> {
        // SAFETY: `self` owns a reference for as long as the borrow lasts.
        unsafe { TaskRef::from_raw(self.ptr) }
    }

    pub(crate) fn header(&self) -> &Header {
        self.task().header()
    }

    /// Gives up ownership without releasing the reference (it now travels with the pointer,
    /// e.g. as a waker's data pointer or an intrusive queue link).
    pub(crate) fn into_raw(self) -> NonNull<Header> {
        let ptr = self.ptr;
        std::mem::forget(self);
        ptr
    }

    fn vtable(&self) -> &'static Vtable {
        self.header().vtable
    }

    /// Polls the task (or cancels it, if aborted); this reference is the `Runnable`'s.
    pub(super) fn poll(self) {
        let poll = self.vtable().poll;
        // SAFETY: the header's vtable belongs to this cell (`Cell::new`), and `into_raw`
        // hands this value's reference to `poll`, which consumes it.
        unsafe { poll(self.into_raw()) }
    }

    /// Submits the task to its scheduler; this reference becomes the `Runnable`'s.
    pub(super) fn schedule(self) {
        let schedule = self.vtable().schedule;
        // SAFETY: the header's vtable belongs to this cell, and `into_raw` hands this
        // value's reference to `schedule`, which turns it into the `Runnable`'s.
        unsafe { schedule(self.into_raw()) }
    }

    /// Cancels the task for shutdown; consumes this reference.
    pub(super) fn shutdown(self) {
        let shutdown = self.vtable().shutdown;
        // SAFETY: the header's vtable belongs to this cell, and `into_raw` hands this
        // value's reference to `shutdown`, which consumes it.
        unsafe { shutdown(self.into_raw()) }
    }

    /// `Waker::wake`: this reference becomes the `Runnable`'s if the task was idle, else it is
    /// released.
    pub(super) fn wake(self) {
        match self.task().state().transition_to_notified_by_val() {
            TransitionToNotifiedByVal::Submit => self.schedule(),
            TransitionToNotifiedByVal::DoNothing => {
                // The transition released this reference (and it was not the last).
                std::mem::forget(self);
            }
            TransitionToNotifiedByVal::Dealloc => self.dealloc(),
        }
    }

    /// For the `JoinHandle` only: reads the output into `dst` if the task is complete,
    /// otherwise registers `waker` to be woken on completion.
    ///
    /// # Safety
    /// `dst` points at a `Poll<Result<T::Output, JoinError>>` of the task's output type, and
    /// `self` is the task's (only) `JoinHandle` reference.
    pub(super) unsafe fn try_read_output(&self, dst: *mut (), waker: &Waker) {
        let read = self.vtable().try_read_output;
        // SAFETY: the header's vtable belongs to this cell; `dst`'s type and the caller being
        // the JoinHandle are this method's `# Safety` conditions, which are `read`'s.
        unsafe { read(self.ptr, dst, waker) }
    }

    /// Releases a `JoinHandle` reference that has taken the output (one RMW; see `State`).
    pub(super) fn drop_join_handle_after_output(self) {
        if self.task().state().drop_join_handle_after_output() {
            self.dealloc();
        } else {
            // The RMW released this reference (and it was not the last).
            std::mem::forget(self);
        }
    }

    /// Releases a `JoinHandle` reference whose output was not read: one CAS while the task is
    /// in its initial state, else the slow path (which may drop the output or the join waker).
    pub(super) fn drop_join_handle(self) {
        if self.task().state().drop_join_handle_fast().is_ok() {
            // The CAS released this reference (the task still holds its `Runnable`'s).
            std::mem::forget(self);
            return;
        }
        self.drop_join_handle_slow();
    }

    fn drop_join_handle_slow(self) {
        let slow = self.vtable().drop_join_handle_slow;
        // SAFETY: the header's vtable belongs to this cell; only `JoinHandle::drop` calls this
        // with the handle's reference, which `into_raw` passes on and `slow` consumes.
        unsafe { slow(self.into_raw()) }
    }

    /// Frees the task; the count has already reached zero (the caller's RMW released this
    /// reference as the last one).
    fn dealloc(self) {
        let dealloc = self.vtable().dealloc;
        // SAFETY: the header's vtable belongs to this cell; the count is zero, so no other
        // owner exists and `into_raw` leaves no value that could touch the cell again.
        unsafe { dealloc(self.into_raw()) }
    }
}

impl Drop for OwnedRef {
    fn drop(&mut self) {
        if self.task().state().ref_dec() {
            let dealloc = self.header().vtable.dealloc;
            // SAFETY: `ref_dec` released our reference as the last one, so nothing else uses
            // the cell, and `self` is never used after `drop`.
            unsafe { dealloc(self.ptr) }
        }
    }
}

// SAFETY: the task's shared parts are synchronised by its state word; an `OwnedRef` only lets
// its holder take part in that protocol (state transitions, vtable calls that claim `RUNNING`
// before touching the future), never reach the future directly, so it may move between
// threads even for `!Send` futures: schedulers of `!Send` tasks (`LocalSet`) only poll them
// on their own thread.
unsafe impl Send for OwnedRef {}
// SAFETY: `&OwnedRef` only reads the header (atomic state word, immutable vtable and id).
unsafe impl Sync for OwnedRef {}

/// The owned-task list's reference to a task.
pub(crate) struct Task<S: 'static> {
    raw: OwnedRef,
    /// `fn() -> S`: the scheduler type is only a label here (no `S` is stored), so it does
    /// not affect `Send`/`Sync`.
    _p: PhantomData<fn() -> S>,
}

/// A task that is ready to be polled; held by run queues.
pub(crate) struct Runnable<S: 'static>(Task<S>);

impl<S: 'static> Task<S> {
    /// # Safety
    /// `ptr` is the header of a live task whose scheduler type is `S`, and the caller
    /// transfers one reference it owns to the new `Task`.
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> Task<S> {
        // SAFETY: this function's contract is `OwnedRef::from_raw`'s plus the type `S`.
        Task { raw: unsafe { OwnedRef::from_raw(ptr) }, _p: PhantomData }
    }

    pub(crate) fn header(&self) -> &Header {
        self.raw.header()
    }

    /// Gives up ownership without releasing the reference (it travels with the pointer: an
    /// owned-list link, or a release counted by `transition_to_terminal`).
    pub(crate) fn into_raw(self) -> NonNull<Header> {
        self.raw.into_raw()
    }

    /// Cancels the task as part of shutdown, consuming this (owned-list) reference.
    pub(crate) fn shutdown(self) {
        self.raw.shutdown();
    }
}

impl<S: 'static> Runnable<S> {
    /// # Safety
    /// `ptr` is the header of a live task whose scheduler type is `S`, and the caller
    /// transfers to the new value one reference that is a `Runnable`'s (typically from
    /// `Runnable::into_raw` of the same scheduler type).
    pub(crate) unsafe fn from_raw(ptr: NonNull<Header>) -> Runnable<S> {
        // SAFETY: this function's contract is `Task::from_raw`'s.
        Runnable(unsafe { Task::from_raw(ptr) })
    }

    /// Cancels the task unless someone else is running or has completed it; consumes the
    /// reference. Used when draining run queues at shutdown (never-polled tasks are not in
    /// the owned list) and when a closed queue refuses a freshly spawned task.
    pub(crate) fn shutdown(self) {
        self.0.shutdown();
    }

    /// A closed scheduler refuses this `Runnable`. A never-polled task (a spawn that raced
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
        self.0.raw.poll();
    }

    pub(crate) fn header(&self) -> &Header {
        self.0.header()
    }

    pub(crate) fn into_raw(self) -> NonNull<Header> {
        self.0.into_raw()
    }
}
