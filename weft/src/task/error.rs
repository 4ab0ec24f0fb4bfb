//! `JoinError`: why a task produced no output (cancelled, or panicked with a payload).

use std::any::Any;
use std::fmt;

use super::Id;

/// The task failed to complete: it was cancelled (aborted or shut down) or it panicked.
pub struct JoinError {
    id: Id,
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(SyncPayload),
}

/// A panic payload made `Sync` by never handing out `&` access to it.
struct SyncPayload(Box<dyn Any + Send + 'static>);

// SAFETY: the payload is only ever reached by value (`into_panic`) or through `&mut`, never
// through a shared reference, so sharing `&SyncPayload` across threads exposes nothing.
unsafe impl Sync for SyncPayload {}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> JoinError {
        JoinError { id, repr: Repr::Cancelled }
    }

    pub(crate) fn panic(id: Id, payload: Box<dyn Any + Send + 'static>) -> JoinError {
        JoinError { id, repr: Repr::Panic(SyncPayload(payload)) }
    }

    /// True when the task was aborted or dropped by runtime shutdown.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// True when the task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic payload. Panics if the task was cancelled; use `try_into_panic` to check.
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("`JoinError::into_panic` called on a cancelled task's error (check `is_panic()` first)")
    }

    /// The panic payload, or the error back if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(p) => Ok(p.0),
            Repr::Cancelled => Err(self),
        }
    }

    /// The id of the task that failed.
    pub fn id(&self) -> Id {
        self.id
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.repr {
            Repr::Cancelled => write!(f, "task {} was cancelled", self.id),
            Repr::Panic(_) => write!(f, "task {} panicked", self.id),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.repr {
            Repr::Cancelled => write!(f, "JoinError::Cancelled({:?})", self.id),
            Repr::Panic(_) => write!(f, "JoinError::Panic({:?}, ...)", self.id),
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> std::io::Error {
        std::io::Error::other(e.to_string())
    }
}
