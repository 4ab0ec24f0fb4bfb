//! The `Actor` trait and the `Context` an actor's hooks receive.
//!
//! One associated message type per actor (usually an enum): messages are moved, never boxed
//! or type-erased, so a `tell` costs one channel send. Requests that expect an answer carry a
//! `Reply<R>` (see `ActorRef::ask`). Hooks are `async` and return `Send` futures because an
//! actor is one weft task that may move between worker threads.

use std::future::Future;

use crate::actor_ref::{ActorRef, MailboxWeak};
use crate::cell::{Cell, CellRef};
use crate::exit::{ActorId, Down, Exit, ExitReason};

/// An actor: private state plus a `handle` for each message, run as one weft task.
pub trait Actor: Send + Sized + 'static {
    /// The messages this actor receives.
    type Msg: Send + 'static;

    /// Runs once before the first message. A supervisor waits for it before starting the next
    /// child (as OTP's `init/1`). A panic here stops the actor with `ExitReason::Panic`.
    ///
    /// For a supervised child this hook runs on its supervisor's task, just before the
    /// child's own task is spawned (the supervisor has to wait for it anyway; running it in
    /// place saves two task hops per start). Task-locals and `weft::task::id()` seen here are
    /// therefore the supervisor's; everything reachable through `ctx` is the child's.
    fn started(&mut self, ctx: &mut Context<Self>) -> impl Future<Output = ()> + Send {
        let _ = ctx;
        async {}
    }

    /// Handles one message. Messages are handled one at a time, in mailbox order.
    fn handle(&mut self, msg: Self::Msg, ctx: &mut Context<Self>) -> impl Future<Output = ()> + Send;

    /// A linked actor stopped; called only while `ctx.trap_exit(true)` is in effect.
    fn handle_exit(&mut self, exit: Exit, ctx: &mut Context<Self>) -> impl Future<Output = ()> + Send {
        let _ = (exit, ctx);
        async {}
    }

    /// A monitored actor stopped.
    fn handle_down(&mut self, down: Down, ctx: &mut Context<Self>) -> impl Future<Output = ()> + Send {
        let _ = (down, ctx);
        async {}
    }

    /// Runs once when the actor stops, unless its task was aborted (`ActorRef::kill`, a
    /// timed-out or brutal shutdown, runtime shutdown: an aborted task runs no more code of
    /// its own); the state is dropped right after. `reason` is a copy (a panic payload
    /// becomes its message as a `String`): the original goes to the supervisor. It is passed
    /// by value because `ExitReason` is not `Sync` and the hook's future must be `Send`.
    fn stopped(&mut self, reason: ExitReason, ctx: &mut Context<Self>) -> impl Future<Output = ()> + Send {
        let _ = (reason, ctx);
        async {}
    }
}

/// What an actor's hooks may do to the actor itself.
pub struct Context<A: Actor> {
    pub(crate) cell: CellRef,
    pub(crate) weak: MailboxWeak<A::Msg>,
    pub(crate) stop: Option<ExitReason>,
    pub(crate) trap_exit: bool,
}

impl<A: Actor> Context<A> {
    /// This incarnation's id.
    pub fn id(&self) -> ActorId {
        self.cell.id()
    }

    /// A reference to this actor, or `None` once every outside `ActorRef` has been dropped
    /// (the context holds only a weak one, so that dropping all refs stops the actor).
    pub fn actor_ref(&self) -> Option<ActorRef<A>> {
        self.weak.upgrade().map(|tx| ActorRef { tx, cell: self.cell.clone() })
    }

    /// Stops the actor with `ExitReason::Normal` after the current hook returns.
    pub fn stop(&mut self) {
        self.stop = Some(ExitReason::Normal);
    }

    /// Stops the actor with `reason` after the current hook returns.
    pub fn stop_with(&mut self, reason: ExitReason) {
        self.stop = Some(reason);
    }

    /// When `true`, exits of linked actors arrive as `handle_exit` calls instead of stopping
    /// this actor (Erlang's `process_flag(trap_exit, true)`).
    pub fn trap_exit(&mut self, trap: bool) {
        self.trap_exit = trap;
    }

    /// Links this actor with `other`, both ways: when either stops abnormally the other stops
    /// with the same reason unless it traps exits. Linking to a dead actor delivers its exit
    /// at once.
    pub fn link<B: Actor>(&self, other: &ActorRef<B>) {
        Cell::link(&self.cell, &other.cell);
    }

    /// Removes a link set up by `link` (either side may call it).
    pub fn unlink<B: Actor>(&self, other: &ActorRef<B>) {
        Cell::unlink(&self.cell, &other.cell);
    }

    /// Monitors `other`: one `handle_down` call when it stops, at once if it already has.
    pub fn monitor<B: Actor>(&self, other: &ActorRef<B>) {
        Cell::monitor(&self.cell, &other.cell);
    }
}
