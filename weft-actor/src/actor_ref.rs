//! `ActorRef<A>`: the handle to send to an actor, its mailbox (a `weft::sync::mpsc` channel,
//! bounded by default) and request/reply (`ask` with a `Reply<R>`).
//!
//! The mailbox is weft's own mpsc channel, not a new queue: its bounded flavor already gives
//! `send` that waits, `try_send` that hands the message back and `send_timeout`, and its
//! fast path is one CAS per send. An `ask` is a `weft::sync::oneshot` carried in the message;
//! when the asker gives up (timeout or drop) its receiver is dropped, so the actor's
//! `Reply::send` fails at once and nothing stays registered anywhere.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use weft::sync::mpsc::{self, error::SendError, error::SendTimeoutError, error::TrySendError};
use weft::sync::oneshot;

use crate::actor::Actor;
use crate::cell::CellRef;
use crate::exit::ActorId;

/// The mailbox capacity `spawn` uses.
pub const DEFAULT_MAILBOX: usize = 64;

/// How an actor's mailbox is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mailbox {
    /// At most this many queued messages; `send` waits for room (back-pressure).
    Bounded(usize),
    /// No limit: `send` never waits. Opt-in, because a slow actor then grows without bound.
    Unbounded,
}

impl Default for Mailbox {
    fn default() -> Self {
        Mailbox::Bounded(DEFAULT_MAILBOX)
    }
}

pub(crate) enum MailboxTx<M> {
    Bounded(mpsc::Sender<M>),
    Unbounded(mpsc::UnboundedSender<M>),
}

pub(crate) enum MailboxWeak<M> {
    Bounded(mpsc::WeakSender<M>),
    Unbounded(mpsc::WeakUnboundedSender<M>),
}

pub(crate) enum MailboxRx<M> {
    Bounded(mpsc::Receiver<M>),
    Unbounded(mpsc::UnboundedReceiver<M>),
}

impl<M> MailboxWeak<M> {
    pub(crate) fn upgrade(&self) -> Option<MailboxTx<M>> {
        match self {
            MailboxWeak::Bounded(w) => w.upgrade().map(MailboxTx::Bounded),
            MailboxWeak::Unbounded(w) => w.upgrade().map(MailboxTx::Unbounded),
        }
    }
}

impl<M> MailboxRx<M> {
    // Thin wrappers over the channel's own calls: `#[inline]` keeps LLVM from leaving them out
    // of line after unrelated changes (an out-of-line `try_send` costs every `ping_pong`
    // message).
    #[inline]
    pub(crate) fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<M>> {
        match self {
            MailboxRx::Bounded(rx) => rx.poll_recv(cx),
            MailboxRx::Unbounded(rx) => rx.poll_recv(cx),
        }
    }

    pub(crate) fn close(&mut self) {
        match self {
            MailboxRx::Bounded(rx) => rx.close(),
            MailboxRx::Unbounded(rx) => rx.close(),
        }
    }
}

pub(crate) fn mailbox<M>(kind: Mailbox) -> (MailboxTx<M>, MailboxWeak<M>, MailboxRx<M>) {
    match kind {
        Mailbox::Bounded(n) => {
            let (tx, rx) = mpsc::channel(n);
            let weak = tx.downgrade();
            (MailboxTx::Bounded(tx), MailboxWeak::Bounded(weak), MailboxRx::Bounded(rx))
        }
        Mailbox::Unbounded => {
            let (tx, rx) = mpsc::unbounded_channel();
            let weak = tx.downgrade();
            (MailboxTx::Unbounded(tx), MailboxWeak::Unbounded(weak), MailboxRx::Unbounded(rx))
        }
    }
}

/// A handle to send messages to an actor. Cheap to clone. When every `ActorRef` to an actor
/// is dropped and its mailbox is empty, the actor stops with `ExitReason::Normal`.
pub struct ActorRef<A: Actor> {
    pub(crate) tx: MailboxTx<A::Msg>,
    pub(crate) cell: CellRef,
}

impl<A: Actor> Clone for ActorRef<A> {
    fn clone(&self) -> Self {
        let tx = match &self.tx {
            MailboxTx::Bounded(t) => MailboxTx::Bounded(t.clone()),
            MailboxTx::Unbounded(t) => MailboxTx::Unbounded(t.clone()),
        };
        ActorRef { tx, cell: self.cell.clone() }
    }
}

impl<A: Actor> fmt::Debug for ActorRef<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActorRef").field("id", &self.cell.id()).finish()
    }
}

/// Why an `ask` got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskError {
    /// The actor had stopped (or stopped before handling the request).
    Closed,
    /// The actor dropped the `Reply` without answering (also when it panicked while
    /// handling the request).
    NoReply,
    /// No answer within the timeout; the request may still be handled, but its reply is
    /// discarded.
    Timeout,
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AskError::Closed => "actor stopped",
            AskError::NoReply => "actor dropped the reply",
            AskError::Timeout => "ask timed out",
        })
    }
}

impl std::error::Error for AskError {}

/// The answer slot of a request; send the answer with `Reply::send`.
pub struct Reply<R>(oneshot::Sender<R>);

impl<R> Reply<R> {
    /// A reply slot whose answer goes to the returned receiver rather than to an `ask` here:
    /// for a request that came from elsewhere and is answered there (weft-actor-remote hands
    /// a remote node's `ask` to the actor this way and sends the answer back over the network).
    pub fn channel() -> (Reply<R>, oneshot::Receiver<R>) {
        let (tx, rx) = oneshot::channel();
        (Reply(tx), rx)
    }

    /// Answers the request. Fails, handing the value back, when the asker has gone (timed
    /// out or dropped its future).
    pub fn send(self, value: R) -> Result<(), R> {
        self.0.send(value)
    }

    /// Whether the asker has gone.
    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}

impl<R> fmt::Debug for Reply<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reply")
    }
}

pin_project_lite::pin_project! {
    /// `ActorRef::send`'s future: the bounded channel's, or an unbounded send done when first
    /// polled (futures do nothing until then).
    #[project = SendProj]
    enum SendFuture<'a, B, M> {
        Bounded { #[pin] fut: B },
        Unbounded { tx: &'a mpsc::UnboundedSender<M>, msg: Option<M> },
    }
}

impl<B: Future<Output = Result<(), SendError<M>>>, M> Future for SendFuture<'_, B, M> {
    type Output = Result<(), SendError<M>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            SendProj::Bounded { fut } => fut.poll(cx),
            SendProj::Unbounded { tx, msg } => {
                Poll::Ready(tx.send(msg.take().expect("ActorRef::send's future polled after it completed")))
            }
        }
    }
}

impl<A: Actor> ActorRef<A> {
    /// The id of the actor incarnation this refers to.
    pub fn id(&self) -> ActorId {
        self.cell.id()
    }

    /// Sends a message, waiting for mailbox room if it is full. Fails with the message back if
    /// the actor has stopped.
    #[inline]
    pub fn send(&self, msg: A::Msg) -> impl Future<Output = Result<(), SendError<A::Msg>>> + '_ {
        // The mailbox's own send future (or, unbounded, a send on first poll), not an `async fn`
        // around it: each such layer over the channel's `send` costs every `tell` (`weft-lab
        // actors --filter =tell_1t`). The channel's `send` as a hand-written future as well
        // gains too little to be worth its 40 lines (docs/notes/performance-figures.md).
        match &self.tx {
            MailboxTx::Bounded(t) => SendFuture::Bounded { fut: t.send(msg) },
            MailboxTx::Unbounded(tx) => SendFuture::Unbounded { tx, msg: Some(msg) },
        }
    }

    /// `send` under its actor name: fire and forget (only waits for mailbox room).
    #[inline]
    pub fn tell(&self, msg: A::Msg) -> impl Future<Output = Result<(), SendError<A::Msg>>> + '_ {
        // `send`'s own future: one state machine less to build, poll, move the message
        // through and drop on every tell (see `send`).
        self.send(msg)
    }

    /// Sends without waiting: `TrySendError::Full(msg)` when the mailbox is full,
    /// `TrySendError::Closed(msg)` when the actor has stopped.
    #[inline]
    pub fn try_send(&self, msg: A::Msg) -> Result<(), TrySendError<A::Msg>> {
        match &self.tx {
            MailboxTx::Bounded(t) => t.try_send(msg),
            MailboxTx::Unbounded(t) => t.send(msg).map_err(|e| TrySendError::Closed(e.0)),
        }
    }

    /// Sends, waiting at most `timeout` for mailbox room.
    pub async fn send_timeout(&self, msg: A::Msg, timeout: Duration) -> Result<(), SendTimeoutError<A::Msg>> {
        match &self.tx {
            MailboxTx::Bounded(t) => t.send_timeout(msg, timeout).await,
            MailboxTx::Unbounded(t) => t.send(msg).map_err(|e| SendTimeoutError::Closed(e.0)),
        }
    }

    /// Sends the request `make(reply)` and waits for the answer.
    pub async fn ask<R, F>(&self, make: F) -> Result<R, AskError>
    where
        F: FnOnce(Reply<R>) -> A::Msg,
    {
        let (tx, rx) = oneshot::channel();
        self.send(make(Reply(tx))).await.map_err(|_| AskError::Closed)?;
        rx.await.map_err(|_| if self.cell.is_alive() { AskError::NoReply } else { AskError::Closed })
    }

    /// `ask` with a deadline covering both the wait for mailbox room and the answer. On
    /// timeout the reply channel is dropped: the actor's `Reply::send` then fails at once.
    pub async fn ask_timeout<R, F>(&self, make: F, timeout: Duration) -> Result<R, AskError>
    where
        F: FnOnce(Reply<R>) -> A::Msg,
    {
        match weft::time::timeout(timeout, self.ask(make)).await {
            Ok(r) => r,
            Err(_) => Err(AskError::Timeout),
        }
    }

    crate::lifecycle::lifecycle_methods!(
        "actor",
        stop: "Asks the actor to stop (reason `Shutdown`) once it has finished its current message. Signals overtake queued messages.",
        kill: "Aborts the actor's task now (reason `Killed`; the `stopped` hook does not run)."
    );
}
