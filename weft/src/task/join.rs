//! `JoinHandle<T>`: awaits a task's output; dropping it detaches the task.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::raw::RawTask;
use super::{AbortHandle, Id, JoinError};

/// An owned permission to await (and abort) a spawned task.
///
/// Awaiting yields `Ok(output)`, or `Err(JoinError)` if the task panicked or was cancelled.
/// Dropping the handle *detaches* the task: it keeps running and its output is dropped.
pub struct JoinHandle<T> {
    raw: RawTask,
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
    pub(super) fn new(raw: RawTask) -> JoinHandle<T> {
        JoinHandle { raw, done: false, _p: PhantomData }
    }

    /// Asks the task to stop. A task that has not completed is dropped at its next scheduling
    /// point and its handle resolves to a cancelled `JoinError`.
    pub fn abort(&self) {
        super::abort::remote_abort(self.raw);
    }

    /// True once the task has completed (its output is ready, or it was cancelled/panicked).
    pub fn is_finished(&self) -> bool {
        self.raw.state().load().is_complete()
    }

    /// A handle that can abort the task without owning its output.
    pub fn abort_handle(&self) -> AbortHandle {
        self.raw.state().ref_inc();
        AbortHandle::new(self.raw)
    }

    /// The task's id.
    pub fn id(&self) -> Id {
        self.raw.header().id()
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
        unsafe { self.raw.try_read_output(&mut ret as *mut _ as *mut (), cx.waker()) };
        if ret.is_ready() {
            coop.made_progress();
            self.done = true;
        }
        ret
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        if self.done {
            self.raw.drop_join_handle_after_output();
            return;
        }
        if self.raw.state().drop_join_handle_fast().is_ok() {
            return;
        }
        self.raw.drop_join_handle_slow();
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").field("id", &self.id()).finish()
    }
}
