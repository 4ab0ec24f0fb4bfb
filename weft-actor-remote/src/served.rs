//! A local actor as other nodes reach it: frames' payloads decoded into its `Msg` and put in
//! its mailbox, never blocking the node's dispatcher.
//!
//! Delivery: `try_send` straight into the mailbox while nothing waits in the overflow queue;
//! when the mailbox is full the message goes to an overflow queue, which a forwarding task
//! drains into the mailbox with `send().await`. Once anything is in overflow, every later
//! message goes there too, so arrival order is kept. The overflow queues of all of a node's
//! actors share one byte budget (`max_queued_bytes`); past it tells are dropped (counted)
//! and asks answered `Overloaded`.
//!
//! Rejected: a bounded overflow per actor (e.g. 1,024 messages): a sender faster than its
//! receiver loses tells under plain load (`weft-lab actors-remote`, 1 KiB tells;
//! docs/notes/performance-figures.md, "Remote actors"), which a user reads as message loss,
//! not overload. Blocking the dispatcher instead
//! would stall answers behind a full mailbox (Zenoh delivers one link's samples in order).

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use weft::sync::mpsc;
use weft_actor::{ActorRef, Reply, TrySendError};

use crate::wire::{self, Reason};
use crate::RemoteActor;

/// An answer on its way: the encoded answer, or why there is none.
pub(crate) type AnswerFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>, Refused>> + Send>>;

/// Why a frame was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The payload is not the actor's type.
    Decode,
    /// Mailbox and overflow queue full.
    Full,
    /// The actor has stopped.
    Closed,
    /// The actor dropped the reply.
    NoReply,
}

/// The type-erased face of a served actor.
pub(crate) trait Inbox: Send + Sync {
    fn tell(&self, payload: &[u8]) -> Result<(), Refused>;
    fn ask(&self, payload: &[u8]) -> Result<AnswerFuture, Refused>;
    /// Resolves when the actor has stopped, with the reason.
    fn stopped(&self) -> Pin<Box<dyn Future<Output = Reason> + Send>>;
    /// `ActorRef::stop`, or `kill`.
    fn stop(&self, kill: bool);
    /// The `ActorRef<A>` (for lookups on the serving node itself).
    fn local(&self) -> &(dyn Any + Send + Sync);
}

pub(crate) struct Typed<A: RemoteActor> {
    actor: ActorRef<A>,
    overflow: mpsc::UnboundedSender<(A::Msg, usize)>,
    /// Messages in the overflow queue or being forwarded from it.
    backlog: Arc<AtomicUsize>,
    /// The node's queued bytes (all actors), and its limit.
    queued: Arc<AtomicUsize>,
    max_queued: usize,
}

impl<A: RemoteActor> Typed<A> {
    /// Wraps `actor`, starting its forwarding task (which ends when the inbox is dropped or
    /// the actor stops).
    pub(crate) fn new(actor: ActorRef<A>, queued: Arc<AtomicUsize>, max_queued: usize) -> Typed<A> {
        let (overflow, mut rx) = mpsc::unbounded_channel::<(A::Msg, usize)>();
        let backlog = Arc::new(AtomicUsize::new(0));
        let (target, count, bytes) = (actor.clone(), backlog.clone(), queued.clone());
        weft::spawn(async move {
            while let Some((msg, size)) = rx.recv().await {
                let sent = target.send(msg).await;
                count.fetch_sub(1, Ordering::AcqRel);
                bytes.fetch_sub(size, Ordering::AcqRel);
                if sent.is_err() {
                    break;
                }
            }
            // The actor stopped: what is still queued goes, and so do its bytes.
            while let Ok((_, size)) = rx.try_recv() {
                bytes.fetch_sub(size, Ordering::AcqRel);
            }
        });
        Typed { actor, overflow, backlog, queued, max_queued }
    }

    fn deliver(&self, msg: A::Msg, size: usize) -> Result<(), Refused> {
        let msg = if self.backlog.load(Ordering::Acquire) == 0 {
            match self.actor.try_send(msg) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Closed(_)) => return Err(Refused::Closed),
                Err(TrySendError::Full(msg)) => msg,
            }
        } else {
            msg
        };
        // Counted with at least 64 bytes each, so empty messages cannot queue without bound.
        let size = size.max(64);
        if self.queued.fetch_add(size, Ordering::AcqRel) + size > self.max_queued {
            self.queued.fetch_sub(size, Ordering::AcqRel);
            return Err(Refused::Full);
        }
        self.backlog.fetch_add(1, Ordering::AcqRel);
        self.overflow.send((msg, size)).map_err(|_| {
            self.backlog.fetch_sub(1, Ordering::AcqRel);
            self.queued.fetch_sub(size, Ordering::AcqRel);
            Refused::Closed
        })
    }
}

pub(crate) fn reason_of(exit: weft_actor::ExitReason) -> Reason {
    use weft_actor::ExitReason as E;
    match &exit {
        E::Normal => Reason::Normal,
        E::Shutdown => Reason::Shutdown,
        E::Killed => Reason::Killed,
        E::Panic(_) => Reason::Panic(exit.panic_message().unwrap_or("(non-string panic payload)").to_string()),
    }
}

impl<A: RemoteActor> Inbox for Typed<A> {
    fn tell(&self, payload: &[u8]) -> Result<(), Refused> {
        let msg: A::Tell = wire::decode_payload(payload).map_err(|_| Refused::Decode)?;
        self.deliver(A::from_tell(msg), payload.len())
    }

    fn ask(&self, payload: &[u8]) -> Result<AnswerFuture, Refused> {
        let req: A::Ask = wire::decode_payload(payload).map_err(|_| Refused::Decode)?;
        let (reply, answer) = Reply::channel();
        self.deliver(A::from_ask(req, reply), payload.len())?;
        Ok(Box::pin(async move {
            let value = answer.await.map_err(|_| Refused::NoReply)?;
            wire::encode_payload(&value).map_err(|_| Refused::NoReply)
        }))
    }

    fn stopped(&self) -> Pin<Box<dyn Future<Output = Reason> + Send>> {
        let actor = self.actor.clone();
        Box::pin(async move { reason_of(actor.wait_stopped().await) })
    }

    fn stop(&self, kill: bool) {
        if kill {
            self.actor.kill()
        } else {
            self.actor.stop()
        }
    }

    fn local(&self) -> &(dyn Any + Send + Sync) {
        &self.actor
    }
}
