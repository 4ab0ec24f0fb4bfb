//! The actor task: `started`, then one message or signal at a time, then `stopped`; and the
//! `Incarnation` guard that makes "the state is dropped, then the watchers are told" hold on
//! every path out of the task — normal return, panic, abort and runtime shutdown.
//!
//! Panics are caught inside the task (`catch`), not turned into a `JoinError`: the task then
//! still owns the state and can run `stopped` and report `ExitReason::Panic` with the
//! original payload to its supervisor directly, with no join handle in between.

use std::any::Any;
use std::future::{poll_fn, Future};
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use weft::sync::oneshot;
use weft::task::JoinHandle;

use crate::actor::{Actor, Context};
use crate::actor_ref::{mailbox, ActorRef, Mailbox, MailboxRx};
use crate::cell::{Cell, Signal};
use crate::exit::ExitReason;

/// Spawns `actor` with the given mailbox. Must be called inside a weft runtime.
pub fn spawn<A: Actor>(actor: A) -> ActorRef<A> {
    spawn_with(actor, Mailbox::default())
}

/// Spawns `actor` with a mailbox of the given kind. Must be called inside a weft runtime.
pub fn spawn_with<A: Actor>(actor: A, mailbox: Mailbox) -> ActorRef<A> {
    spawn_inner(actor, mailbox, None, None, None).0
}

/// Polls `f`, turning a panic into `Err(payload)`.
pub(crate) async fn catch<F: Future>(f: F) -> Result<F::Output, Box<dyn Any + Send>> {
    let mut f = pin!(f);
    poll_fn(|cx| match std::panic::catch_unwind(AssertUnwindSafe(|| f.as_mut().poll(cx))) {
        Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(payload) => Poll::Ready(Err(payload)),
    })
    .await
}

/// Owns an actor's state and mailbox for the life of its task. Dropping it drops both and
/// then reports the exit: `reason` when the task finished, `Killed` when it was aborted or
/// dropped by runtime shutdown.
struct Incarnation<A: Actor> {
    actor: Option<A>,
    rx: Option<MailboxRx<A::Msg>>,
    cell: Arc<Cell>,
    reason: Option<ExitReason>,
}

impl<A: Actor> Drop for Incarnation<A> {
    fn drop(&mut self) {
        drop(self.rx.take());
        drop(self.actor.take());
        match self.reason.take() {
            Some(r) => self.cell.exit(r),
            None => self.cell.exit_dropped(),
        }
    }
}

pub(crate) fn spawn_inner<A: Actor>(
    actor: A,
    kind: Mailbox,
    parent: Option<Arc<Cell>>,
    started: Option<oneshot::Sender<()>>,
    on: Option<&weft::runtime::Handle>,
) -> (ActorRef<A>, JoinHandle<()>) {
    let (tx, weak, rx) = mailbox(kind);
    let cell = Cell::new(parent);
    let ctx = Context { cell: cell.clone(), weak, stop: None, trap_exit: false };
    let inc = Incarnation { actor: Some(actor), rx: Some(rx), cell: cell.clone(), reason: None };
    let join = match on {
        Some(h) => h.spawn(run(inc, ctx, started)),
        None => weft::spawn(run(inc, ctx, started)),
    };
    cell.set_abort(join.abort_handle());
    (ActorRef { tx, cell }, join)
}

async fn run<A: Actor>(mut inc: Incarnation<A>, mut ctx: Context<A>, started: Option<oneshot::Sender<()>>) {
    let (Some(actor), Some(rx)) = (inc.actor.as_mut(), inc.rx.as_mut()) else {
        unreachable!("an incarnation starts with its state and mailbox")
    };
    let mut reason = match catch(actor.started(&mut ctx)).await {
        Ok(()) => ctx.stop.take(),
        Err(p) => Some(ExitReason::Panic(p)),
    };
    if let Some(tx) = started {
        let _ = tx.send(());
    }
    if reason.is_none() {
        reason = Some(catch(serve(actor, &mut ctx, rx)).await.unwrap_or_else(ExitReason::Panic));
    }
    let reason = reason.unwrap_or(ExitReason::Normal);
    // No more messages: senders see `Closed` from here on, queued requests drop their replies.
    rx.close();
    let _ = catch(actor.stopped(reason.duplicate(), &mut ctx)).await;
    inc.reason = Some(reason);
}

enum Next<M> {
    Msg(M),
    Signal(Signal),
    Closed,
}

async fn serve<A: Actor>(actor: &mut A, ctx: &mut Context<A>, rx: &mut MailboxRx<A::Msg>) -> ExitReason {
    let cell = ctx.cell.clone();
    loop {
        let next = poll_fn(|cx| {
            if let Some(s) = cell.try_signal() {
                return Poll::Ready(Next::Signal(s));
            }
            match rx.poll_recv(cx) {
                Poll::Ready(Some(m)) => return Poll::Ready(Next::Msg(m)),
                Poll::Ready(None) => return Poll::Ready(Next::Closed),
                Poll::Pending => {}
            }
            cell.poll_signal(cx).map(Next::Signal)
        })
        .await;
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
