//! The task cell: the single allocation that holds a task's header, future/output and trailer.
//!
//! ```text
//! Cell<T, S>  (#[repr(C)], one allocation per task: a slot of the runtime's arena, `arena.rs`)
//! ├── Header   state word, vtable, owned-list links, queue link, id   — type-erased, shared
//! ├── Core     scheduler handle `S`, stage (future → output → consumed) — touched under RUNNING
//! └── Trailer  join waker                                            — guarded by JOIN_WAKER
//!              task statistics (`stats.rs`, cold: not in the header)  — written under RUNNING
//! ```
//!
//! Raw pointers to a task always point at the `Header` (offset 0 of the cell); the vtable
//! recovers the typed cell. Who may touch which field:
//! * `state`: anyone holding a reference, atomically.
//! * `stage`: only the thread holding `RUNNING`, or the `JoinHandle` after `COMPLETE` (reading
//!   the output), or the `JoinHandle` drop after `COMPLETE` (dropping it).
//! * `owned_prev/next`, `owner`: only under the owned-list shard lock named by `owner`.
//! * `queue_next`: only by the injection queue while it holds the task's `Runnable`.
//! * `trailer.waker`: by the `JoinHandle` while `JOIN_WAKER` is clear, by the task side while
//!   it is set (see `state.rs`).

use std::future::Future;
use std::ptr::NonNull;
use std::task::Waker;

use super::raw::Vtable;
use super::state::State;
use super::stats::TaskStats;
use super::{Id, JoinError};
use crate::loom::UnsafeCell;

#[repr(C)]
pub(crate) struct Cell<T: Future, S> {
    pub(super) header: Header,
    pub(super) core: Core<T, S>,
    pub(super) trailer: Trailer,
}

pub(crate) struct Header {
    pub(super) state: State,
    pub(super) vtable: &'static Vtable,
    /// Intrusive link used by the injection queue (owned by the queue holding the Runnable).
    pub(crate) queue_next: UnsafeCell<Option<NonNull<Header>>>,
    /// Intrusive doubly linked owned-task list (guarded by the shard lock in `owner`).
    pub(crate) owned_prev: UnsafeCell<Option<NonNull<Header>>>,
    pub(crate) owned_next: UnsafeCell<Option<NonNull<Header>>>,
    /// Index of the owned-list shard the task was bound to (`u32::MAX`: not bound).
    pub(crate) owner: UnsafeCell<u32>,
    pub(super) id: Id,
    /// Where the task was spawned (`#[track_caller]` through the spawn functions); immutable.
    pub(crate) spawned_at: &'static std::panic::Location<'static>,
}

// SAFETY: every field of the header is either atomic, immutable after construction, or an
// `UnsafeCell` whose accesses are serialised by the protocol documented in the module comment.
unsafe impl Send for Header {}
// SAFETY: every field is atomic, immutable after construction, or an `UnsafeCell` whose accesses
// the protocol in the module comment serialises, so `&Header` may be shared between threads.
unsafe impl Sync for Header {}

pub(super) struct Core<T: Future, S> {
    pub(super) scheduler: S,
    pub(super) stage: UnsafeCell<Stage<T>>,
}

pub(super) enum Stage<T: Future> {
    Running(T),
    Finished(Result<T::Output, JoinError>),
    Consumed,
}

pub(super) struct Trailer {
    pub(super) waker: UnsafeCell<Option<Waker>>,
    /// Poll count, poll time and age for the task dump; written only by the `RUNNING` holder.
    pub(super) stats: TaskStats,
}

impl<T: Future, S> Cell<T, S> {
    /// Writes a new cell into `mem`, field by field. Inlined into `raw::allocate` (out of line
    /// it costs every spawn more), which takes the memory from the runtime's arena or the
    /// global allocator; see `stats.rs`, "Size", for why a small task's cell fits in 120 bytes
    /// (a unit test below holds it there).
    ///
    /// In place rather than `mem.write(Cell { .. })`: that builds the whole cell on the stack
    /// first, so a large future is copied once more per spawn (in `weft-lab actors --filter
    /// =spawn`, a `memcpy` of the actor's future in `allocate` on top of the move into the
    /// cell).
    ///
    /// # Safety
    /// `mem` is valid for writes of one `Cell<T, S>` and properly aligned.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn init(
        mem: *mut Self,
        future: T,
        scheduler: S,
        id: Id,
        vtable: &'static Vtable,
        spawned_at: &'static std::panic::Location<'static>,
        time_polls: bool,
        time_schedules: bool,
    ) {
        // SAFETY: `mem` is valid and aligned for a whole cell (`# Safety`), so for each field;
        // every field is written exactly once, and nothing reads the cell before this returns.
        unsafe {
            std::ptr::addr_of_mut!((*mem).header).write(Header {
                state: State::new(),
                vtable,
                queue_next: UnsafeCell::new(None),
                owned_prev: UnsafeCell::new(None),
                owned_next: UnsafeCell::new(None),
                owner: UnsafeCell::new(u32::MAX),
                id,
                spawned_at,
            });
            std::ptr::addr_of_mut!((*mem).core.scheduler).write(scheduler);
            std::ptr::addr_of_mut!((*mem).core.stage).write(UnsafeCell::new(Stage::Running(future)));
            std::ptr::addr_of_mut!((*mem).trailer)
                .write(Trailer { waker: UnsafeCell::new(None), stats: TaskStats::new(time_polls, time_schedules) });
        }
    }
}

impl Header {
    pub(crate) fn id(&self) -> Id {
        self.id
    }

    /// Whether the task was bound to an owned list. `owner` is written once, by the poller
    /// (holding `RUNNING`) before its `transition_to_idle` (AcqRel); anyone who later obtains
    /// the task through its state word or a queue observes the write.
    pub(crate) fn is_bound(&self) -> bool {
        // SAFETY: `owner` is written once, by the poller holding RUNNING, before the AcqRel
        // `transition_to_idle` that publishes the task; no write races this read.
        self.owner.with(|p| unsafe { *p }) != u32::MAX
    }
}

impl<T: Future, S> Core<T, S> {
    /// Replaces the stage, dropping the previous one (the future or an unread output).
    ///
    /// # Safety
    /// The caller holds `RUNNING`, or has exclusive access to the stage after `COMPLETE`.
    pub(super) unsafe fn set_stage(&self, stage: Stage<T>) {
        // SAFETY: `set_stage`'s `# Safety`: the caller holds RUNNING or owns the stage after
        // COMPLETE, so this is the only access.
        self.stage.with_mut(|ptr| unsafe { *ptr = stage });
    }

    /// Takes the output out of a finished stage.
    ///
    /// # Safety
    /// As `set_stage`, and the stage must be `Finished`.
    pub(super) unsafe fn take_output(&self) -> Result<T::Output, JoinError> {
        // SAFETY: `take_output`'s `# Safety`: the caller owns the stage after COMPLETE, so this is
        // the only access.
        self.stage.with_mut(|ptr| match unsafe { std::ptr::replace(ptr, Stage::Consumed) } {
            Stage::Finished(out) => out,
            _ => panic!("JoinHandle polled after completion"),
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    /// A small task's cell stays in a 128-byte arena slot (see `stats.rs`, "Size").
    #[test]
    fn a_small_tasks_cell_is_at_most_120_bytes() {
        fn cell_size<F: std::future::Future>(_f: &F) -> usize {
            std::mem::size_of::<super::Cell<F, std::sync::Arc<crate::runtime::scheduler::current_thread::Handle>>>()
        }
        let i = 5u64;
        let size = cell_size(&async move { i });
        assert!(size <= 120, "cell of `async move {{ i }}`: {size} bytes");
    }
}
