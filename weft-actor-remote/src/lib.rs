//! weft-actor across processes and hosts, over Zenoh.
//!
//! A [`Node`] is one Zenoh session in one process. Nodes find each other through Zenoh (peer
//! endpoints, a router, or multicast scouting) and exchange frames (`wire`) on one key per
//! node, `weft-actor/inbox/{node}`. A local actor is *served* under a cluster-wide name; any
//! node looks the name up and gets a [`RemoteRef`], with which it tells and asks the actor as
//! it would a local one, and which it can monitor.
//!
//! ```no_run
//! # use weft_actor::{Actor, Context, Reply};
//! # use weft_actor_remote::{Node, NodeConfig, RemoteActor};
//! # use std::time::Duration;
//! struct Counter(u64);
//! enum Msg { Add(u64), Get(Reply<u64>) }
//! impl Actor for Counter {
//!     type Msg = Msg;
//!     async fn handle(&mut self, msg: Msg, _: &mut Context<Self>) {
//!         match msg { Msg::Add(n) => self.0 += n, Msg::Get(r) => { let _ = r.send(self.0); } }
//!     }
//! }
//! impl RemoteActor for Counter {
//!     type Tell = u64;
//!     type Ask = ();
//!     type Answer = u64;
//!     fn from_tell(n: u64) -> Msg { Msg::Add(n) }
//!     fn from_ask((): (), reply: Reply<u64>) -> Msg { Msg::Get(reply) }
//! }
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let a = Node::start(NodeConfig::peer("a").listen("tcp/127.0.0.1:7447")).await?;
//! a.serve("counter", weft_actor::spawn(Counter(0))).await?;
//! // In another process, or on another host:
//! let b = Node::start(NodeConfig::peer("b").connect("tcp/127.0.0.1:7447")).await?;
//! let counter = b.lookup::<Counter>("counter").await?;
//! counter.tell(2).await?;
//! assert_eq!(counter.ask((), Duration::from_secs(1)).await?, 2);
//! let down = b.monitor(&counter);          // resolves once, when the actor or its node is gone
//! # Ok(()) }
//! ```
//!
//! # Glossary
//! * **node** — one process's membership: a Zenoh session plus the liveliness token
//!   `weft-actor/node/{id}`, which Zenoh withdraws when the session closes, the process dies
//!   (the connection closes) or the peer stays silent past its lease.
//! * **serve id** — a node's number for one served actor incarnation; a `RemoteRef` is
//!   (node, serve id), so a restarted actor served again is a new reference, as in Erlang.
//! * **name** — a liveliness token `weft-actor/name/{name}/{node}/{serve id}/{type tag}`:
//!   every node keeps the set it sees (history included) and looks names up there, so a
//!   lookup never returns an actor whose node or registration Zenoh has withdrawn.
//!
//! # Guarantees
//! * **FIFO** between one sender node and one receiving actor (one publisher per pair of
//!   nodes, reliable, blocking congestion control; the receiver delivers in arrival order).
//! * **At most once**: a message is delivered once or not at all. A `tell` to a node known to
//!   be down fails at once (`RemoteError::NodeDown`); one in flight when a node dies is lost
//!   and counted nowhere but there. An `ask` always ends: an answer, a typed error, the node
//!   going down, or its timeout.
//! * **Exactly one notice per monitor**, carrying the reason: the actor's exit (normal,
//!   shutdown, killed, panic with its message), `NoProc` if it was not running when the
//!   monitor arrived, `NoConnection` when its node went down (crash within the lease,
//!   partition, shutdown).
//! * **Hostile input**: a frame that is oversized, of another version, malformed, for an
//!   unknown actor or with a payload of the wrong type is dropped and counted
//!   ([`NodeMetrics`]); it never panics or blocks the node. An unknown actor's ask is answered
//!   `NotFound`, a bad payload's `BadRequest`.
//!
//! # Invariants
//! * One dispatcher task per node reads its inbox; it never waits on an actor: a full mailbox
//!   parks the message in that actor's bounded overflow queue (`served.rs`), so one slow actor
//!   cannot stall the others or an answer another actor waits for.
//! * A pending ask or monitor lives in exactly one table entry; whoever removes it (answer,
//!   timeout, node down, drop) is the only one who completes it.
//!
//! # Rejected alternatives
//! * A network stack of our own (kameo: libp2p; ractor_cluster: TCP + protobuf): Zenoh gives
//!   transports, routing, liveliness and request/reply, and runs on weft through the facade.
//! * Zenoh queries (`get`) for `ask`: a second channel beside the tell publisher would lose
//!   FIFO between a sender's tells and asks; both ride one publisher and answers come back as
//!   frames.
//! * A DHT for names (kameo): entries outlive their node; liveliness tokens do not.

mod config;
pub mod demo;
mod node;
mod remote_ref;
mod served;
mod supervise;
pub mod wire;

pub use config::{Auth, NodeConfig};
pub use node::{Node, NodeMetrics, RegisterError};
pub use remote_ref::{LookupError, RemoteDown, RemoteError, RemoteMonitor, RemoteRef};
pub use supervise::{
    RemoteChild, RemoteSupervisor, RemoteSupervisorEvent, RemoteSupervisorSpec, Restart, Strategy, SupervisorExit,
};
pub use wire::{NodeId, Reason};

use serde::{de::DeserializeOwned, Serialize};
use weft_actor::{Actor, Reply};

/// An actor other nodes can reach: which of its messages travel, and how they become its
/// `Msg`. Both ends must agree on the types (checked at lookup through `type_tag`).
pub trait RemoteActor: Actor {
    /// What other nodes `tell` it.
    type Tell: Serialize + DeserializeOwned + Send + 'static;
    /// What other nodes `ask` it …
    type Ask: Serialize + DeserializeOwned + Send + 'static;
    /// … and its answer.
    type Answer: Serialize + DeserializeOwned + Send + 'static;

    fn from_tell(msg: Self::Tell) -> Self::Msg;
    fn from_ask(req: Self::Ask, reply: Reply<Self::Answer>) -> Self::Msg;

    /// Names the protocol; a lookup with another type fails with `LookupError::WrongType`.
    fn type_tag() -> String {
        format!(
            "{}|{}|{}|{}",
            std::any::type_name::<Self>(),
            std::any::type_name::<Self::Tell>(),
            std::any::type_name::<Self::Ask>(),
            std::any::type_name::<Self::Answer>()
        )
    }
}

/// FNV-1a of a type tag (names carry 64 bits, not the whole string).
pub(crate) fn tag_hash(tag: &str) -> u64 {
    tag.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
