//! The actor adapter: the few operations every actor workload is written against, one
//! implementation per peer (`weft_actor.rs`, `tokio_tasks.rs`, `kameo.rs`, `ractor.rs`,
//! `actix.rs`).
//!
//! Every message is a `u64` and every actor's behaviour is the same boxed closure for every
//! peer (`Behavior`), so the closure call costs the same everywhere and the measured
//! difference is the framework's: spawn, mailbox, scheduling, reply channel, supervision.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a behaviour tells its actor after a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// An actor's behaviour: for each message, the reply (used by `ask`, dropped by `tell`) and
/// whether to stop.
pub type Behavior = Box<dyn FnMut(u64) -> (u64, Flow) + Send>;

/// The supervision results a panic workload reports (validated by the caller).
pub trait ActorPeer: Sized + 'static {
    const NAME: &'static str;
    /// Whether an actor that keeps sending itself messages still lets other actors run
    /// (`spawn_storm_busy` needs it; see `actix.rs` for the peer where it does not).
    const FAIR_TO_SELF_SENDERS: bool = true;
    type Addr: Clone + Send + Sync + 'static;

    /// Runs `f` to completion on a fresh runtime: one thread when `threads == 1`, else a
    /// multi-thread runtime with `threads` workers (where the peer has one). By default a
    /// tokio runtime, which kameo's and ractor's actors run on.
    fn block_on<F>(threads: usize, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        <super::tokio_tasks::TokioTasks as ActorPeer>::block_on(threads, f)
    }

    /// Spawns an actor (inside `block_on`, possibly inside another actor's behaviour).
    fn spawn(behavior: Behavior) -> Self::Addr;

    /// Sends and waits for mailbox room if the peer's mailbox is bounded.
    fn tell(addr: &Self::Addr, msg: u64) -> impl Future<Output = ()> + Send;

    /// Sends without waiting (from inside a behaviour); the workloads never fill a mailbox
    /// with it, so a full mailbox is a bug and panics.
    fn tell_now(addr: &Self::Addr, msg: u64);

    /// Request/reply with the peer's own reply mechanism.
    fn ask(addr: &Self::Addr, msg: u64) -> impl Future<Output = u64> + Send;

    /// Spawns a plain task on the peer's runtime (producers, yielders, sleepers of the
    /// smarm rows that are not actors); tokio's by default, as for `block_on`.
    fn spawn_task<F: Future<Output = ()> + Send + 'static>(f: F) {
        tokio::spawn(f);
    }

    /// The runtime's `yield_now`.
    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    /// The runtime's `sleep`.
    fn sleep(d: std::time::Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(d)
    }

    /// `n` supervised actors each panic on their first message; returns how many panic
    /// signals the supervisor saw (`None`: the peer cannot do this, see its module).
    fn panic_signals(n: u64) -> impl Future<Output = Option<u64>> + Send;

    /// `n` supervised actors each panic once, are restarted by their supervisor, and the new
    /// incarnation answers an ask; returns the number of answers from restarted actors.
    fn panic_restarts(n: u64) -> impl Future<Output = Option<u64>> + Send;

    /// The ring written the peer's documented way (`documented.rs`); returns the hops counted.
    /// `None`: not written for this peer.
    fn ring_documented(_actors: u64, _hops: u64) -> impl Future<Output = Option<u64>> + Send {
        async { None }
    }

    /// Skynet over `leaves` leaves, written the peer's documented way (`documented.rs`);
    /// returns the sum. `None`: not written for this peer.
    fn skynet_documented(_leaves: u64) -> impl Future<Output = Option<u64>> + Send {
        async { None }
    }
}

/// Counts to a target and then fires a one-shot, runtime-neutral completion.
#[derive(Clone)]
pub struct Done {
    count: Arc<AtomicU64>,
    target: u64,
    tx: Arc<Mutex<Option<futures_channel::oneshot::Sender<()>>>>,
}

impl Done {
    pub fn new(target: u64) -> (Done, futures_channel::oneshot::Receiver<()>) {
        let (tx, rx) = futures_channel::oneshot::channel();
        (Done { count: Arc::new(AtomicU64::new(0)), target, tx: Arc::new(Mutex::new(Some(tx))) }, rx)
    }

    /// Adds `n`; fires when the total reaches the target.
    pub fn add(&self, n: u64) {
        if self.count.fetch_add(n, Ordering::AcqRel) + n == self.target {
            if let Some(tx) = self.tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
        }
    }

    pub fn get(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }
}
