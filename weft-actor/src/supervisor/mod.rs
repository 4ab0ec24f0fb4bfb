//! Supervision with Erlang/OTP semantics.
//!
//! # Glossary
//! * **child** — an actor or a sub-supervisor started from a `ChildSpec` (id, factory,
//!   restart type, shutdown). Its **incarnation** is one run of it, with its own `ActorId`.
//! * **strategy** — which children are restarted together: `OneForOne`, `OneForAll`,
//!   `RestForOne`, `Dynamic` (children added at run time).
//! * **restart type** — `Permanent` (always), `Transient` (after an abnormal exit: `Panic`,
//!   `Killed`), `Temporary` (never; removed).
//! * **intensity** — more than `max_restarts` restarts within `period` (default 1 in 5 s, as
//!   OTP) and the supervisor stops all its children and then itself with `Shutdown`. Its own
//!   supervisor sees that exit and applies *its* restart type and intensity: that is how a
//!   crash loop escalates up the tree.
//!
//! # Invariants
//! * A new incarnation of a child never starts before the previous one has fully stopped
//!   (state dropped, watchers told): restarts happen on the child's `Exit` signal, which its
//!   `Incarnation` guard sends after dropping the state, or after awaiting its `JoinHandle`.
//! * Children start in spec order, each after the previous one's `started` hook returned, and
//!   stop in reverse start order, each fully stopped before the next is asked to stop.
//! * A supervisor handles one signal at a time in its own task; children report to it through
//!   its `Cell`'s signal queue, never through a lock it holds.
//! * A supervisor never outlives its shutdown: `Stop` stops all children first; an aborted
//!   supervisor aborts its children.
//! * A restart builds the new incarnation in the dead one's memory when both are on one thread:
//!   the dead task, mailbox and cell are freed (to the thread's arena cache, last in first out
//!   per size class) before the restart allocates, so each new part takes its predecessor's
//!   slot (`a_restart_on_the_supervisors_thread_reuses_the_dead_incarnations_slots`).
//!
//! # Shutdown, step by step
//! 1. `Stop` arrives (from `SupervisorRef::stop`, the parent, or intensity exceeded).
//! 2. For each child, last started first: `BrutalKill` aborts; `Timeout(d)` sends `Stop` and
//!    aborts after `d`; `Infinity` sends `Stop` and waits. Then the child's join handle is
//!    awaited.
//! 3. The supervisor's own `Cell` reports `Shutdown` to its parent, links and monitors.
//!
//! # Rejected alternatives
//! * The supervisor as an ordinary `Actor`: its shutdown must wait for one specific child's
//!   exit while other signals queue, which a `handle` callback cannot do without re-entering
//!   the actor loop. A dedicated loop over the same `Cell` keeps it linkable and supervisable.
//! * Restart limits per child (kameo): a crash loop spread over several children would never
//!   trip; OTP's per-supervisor intensity catches it.
//! * Waiting for a stopped child through its `Exit` signal: other signals would have to be
//!   set aside meanwhile; the join handle gives the same "fully stopped" point directly.

mod run;
mod spec;
#[cfg(test)]
mod tests;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use weft::sync::oneshot;

pub use spec::{Backoff, ChildId, ChildSpec, Restart, Shutdown, Strategy, SupervisorEvent, SupervisorSpec};

use crate::actor::Actor;
use crate::actor_ref::ActorRef;
use crate::cell::{CellRef, Signal};
use crate::exit::ActorId;
use run::Command;

/// One child as `SupervisorRef::which_children` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildInfo {
    /// The child's spec id.
    pub id: String,
    /// The running incarnation, if any.
    pub actor: Option<ActorId>,
    /// How many times this child has been restarted.
    pub restarts: u64,
}

/// A supervisor command failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SupervisorError {
    /// A child with this id exists already.
    AlreadyPresent(String),
    /// The supervisor has stopped.
    Stopped,
}

impl fmt::Display for SupervisorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SupervisorError::AlreadyPresent(id) => write!(f, "child {id:?} already present"),
            SupervisorError::Stopped => f.write_str("supervisor stopped"),
        }
    }
}

impl std::error::Error for SupervisorError {}

/// A handle to a running supervisor.
#[derive(Clone)]
pub struct SupervisorRef {
    pub(crate) cell: CellRef,
}

impl fmt::Debug for SupervisorRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SupervisorRef").field("id", &self.cell.id()).finish()
    }
}

impl SupervisorRef {
    async fn call<R>(&self, make: impl FnOnce(oneshot::Sender<R>) -> Command) -> Option<R> {
        let (tx, rx) = oneshot::channel();
        if !self.cell.signal(Signal::Command(Box::new(make(tx)))) {
            return None;
        }
        rx.await.ok()
    }

    /// The supervisor's id.
    pub fn id(&self) -> ActorId {
        self.cell.id()
    }

    /// The children in start order, with their restart counters. Empty once stopped.
    pub async fn which_children(&self) -> Vec<ChildInfo> {
        self.call(Command::WhichChildren).await.unwrap_or_default()
    }

    /// The running actor child `id`, if it is an `A`.
    pub async fn child<A: Actor>(&self, id: &str) -> Option<ActorRef<A>> {
        let h = self.call(|tx| Command::Child(id.to_string(), tx)).await??;
        h.downcast_ref::<ActorRef<A>>().cloned()
    }

    /// Every running child that is an `A`, in start order, with its id.
    pub async fn children<A: Actor>(&self) -> Vec<(String, ActorRef<A>)> {
        let all = self.call(Command::Children).await.unwrap_or_default();
        all.into_iter().filter_map(|(id, h)| h.downcast_ref::<ActorRef<A>>().cloned().map(|r| (id, r))).collect()
    }

    /// The running sub-supervisor child `id`.
    pub async fn child_supervisor(&self, id: &str) -> Option<SupervisorRef> {
        let h: Arc<dyn Any + Send + Sync> = self.call(|tx| Command::Child(id.to_string(), tx)).await??;
        h.downcast_ref::<SupervisorRef>().cloned()
    }

    /// Adds and starts a child (after the existing ones); returns once its `started` hook ran.
    pub async fn start_child(&self, spec: ChildSpec) -> Result<(), SupervisorError> {
        self.call(|tx| Command::StartChild(spec, tx)).await.unwrap_or(Err(SupervisorError::Stopped))
    }

    /// Stops child `id` per its shutdown spec and removes it. Returns whether it existed.
    pub async fn terminate_child(&self, id: &str) -> bool {
        self.call(|tx| Command::TerminateChild(id.to_string(), tx)).await.unwrap_or(false)
    }

    crate::lifecycle::lifecycle_methods!(
        "supervisor",
        stop: "Asks the supervisor to stop its children (reverse start order) and then itself.",
        kill: "Aborts the supervisor's task, which aborts its children."
    );
}
