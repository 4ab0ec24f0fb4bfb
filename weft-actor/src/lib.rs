//! weft-actor: actors with Erlang/OTP-grade supervision on the weft runtime.
//!
//! An actor is one weft task owning its state, a typed mailbox (a `weft::sync::mpsc`
//! channel, bounded by default) and a `Cell` shared with everyone who refers to it. No
//! stacks, no boxing of messages: spawning an actor costs one task, one channel and one
//! cell, all three in the runtime's task arena when spawned on a runtime (no `malloc`).
//!
//! ```no_run
//! use weft_actor::{spawn, Actor, Context, Reply};
//!
//! struct Counter(u64);
//! enum Msg { Add(u64), Get(Reply<u64>) }
//!
//! impl Actor for Counter {
//!     type Msg = Msg;
//!     async fn handle(&mut self, msg: Msg, _ctx: &mut Context<Self>) {
//!         match msg {
//!             Msg::Add(n) => self.0 += n,
//!             Msg::Get(r) => { let _ = r.send(self.0); }
//!         }
//!     }
//! }
//!
//! # weft::runtime::Runtime::new().unwrap().block_on(async {
//! let counter = spawn(Counter(0));
//! counter.tell(Msg::Add(2)).await.unwrap();
//! assert_eq!(counter.ask(Msg::Get).await.unwrap(), 2);
//! # });
//! ```
//!
//! # Glossary
//! * **mailbox** — the actor's message queue; **signals** (stop, exits of linked actors,
//!   downs of monitored ones, supervisor commands) travel beside it and overtake messages.
//! * **incarnation** — one run of an actor, from `started` to its state being dropped; it has
//!   its own `ActorId`. A supervisor's restart creates a new incarnation from a factory.
//! * **link** — two-way: an abnormal exit of one stops the other unless it traps exits.
//! * **monitor** — one-way: the watcher gets `Down` once, even if the target was already dead.
//!
//! # Invariants
//! * An actor's state is dropped exactly once, on every path (stop, panic, kill, runtime
//!   shutdown), and watchers are told only after it was dropped (`run::Incarnation`).
//! * Messages to one actor are handled one at a time, in the order its mailbox received them.
//! * A stopped actor's mailbox is closed: later sends fail and hand the message back.
//!
//! # Where actors run
//! No placement of its own: an actor is a weft task, so a message wakes its receiver into
//! the sending worker's LIFO slot, and two actors talking (`tell` back and forth, or `ask`
//! from a handler) settle on one worker and hand over without a cross-thread wake (test
//! `asks_between_actors_are_answered_on_the_askers_worker`); a supervisor's children start on
//! its worker's queue, from which idle workers steal under load.
//!
//! Supervision: see the `supervisor` module.

mod actor;
mod actor_ref;
mod cell;
mod exit;
mod lifecycle;
mod names;
mod registry;
mod run;
pub mod supervisor;

pub use actor::{Actor, Context};
pub use actor_ref::{ActorRef, AskError, Mailbox, Reply, DEFAULT_MAILBOX};
pub use exit::{ActorId, Down, Exit, ExitReason};
pub use registry::{lookup, register, unregister, RegisterError};
pub use run::{spawn, spawn_with};
pub use supervisor::{
    Backoff, ChildId, ChildInfo, ChildSpec, Restart, Shutdown, Strategy, SupervisorError, SupervisorEvent,
    SupervisorRef, SupervisorSpec,
};
/// The mailbox errors, which are `weft::sync::mpsc`'s.
pub use weft::sync::mpsc::error::{SendError, SendTimeoutError, TrySendError};
