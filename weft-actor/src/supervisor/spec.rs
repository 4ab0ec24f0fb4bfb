//! What a supervisor is told to do: `Strategy`, `Restart`, `Shutdown`, `Backoff`, the
//! `ChildSpec` (id, factory, restart type, shutdown) and `SupervisorSpec`.
//!
//! A child spec holds a factory closure, not an actor: every (re)start builds a fresh state,
//! so a restarted child never sees the state its crashed predecessor left behind. The factory
//! is type-erased into `StartFn` so one supervisor can hold children of different actor
//! types and sub-supervisors.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use weft::sync::oneshot;
use weft::task::JoinHandle;

use crate::actor::Actor;
use crate::actor_ref::Mailbox;
use crate::cell::CellRef;
use crate::exit::ExitReason;

/// Which children a supervisor restarts when one of them must be restarted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Only the child that stopped.
    OneForOne,
    /// All children: the others are stopped (reverse start order), then all are started again.
    OneForAll,
    /// The child that stopped and every child started after it.
    RestForOne,
    /// Like `OneForOne`, for children added at run time with `SupervisorRef::start_child`
    /// (OTP's `simple_one_for_one`): children that will not be restarted are removed.
    Dynamic,
}

/// When a child is restarted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// Always.
    Permanent,
    /// Only after an abnormal exit (`Panic` or `Killed`; not `Normal` or `Shutdown`).
    Transient,
    /// Never; the child is removed when it stops.
    Temporary,
}

/// How a supervisor stops a child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    /// Abort the child's task at once (its `stopped` hook does not run).
    BrutalKill,
    /// Ask it to stop, and abort it if it has not stopped within the duration.
    Timeout(Duration),
    /// Ask it to stop and wait as long as it takes (the default for sub-supervisors).
    Infinity,
}

/// Delay before a restart: `min · 2^k` for the child's `k`-th consecutive restart, capped at
/// `max`, plus up to `jitter` (a fraction, 0.0–1.0) of that delay at random.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// Delay of the first restart.
    pub min: Duration,
    /// Largest delay.
    pub max: Duration,
    /// Random extra, as a fraction of the delay.
    pub jitter: f64,
}

impl Backoff {
    /// The delay before restart number `attempt` (0-based), with `random` in `0.0..1.0`.
    pub fn delay(&self, attempt: u32, random: f64) -> Duration {
        let base = self.min.saturating_mul(1u32 << attempt.min(31)).min(self.max);
        base + base.mul_f64(self.jitter.clamp(0.0, 1.0) * random.clamp(0.0, 1.0))
    }
}

/// A started child as its supervisor holds it.
pub(crate) struct Started {
    pub(crate) cell: CellRef,
    pub(crate) join: JoinHandle<()>,
    /// An `ActorRef<A>` or a `SupervisorRef`, for `SupervisorRef::child`.
    pub(crate) handle: Arc<dyn Any + Send + Sync>,
    /// For a sub-supervisor: completes when it has started its children. (An actor child's
    /// `started` hook has already returned when `Started` is produced.)
    pub(crate) ready: Option<oneshot::Receiver<()>>,
}

/// Starts one incarnation of a child under the given parent cell.
pub(crate) type StartFn = Arc<dyn Fn(CellRef) -> Pin<Box<dyn Future<Output = Started> + Send>> + Send + Sync>;

/// A child's id within its supervisor. A `&'static str` id (the usual case: one literal per
/// child in a spec) is borrowed, so building a spec and cloning it (every restart of a
/// sub-supervisor clones its spec, children included) copies no string; a `String` id (e.g.
/// one per dynamically started child) is owned.
pub type ChildId = Cow<'static, str>;

/// One child of a supervisor.
#[derive(Clone)]
pub struct ChildSpec {
    pub(crate) id: ChildId,
    pub(crate) restart: Restart,
    pub(crate) shutdown: Shutdown,
    pub(crate) start: StartFn,
}

impl fmt::Debug for ChildSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildSpec")
            .field("id", &self.id)
            .field("restart", &self.restart)
            .field("shutdown", &self.shutdown)
            .finish()
    }
}

impl ChildSpec {
    /// An actor child built by `factory` at every (re)start; `Permanent`, stopped with a 5 s
    /// timeout, default mailbox.
    pub fn new<A, F>(id: impl Into<ChildId>, factory: F) -> ChildSpec
    where
        A: Actor,
        F: Fn() -> A + Send + Sync + 'static,
    {
        ChildSpec::with_mailbox(id, Mailbox::default(), factory)
    }

    /// `new` with the given mailbox kind.
    pub fn with_mailbox<A, F>(id: impl Into<ChildId>, mailbox: Mailbox, factory: F) -> ChildSpec
    where
        A: Actor,
        F: Fn() -> A + Send + Sync + 'static,
    {
        ChildSpec::spawned_on(id, mailbox, None, factory)
    }

    /// `with_mailbox`, spawning every incarnation on `on` (the current runtime when `None`).
    /// Tests use it to put a child on a runtime of its own and shut that runtime down.
    pub(crate) fn spawned_on<A, F>(
        id: impl Into<ChildId>,
        mailbox: Mailbox,
        on: Option<weft::runtime::Handle>,
        factory: F,
    ) -> ChildSpec
    where
        A: Actor,
        F: Fn() -> A + Send + Sync + 'static,
    {
        let start: StartFn = Arc::new(move |parent| {
            let (actor, on) = (factory(), on.clone());
            Box::pin(async move {
                let (r, join) = crate::run::spawn_supervised(actor, mailbox, parent, on.as_ref()).await;
                Started { cell: r.cell.clone(), join, handle: Arc::new(r), ready: None }
            })
        });
        ChildSpec {
            id: id.into(),
            restart: Restart::Permanent,
            shutdown: Shutdown::Timeout(Duration::from_secs(5)),
            start,
        }
    }

    /// A sub-supervisor started from `spec` at every (re)start; `Permanent`, `Shutdown::Infinity`.
    pub fn supervisor(id: impl Into<ChildId>, spec: SupervisorSpec) -> ChildSpec {
        let start: StartFn = Arc::new(move |parent| {
            let (tx, rx) = oneshot::channel();
            let sup = super::run::spawn_supervisor(spec.clone(), Some(parent), Some(tx));
            Box::pin(std::future::ready(Started {
                cell: sup.0.cell.clone(),
                join: sup.1,
                handle: Arc::new(sup.0),
                ready: Some(rx),
            })) as Pin<Box<dyn Future<Output = Started> + Send>>
        });
        ChildSpec { id: id.into(), restart: Restart::Permanent, shutdown: Shutdown::Infinity, start }
    }

    /// Sets the restart type.
    pub fn restart(mut self, restart: Restart) -> ChildSpec {
        self.restart = restart;
        self
    }

    /// Sets how the child is stopped.
    pub fn shutdown(mut self, shutdown: Shutdown) -> ChildSpec {
        self.shutdown = shutdown;
        self
    }

    /// The child's id within its supervisor.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// What a supervisor reports through `SupervisorSpec::on_event`.
#[derive(Debug)]
pub enum SupervisorEvent<'a> {
    /// A child stopped by itself (not because the supervisor stopped it).
    ChildExited {
        /// Child id.
        child: &'a str,
        /// Why.
        reason: &'a ExitReason,
    },
    /// A child was started again; `restarts` counts this child's restarts so far.
    ChildRestarted {
        /// Child id.
        child: &'a str,
        /// Restarts of this child so far, this one included.
        restarts: u64,
    },
    /// More than `max_restarts` within `period`: the supervisor stops all children and itself.
    IntensityExceeded,
}

pub(crate) type EventFn = Arc<dyn Fn(&SupervisorEvent<'_>) + Send + Sync>;

/// A supervisor's configuration: strategy, restart intensity, optional backoff, children.
#[derive(Clone)]
pub struct SupervisorSpec {
    pub(crate) strategy: Strategy,
    pub(crate) max_restarts: u32,
    pub(crate) period: Duration,
    pub(crate) backoff: Option<Backoff>,
    pub(crate) children: Vec<ChildSpec>,
    pub(crate) on_event: Option<EventFn>,
}

impl SupervisorSpec {
    /// A supervisor with OTP's default intensity: at most 1 restart in 5 seconds.
    pub fn new(strategy: Strategy) -> SupervisorSpec {
        SupervisorSpec {
            strategy,
            max_restarts: 1,
            period: Duration::from_secs(5),
            backoff: None,
            children: Vec::new(),
            on_event: None,
        }
    }

    /// More than `max_restarts` restarts within `period` stops the supervisor (escalation).
    pub fn intensity(mut self, max_restarts: u32, period: Duration) -> SupervisorSpec {
        self.max_restarts = max_restarts;
        self.period = period;
        self
    }

    /// Waits before each restart (the supervisor handles nothing else meanwhile).
    pub fn backoff(mut self, backoff: Backoff) -> SupervisorSpec {
        self.backoff = Some(backoff);
        self
    }

    /// Adds a child; children start in the order they are added.
    pub fn child(mut self, child: ChildSpec) -> SupervisorSpec {
        self.children.push(child);
        self
    }

    /// Calls `f` on every supervisor event (from the supervisor's task; keep it short).
    pub fn on_event<F: Fn(&SupervisorEvent<'_>) + Send + Sync + 'static>(mut self, f: F) -> SupervisorSpec {
        self.on_event = Some(Arc::new(f));
        self
    }
}
