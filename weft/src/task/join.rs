//! `JoinHandle<T>`: awaits a task's output; dropping it detaches the task.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::raw::OwnedRef;
use super::{AbortHandle, Id, JoinError};

/// An owned permission to await (and abort) a spawned task.
///
/// Awaiting yields `Ok(output)`, or `Err(JoinError)` if the task panicked or was cancelled.
/// Dropping the handle *detaches* the task: it keeps running and its output is dropped.
pub struct JoinHandle<T> {
    /// The handle's reference; `None` only inside `drop`, which gives it back.
    raw: Option<OwnedRef>,
    /// The output has been taken (the task is complete and the handle is spent).
    done: bool,
    _p: PhantomData<T>,
}

// SAFETY: the handle only moves the output (`T`) across threads, so it is as Send/Sync as `T`
// is Send; the task itself is synchronised through its state word.
unsafe impl<T: Send> Send for JoinHandle<T> {}
// SAFETY: `&JoinHandle` only exposes `abort`/`is_finished`/`id`, which never touch `T`.
unsafe impl<T: Send> Sync for JoinHandle<T> {}

impl<T> std::panic::UnwindSafe for JoinHandle<T> {}
impl<T> std::panic::RefUnwindSafe for JoinHandle<T> {}
impl<T> Unpin for JoinHandle<T> {}

impl<T> JoinHandle<T> {
    /// Takes ownership of the JoinHandle's reference.
    /// `raw` must be the task's join reference (the one `JOIN_INTEREST` accounts for), and
    /// the task's output type `T`.
    pub(super) fn new(raw: OwnedRef) -> JoinHandle<T> {
        JoinHandle { raw: Some(raw), done: false, _p: PhantomData }
    }

    fn raw(&self) -> &OwnedRef {
        self.raw.as_ref().expect("JoinHandle used during its own drop")
    }

    /// Asks the task to stop. A task that has not completed is dropped at its next scheduling
    /// point and its handle resolves to a cancelled `JoinError`.
    pub fn abort(&self) {
        self.raw().task().abort();
    }

    /// True once the task has completed (its output is ready, or it was cancelled/panicked).
    pub fn is_finished(&self) -> bool {
        self.raw().header().state.load().is_complete()
    }

    /// A handle that can abort the task without owning its output.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle::new(self.raw().task().new_ref())
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        self.raw().header().id()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        assert!(!self.done, "JoinHandle polled after it returned Ready");
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        let mut ret: Poll<Result<T, JoinError>> = Poll::Pending;
        // SAFETY: `ret` has the task's output type (T is the spawned future's Output) and this
        // is the task's only JoinHandle.
        unsafe { self.raw().try_read_output(&mut ret as *mut _ as *mut (), cx.waker()) };
        if ret.is_ready() {
            coop.made_progress();
            self.done = true;
        }
        ret
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        let Some(raw) = self.raw.take() else { return };
        if self.done {
            raw.drop_join_handle_after_output();
        } else {
            raw.drop_join_handle();
        }
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").field("id", &self.id()).finish()
    }
}
