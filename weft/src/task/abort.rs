//! `AbortHandle`: cancels a task without owning its output.

use std::fmt;

use super::raw::OwnedRef;
use super::Id;

/// Aborts a task from anywhere; cloneable, `Send + Sync`, and never keeps the output alive.
pub struct AbortHandle {
    raw: OwnedRef,
}

impl std::panic::UnwindSafe for AbortHandle {}
impl std::panic::RefUnwindSafe for AbortHandle {}

impl AbortHandle {
    /// Takes ownership of one reference.
    pub(super) fn new(raw: OwnedRef) -> AbortHandle {
        AbortHandle { raw }
    }

    /// Cancels the task (see `JoinHandle::abort`).
    pub fn abort(&self) {
        self.raw.task().abort();
    }

    /// Schedules the task for another poll, as `wake_by_ref` on its own `Waker` would: an
    /// idle task is submitted to its scheduler, a running one is polled again after its
    /// current poll, a completed one is left alone. (weft only; tokio's `AbortHandle` has no
    /// such method.) For code that keeps a task's handle anyway and delivers work to it
    /// beside a queue the task polls, such as weft-actor's signals: the handle is then also
    /// its way to wake the task, with no `Waker` to register and keep.
    pub fn wake(&self) {
        self.raw.task().wake_by_ref();
    }

    /// True once the task has completed.
    pub fn is_finished(&self) -> bool {
        self.raw.header().state.load().is_complete()
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        self.raw.header().id()
    }
}

impl Clone for AbortHandle {
    fn clone(&self) -> AbortHandle {
        AbortHandle { raw: self.raw.task().new_ref() }
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle").field("id", &self.id()).finish()
    }
}
