//! `RemoteRef<A>`: an actor served under a name, on this node or another, with `tell`, `ask`
//! and monitors; and the errors they return.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Weak;
use std::task::{Context, Poll};
use std::time::Duration;

use weft::sync::oneshot;
use weft_actor::ActorRef;

use crate::node::Inner;
use crate::wire::{NodeId, Reason};
use crate::RemoteActor;

/// Why a remote `tell` or `ask` failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteError {
    /// The actor's node is down (crashed, partitioned away, shut down), or went down before
    /// answering.
    NodeDown,
    /// Nothing is served under that reference any more (the actor stopped or was unserved).
    NotFound,
    /// No answer within the timeout (the request may still be handled; its answer is dropped).
    Timeout,
    /// The actor dropped the reply without answering (or panicked handling the request).
    NoReply,
    /// A message or answer did not encode or decode as the agreed types.
    Decode,
    /// The actor's inbox on its node was full; the request was dropped there.
    Overloaded,
    /// The message is over the node's `max_message_bytes`.
    TooLarge,
    /// The node refused a spawn (unknown factory, arguments of another type, name taken).
    Refused(String),
    /// This node is shut down, or Zenoh refused the send (its message).
    Transport(String),
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::NodeDown => f.write_str("the actor's node is down"),
            RemoteError::NotFound => f.write_str("no such actor on its node"),
            RemoteError::Timeout => f.write_str("no answer within the timeout"),
            RemoteError::NoReply => f.write_str("the actor dropped the reply"),
            RemoteError::Decode => f.write_str("message or answer does not decode as the agreed type"),
            RemoteError::Overloaded => f.write_str("the actor's inbox is full"),
            RemoteError::TooLarge => f.write_str("message over the size limit"),
            RemoteError::Refused(e) => write!(f, "refused: {e}"),
            RemoteError::Transport(e) => write!(f, "transport: {e}"),
        }
    }
}

impl std::error::Error for RemoteError {}

/// Why a lookup found nothing usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// No live node serves that name.
    NotFound,
    /// The name is served with another actor type (its tag differs).
    WrongType,
    /// Not a valid name (empty, over 200 bytes, or a character other than ASCII letters,
    /// digits and `-_.:`).
    BadName,
    /// The cluster did not answer the query in time.
    Timeout,
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LookupError::NotFound => "no live node serves that name",
            LookupError::WrongType => "the name is served with another actor type",
            LookupError::BadName => "invalid actor name (ASCII letters, digits and -_.: only, 1 to 200 bytes)",
            LookupError::Timeout => "the cluster did not answer the lookup in time",
        })
    }
}

impl std::error::Error for LookupError {}

/// A reference to a served actor incarnation, local or remote; cheap to clone.
pub struct RemoteRef<A: RemoteActor> {
    pub(crate) node: Weak<Inner>,
    pub(crate) target: NodeId,
    pub(crate) serve_id: u64,
    pub(crate) name: String,
    /// Set when the actor is served by this very node: messages skip the network.
    pub(crate) local: Option<ActorRef<A>>,
    pub(crate) _types: PhantomData<fn() -> A>,
}

impl<A: RemoteActor> Clone for RemoteRef<A> {
    fn clone(&self) -> Self {
        RemoteRef {
            node: self.node.clone(),
            target: self.target,
            serve_id: self.serve_id,
            name: self.name.clone(),
            local: self.local.clone(),
            _types: PhantomData,
        }
    }
}

impl<A: RemoteActor> std::fmt::Debug for RemoteRef<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemoteRef({} on {}#{})", self.name, self.target, self.serve_id)
    }
}

impl<A: RemoteActor> RemoteRef<A> {
    /// The node serving the actor.
    pub fn node_id(&self) -> NodeId {
        self.target
    }

    /// The name it was looked up by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The serving node's number for this incarnation (a restart gets a new one).
    pub fn serve_id(&self) -> u64 {
        self.serve_id
    }

    fn inner(&self) -> Result<std::sync::Arc<Inner>, RemoteError> {
        self.node.upgrade().ok_or_else(|| RemoteError::Transport("the node was dropped".into()))
    }

    /// Sends `msg`; returns once it is handed to the transport (local: in the mailbox).
    pub async fn tell(&self, msg: A::Tell) -> Result<(), RemoteError> {
        if let Some(actor) = &self.local {
            return actor.tell(A::from_tell(msg)).await.map_err(|_| RemoteError::NotFound);
        }
        self.inner()?.tell(self.target, self.serve_id, &msg)
    }

    /// Asks the actor to stop (reason `Shutdown`), or aborts it (`kill`: reason `Killed`).
    /// Fire and forget, like a tell.
    pub async fn stop(&self, kill: bool) -> Result<(), RemoteError> {
        if let Some(actor) = &self.local {
            if kill {
                actor.kill()
            } else {
                actor.stop()
            }
            return Ok(());
        }
        self.inner()?.stop_remote(self.target, self.serve_id, kill)
    }

    /// Asks and waits at most `timeout` for the answer.
    pub async fn ask(&self, req: A::Ask, timeout: Duration) -> Result<A::Answer, RemoteError> {
        if let Some(actor) = &self.local {
            return actor.ask_timeout(|r| A::from_ask(req, r), timeout).await.map_err(|e| match e {
                weft_actor::AskError::Closed => RemoteError::NotFound,
                weft_actor::AskError::NoReply => RemoteError::NoReply,
                weft_actor::AskError::Timeout => RemoteError::Timeout,
            });
        }
        self.inner()?.ask::<A::Ask, A::Answer>(self.target, self.serve_id, &req, timeout).await
    }
}

/// What a monitor reports, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteDown {
    pub node: NodeId,
    pub serve_id: u64,
    pub name: String,
    pub reason: Reason,
}

/// A monitor on a remote (or local served) actor: a future that resolves exactly once, with
/// the reason. Dropping it removes the monitor (on the actor's node too).
pub struct RemoteMonitor {
    pub(crate) rx: oneshot::Receiver<RemoteDown>,
    /// What to report if the node itself goes away first.
    pub(crate) target: (NodeId, u64, String),
    pub(crate) node: Weak<Inner>,
    pub(crate) id: u64,
    pub(crate) done: bool,
}

impl Future for RemoteMonitor {
    type Output = RemoteDown;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<RemoteDown> {
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Ready(Ok(down)) => {
                self.done = true;
                Poll::Ready(down)
            }
            // The node dropped its side: it was shut down, so the actor is unreachable.
            Poll::Ready(Err(_)) => {
                self.done = true;
                let (node, serve_id, name) = self.target.clone();
                Poll::Ready(RemoteDown { node, serve_id, name, reason: Reason::NoConnection })
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for RemoteMonitor {
    fn drop(&mut self) {
        if !self.done {
            if let Some(inner) = self.node.upgrade() {
                inner.demonitor(self.id);
            }
        }
    }
}
