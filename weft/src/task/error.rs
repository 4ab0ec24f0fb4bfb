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
    /// Boxed once more so that `JoinError` is two words: a small task's output slot
    /// (`Result<T, JoinError>`) then keeps its cell under 121 bytes (`task/stats.rs`, "Size").
    /// The extra allocation happens only when a task panics.
    Panic(Box<SyncPayload>),
}

/// A panic payload made `Sync` by never handing out `&` access to it.
struct SyncPayload(Box<dyn Any + Send + 'static>);

// SAFETY: through a shared reference the payload is only ever asked for its `TypeId` (a vtable
// call that reads no data) and then downcast to `String` or `&'static str`, both of which are
// `Sync`; any other access is by value (`into_panic`) or through `&mut`. So sharing
// `&SyncPayload` across threads exposes no non-`Sync` data.
unsafe impl Sync for SyncPayload {}

impl SyncPayload {
    /// The panic message when the payload is a `&'static str` or a `String` (what `panic!` makes).
    fn as_str(&self) -> Option<&str> {
        if let Some(s) = self.0.downcast_ref::<&'static str>() {
            Some(s)
        } else {
            self.0.downcast_ref::<String>().map(String::as_str)
        }
    }
}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> JoinError {
        JoinError { id, repr: Repr::Cancelled }
    }

    pub(crate) fn panic(id: Id, payload: Box<dyn Any + Send + 'static>) -> JoinError {
        JoinError { id, repr: Repr::Panic(Box::new(SyncPayload(payload))) }
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
    #[track_caller]
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
        match &self.repr {
            Repr::Cancelled => write!(f, "task {} was cancelled", self.id),
            Repr::Panic(p) => match p.as_str() {
                Some(msg) => write!(f, "task {} panicked with message {:?}", self.id, msg),
                None => write!(f, "task {} panicked", self.id),
            },
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "JoinError::Cancelled({:?})", self.id),
            Repr::Panic(p) => match p.as_str() {
                Some(msg) => write!(f, "JoinError::Panic({:?}, {:?}, ...)", self.id, msg),
                None => write!(f, "JoinError::Panic({:?}, ...)", self.id),
            },
        }
    }
}

impl std::error::Error for JoinError {}

impl From<JoinError> for std::io::Error {
    fn from(e: JoinError) -> std::io::Error {
        // tokio's text: no task id, no message.
        std::io::Error::other(if e.is_cancelled() { "task was cancelled" } else { "task panicked" })
    }
}
