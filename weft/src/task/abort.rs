//! `AbortHandle`: cancels a task without owning its output.

use std::fmt;

use super::raw::RawTask;
use super::Id;

/// Aborts a task from anywhere; cloneable, `Send + Sync`, and never keeps the output alive.
pub struct AbortHandle {
    raw: RawTask,
}

// SAFETY: an AbortHandle only touches the task's state word and scheduler hook.
unsafe impl Send for AbortHandle {}
// SAFETY: as above.
unsafe impl Sync for AbortHandle {}

impl std::panic::UnwindSafe for AbortHandle {}
impl std::panic::RefUnwindSafe for AbortHandle {}

impl AbortHandle {
    /// Takes ownership of one reference.
    pub(super) fn new(raw: RawTask) -> AbortHandle {
        AbortHandle { raw }
    }

    /// Cancels the task (see `JoinHandle::abort`).
    pub fn abort(&self) {
        remote_abort(self.raw);
    }

    /// True once the task has completed.
    pub fn is_finished(&self) -> bool {
        self.raw.state().load().is_complete()
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        self.raw.header().id()
    }
}

/// Sets CANCELLED; if the task was idle, submits it so that its scheduler drops the future on
/// the thread that owns it (matters for `LocalSet` tasks).
pub(super) fn remote_abort(raw: RawTask) {
    if raw.state().transition_to_notified_and_cancel() {
        raw.schedule();
    }
}

impl Clone for AbortHandle {
    fn clone(&self) -> AbortHandle {
        self.raw.state().ref_inc();
        AbortHandle { raw: self.raw }
    }
}

impl Drop for AbortHandle {
    fn drop(&mut self) {
        self.raw.drop_reference();
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle").field("id", &self.id()).finish()
    }
}
