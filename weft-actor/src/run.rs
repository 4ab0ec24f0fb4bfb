//! The actor task: `started`, then one message or signal at a time, then `stopped`; and the
//! `Incarnation` guard that makes "the state is dropped, then the watchers are told" hold on
//! every path out of the task — normal return, panic, abort and runtime shutdown.
//!
//! Panics are caught inside the task (`catch`), not turned into a `JoinError`: the task then
//! still owns the state and can run `stopped` and report `ExitReason::Panic` with the
//! original payload to its supervisor directly, with no join handle in between.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Poll;

use weft::task::JoinHandle;

use crate::actor::{Actor, Context};
use crate::actor_ref::{mailbox, ActorRef, Mailbox, MailboxRx, MailboxTx};
use crate::cell::{Cell, CellRef, Signal};
use crate::exit::ExitReason;

/// Spawns `actor` with the given mailbox. Must be called inside a weft runtime.
pub fn spawn<A: Actor>(actor: A) -> ActorRef<A> {
    spawn_with(actor, Mailbox::default())
}

/// Spawns `actor` with a mailbox of the given kind. Must be called inside a weft runtime.
pub fn spawn_with<A: Actor>(actor: A, mailbox: Mailbox) -> ActorRef<A> {
    spawn_inner(actor, mailbox)
}

pin_project_lite::pin_project! {
    /// Polls `f`, turning a panic into `Err(payload)`.
    ///
    /// A named future, not an `async fn`: an `async fn catch(f)` keeps both its argument and
    /// the pinned local it moves `f` into in its state, so every hook's future took its size
    /// twice in the actor's task.
    pub(crate) struct Catch<F> {
        #[pin]
        f: F,
    }
}

impl<F: Future> Future for Catch<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    // Out of line: inlined, the hook's whole loop (`serve`) lands in the actor task's poll and
    // costs every message more (`tell_1t`; docs/notes/performance-figures.md).
    #[inline(never)]
    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let f = self.project().f;
        match std::panic::catch_unwind(AssertUnwindSafe(|| f.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// Polls `f`, turning a panic into `Err(payload)`.
pub(crate) fn catch<F: Future>(f: F) -> Catch<F> {
    Catch { f }
}

/// Owns an actor's state and mailbox for the life of its task. Dropping it drops both and
/// then reports the exit: the task's reason when it finished, `Killed` when it was aborted
/// or dropped by runtime shutdown.
struct Incarnation<A: Actor> {
    actor: Option<A>,
    rx: Option<MailboxRx<A::Msg>>,
    /// The actor's context; its `cell` is the one the exit is reported to, and once the task
    /// has finished its `stop` holds the reason (a field of its own took 24 bytes of every
    /// actor's task).
    ctx: Context<A>,
    /// Set by `finish`: `ctx.stop` is the reason to report. Until then a `stop` there is only
    /// the actor's request, and a drop means the task was aborted.
    finished: bool,
}

impl<A: Actor> Incarnation<A> {
    /// The state, the context and the mailbox, which the guard holds until its drop.
    fn parts(&mut self) -> (&mut A, &mut Context<A>, &mut MailboxRx<A::Msg>) {
        let Incarnation { actor: Some(actor), rx: Some(rx), ctx, .. } = self else {
            unreachable!("an incarnation holds its state and mailbox until dropped")
        };
        (actor, ctx, rx)
    }

    /// The task finished: its drop reports `reason` rather than `Killed`. (A method, not
    /// field assignments in `run`: rustc's liveness lint does not see that a captured value's
    /// `Drop` reads the fields.)
    fn finish(&mut self, reason: ExitReason) {
        self.ctx.stop = Some(reason);
        self.finished = true;
    }
}

impl<A: Actor> Drop for Incarnation<A> {
    fn drop(&mut self) {
        drop(self.rx.take());
        drop(self.actor.take());
        match self.ctx.stop.take() {
            Some(r) if self.finished => self.ctx.cell.exit(r),
            _ => self.ctx.cell.exit_dropped(),
        }
    }
}

/// Where an incarnation's `started` hook runs.
enum Start {
    /// In the actor's own task (unsupervised `spawn`).
    InTask,
    /// Already run by the supervisor (see `spawn_supervised`), with its outcome: `Some`
    /// when `started` panicked or asked to stop.
    Done(Option<ExitReason>),
}

/// Builds an incarnation: mailbox, cell, and the guard that owns the state and context.
fn incarnation<A: Actor>(actor: A, kind: Mailbox, parent: Option<CellRef>) -> (MailboxTx<A::Msg>, Incarnation<A>) {
    let (tx, weak, rx) = mailbox(kind);
    let ctx = Context { cell: Cell::new(parent), weak, stop: None, trap_exit: false };
    (tx, Incarnation { actor: Some(actor), rx: Some(rx), ctx, finished: false })
}

fn spawn_task<A: Actor>(
    tx: MailboxTx<A::Msg>,
    inc: Incarnation<A>,
    start: Start,
    on: Option<&weft::runtime::Handle>,
) -> (ActorRef<A>, JoinHandle<()>) {
    let cell = inc.ctx.cell.clone();
    let join = match on {
        Some(h) => h.spawn(run(inc, start)),
        None => weft::spawn(run(inc, start)),
    };
    cell.set_abort(join.abort_handle());
    (ActorRef { tx, cell }, join)
}

pub(crate) fn spawn_inner<A: Actor>(actor: A, kind: Mailbox) -> ActorRef<A> {
    let (tx, inc) = incarnation(actor, kind, None);
    spawn_task(tx, inc, Start::InTask, None).0
}

/// Starts a supervised child: its `started` hook runs here, in the supervisor's task, and the
/// task is spawned afterwards. The supervisor must wait for `started` anyway (OTP's `init/1`
/// contract); running it in place saves the two task hops and the reply channel of waiting
/// for it across tasks. If the supervisor's task is dropped meanwhile, the guard drops the
/// state and reports the exit as usual.
pub(crate) async fn spawn_supervised<A: Actor>(
    actor: A,
    kind: Mailbox,
    parent: CellRef,
    on: Option<&weft::runtime::Handle>,
) -> (ActorRef<A>, JoinHandle<()>) {
    let (tx, mut inc) = incarnation(actor, kind, Some(parent));
    let (actor, ctx, _) = inc.parts();
    let early = run_started(actor, ctx).await;
    spawn_task(tx, inc, Start::Done(early), on)
}

/// Runs `started`; `Some(reason)` when it panicked or asked to stop.
async fn run_started<A: Actor>(actor: &mut A, ctx: &mut Context<A>) -> Option<ExitReason> {
    match catch(actor.started(ctx)).await {
        Ok(()) => ctx.stop.take(),
        Err(p) => Some(ExitReason::Panic(p)),
    }
}

/// The actor's task. An `async move` block over the moved-in guard, not an `async fn`: an
/// `async fn` keeps each argument twice in its state (the argument and the local it is
/// moved into), and the guard and context are a large share of the task.
///
/// Every byte of its state is in every actor's task for the actor's whole life (`Tiny`
/// below; `TASK_FUTURE_BOUND` holds it), so: the early outcome is the block's `reason`
/// variable itself (a `Start` upvar beside a `reason` local would take space of its own:
/// upvars never share space with locals), and the guard's parts are borrowed per step rather
/// than held across all of them (held, they stay in the state). The sizes of the rejected
/// layouts: docs/notes/performance-figures.md, "Actor task size".
#[allow(clippy::manual_async_fn)]
fn run<A: Actor>(mut inc: Incarnation<A>, start: Start) -> impl Future<Output = ()> {
    let (in_task, mut reason) = match start {
        Start::InTask => (true, None),
        Start::Done(early) => (false, early),
    };
    async move {
        if in_task {
            let (actor, ctx, _) = inc.parts();
            reason = run_started(actor, ctx).await;
        }
        if reason.is_none() {
            let (actor, ctx, rx) = inc.parts();
            reason = Some(catch(serve(actor, ctx, rx)).await.unwrap_or_else(ExitReason::Panic));
        }
        let reason = reason.unwrap_or(ExitReason::Normal);
        let (actor, ctx, rx) = inc.parts();
        // No more messages: senders see `Closed` from here on, queued requests drop their replies.
        rx.close();
        let _ = catch(actor.stopped(reason.duplicate(), ctx)).await;
        inc.finish(reason);
    }
}

enum Next<M> {
    Msg(M),
    Signal(Signal),
    Closed,
}

/// The next thing for the actor: a signal first, then a message; parks on both.
///
/// A named future rather than `poll_fn`: its `poll` is forced inline into the actor's loop.
/// Through `poll_fn` the inliner's choice flips with unrelated changes in the channel, and an
/// out-of-line `PollFn::poll` costs every message (`tell_1t`; docs/notes/performance-figures.md).
struct NextEvent<'a, M> {
    cell: &'a Cell,
    rx: &'a mut MailboxRx<M>,
}

impl<M> Future for NextEvent<'_, M> {
    type Output = Next<M>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Next<M>> {
        let this = self.get_mut();
        if let Some(s) = this.cell.try_signal() {
            return Poll::Ready(Next::Signal(s));
        }
        // Parked on the mailbox only: a signal queued from here on wakes the task through
        // its handle (`Cell::signal`, or `Cell::set_abort` if it came before the handle).
        match this.rx.poll_recv(cx) {
            Poll::Ready(Some(m)) => Poll::Ready(Next::Msg(m)),
            Poll::Ready(None) => Poll::Ready(Next::Closed),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The message loop. Not an `async fn`, for the reason given at `run`.
#[allow(clippy::manual_async_fn)]
fn serve<'a, A: Actor>(
    actor: &'a mut A,
    ctx: &'a mut Context<A>,
    rx: &'a mut MailboxRx<A::Msg>,
) -> impl Future<Output = ExitReason> + 'a {
    async move {
        loop {
            let next = NextEvent { cell: &ctx.cell, rx: &mut *rx }.await;
            match next {
                Next::Msg(m) => actor.handle(m, ctx).await,
                Next::Closed => return ExitReason::Normal,
                Next::Signal(Signal::Stop) => return ExitReason::Shutdown,
                Next::Signal(Signal::Exit(e) | Signal::Dropped(e)) => {
                    if ctx.trap_exit {
                        actor.handle_exit(e, ctx).await;
                    } else if !matches!(e.reason, ExitReason::Normal) {
                        return e.reason;
                    }
                }
                Next::Signal(Signal::Down(d)) => actor.handle_down(d, ctx).await,
                Next::Signal(Signal::Command(_)) => {}
            }
            if let Some(r) = ctx.stop.take() {
                return r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tiny;

    impl Actor for Tiny {
        type Msg = u64;
        async fn handle(&mut self, _: u64, _: &mut Context<Self>) {}
    }

    /// The task of an actor with no state and trivial hooks: the framework's own share of an
    /// actor's task. Each hook's future must be in it once (see `Catch`).
    #[test]
    fn an_actor_task_carries_each_hook_future_once() {
        let (_tx, inc) = incarnation(Tiny, Mailbox::default(), None);
        let size = std::mem::size_of_val(&run(inc, Start::InTask));
        eprintln!("actor task future: {size} bytes");
        assert!(size <= TASK_FUTURE_BOUND, "the actor task's future grew to {size} bytes");
    }

    /// A little above the actor task future's size with the layout `run` describes, so that
    /// any growth fails this test; the sizes of the rejected layouts are in
    /// docs/notes/performance-figures.md, "Actor task size".
    const TASK_FUTURE_BOUND: usize = 248;
}
