//! Supervision across nodes: a supervisor on one node places children on others (by factory
//! name and arguments, `Node::register_factory`) and restarts them under weft-actor's
//! strategies and restart intensity, on the same node when only the child died, on the next
//! live node of its placement when its node did. Each restart serves the child under the same
//! name (taking the name over), so lookups resolve to the new incarnation.
//!
//! The supervisor is a task on its node, holding one monitor per running child. A notice for
//! an incarnation it already replaced or stopped is ignored (serve ids tell incarnations
//! apart). More than `max_restarts` restarts within `period` stops every child and ends the
//! supervisor (`Escalated`), as a local supervisor escalates to its parent.
//!
//! Not here (yet): backoff between restarts and nested remote supervisors.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::Serialize;
use weft::sync::{mpsc, oneshot};
pub use weft_actor::{Restart, Strategy};

use crate::node::Node;
use crate::remote_ref::{RemoteDown, RemoteError};
use crate::wire::{self, NodeId, Reason};

/// How long one placement attempt may take before the next node is tried.
const SPAWN_TIMEOUT: Duration = Duration::from_secs(5);

/// One child: where it may run, how it is made, when it is restarted.
#[derive(Debug, Clone)]
pub struct RemoteChild {
    name: String,
    factory: String,
    args: Vec<u8>,
    restart: Restart,
    nodes: Vec<NodeId>,
}

impl RemoteChild {
    /// A permanent child served as `name`, made by factory `factory` from `args`, placed on any
    /// live node (lowest id first) unless `on` says otherwise.
    pub fn new<Args: Serialize>(name: &str, factory: &str, args: &Args) -> RemoteChild {
        RemoteChild {
            name: name.to_string(),
            factory: factory.to_string(),
            args: wire::encode_payload(args).expect("child arguments must encode"),
            restart: Restart::Permanent,
            nodes: Vec::new(),
        }
    }

    pub fn restart(mut self, restart: Restart) -> RemoteChild {
        self.restart = restart;
        self
    }

    /// Placement preference: the first live node of `nodes`; if none is live, any live node.
    pub fn on(mut self, nodes: &[NodeId]) -> RemoteChild {
        self.nodes = nodes.to_vec();
        self
    }
}

/// A remote supervisor's configuration (`Strategy::Dynamic` is treated as `OneForOne`).
#[derive(Debug, Clone)]
pub struct RemoteSupervisorSpec {
    strategy: Strategy,
    max_restarts: u32,
    period: Duration,
    children: Vec<RemoteChild>,
}

impl RemoteSupervisorSpec {
    /// OTP's default intensity: at most 1 restart in 5 seconds.
    pub fn new(strategy: Strategy) -> RemoteSupervisorSpec {
        RemoteSupervisorSpec { strategy, max_restarts: 1, period: Duration::from_secs(5), children: Vec::new() }
    }

    pub fn intensity(mut self, max_restarts: u32, period: Duration) -> RemoteSupervisorSpec {
        self.max_restarts = max_restarts;
        self.period = period;
        self
    }

    pub fn child(mut self, child: RemoteChild) -> RemoteSupervisorSpec {
        self.children.push(child);
        self
    }
}

/// What a remote supervisor did (its `events()` stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteSupervisorEvent {
    Started {
        child: String,
        node: NodeId,
        serve_id: u64,
    },
    Exited {
        child: String,
        node: NodeId,
        reason: Reason,
    },
    Restarted {
        child: String,
        node: NodeId,
        serve_id: u64,
    },
    /// Too many restarts: every child was stopped and the supervisor ended.
    Escalated,
}

/// Why a remote supervisor ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SupervisorExit {
    /// `stop()` was called.
    Stopped,
    /// Restart intensity exceeded.
    Escalated,
    /// A child could not be placed on any live node (its last error).
    Unplaceable(String, RemoteError),
}

/// A running remote supervisor.
pub struct RemoteSupervisor {
    stop: Option<oneshot::Sender<()>>,
    done: weft::task::JoinHandle<SupervisorExit>,
    events: mpsc::UnboundedReceiver<RemoteSupervisorEvent>,
}

impl RemoteSupervisor {
    /// The next event (`None` once the supervisor has ended and all were read).
    pub async fn next_event(&mut self) -> Option<RemoteSupervisorEvent> {
        self.events.recv().await
    }

    /// Stops every child and the supervisor.
    pub async fn stop(mut self) -> SupervisorExit {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.done.await.unwrap_or(SupervisorExit::Stopped)
    }

    /// Waits for the supervisor to end on its own (escalation, or an unplaceable child).
    pub async fn wait(self) -> SupervisorExit {
        let RemoteSupervisor { stop, done, .. } = self;
        let exit = done.await.unwrap_or(SupervisorExit::Stopped);
        drop(stop);
        exit
    }
}

/// A running child: where, which incarnation, and its monitor's forwarding task.
struct Running {
    node: NodeId,
    serve_id: u64,
    watch: weft::task::JoinHandle<()>,
}

struct Sup {
    node: Node,
    spec: RemoteSupervisorSpec,
    running: Vec<Option<Running>>,
    downs: mpsc::UnboundedSender<(usize, u64, RemoteDown)>,
    events: mpsc::UnboundedSender<RemoteSupervisorEvent>,
    restarts: VecDeque<Instant>,
}

impl Node {
    /// Starts a supervisor on this node for `spec`'s children (started in order, each placed
    /// on its first live node).
    pub fn supervise(&self, spec: RemoteSupervisorSpec) -> RemoteSupervisor {
        let (stop_tx, stop_rx) = oneshot::channel();
        let (events, events_rx) = mpsc::unbounded_channel();
        let (downs, downs_rx) = mpsc::unbounded_channel();
        let n = spec.children.len();
        let sup = Sup {
            node: self.clone(),
            spec,
            running: (0..n).map(|_| None).collect(),
            downs,
            events,
            restarts: VecDeque::new(),
        };
        let done = weft::spawn(sup.run(stop_rx, downs_rx));
        RemoteSupervisor { stop: Some(stop_tx), done, events: events_rx }
    }
}

impl Sup {
    async fn run(
        mut self,
        mut stop: oneshot::Receiver<()>,
        mut downs: mpsc::UnboundedReceiver<(usize, u64, RemoteDown)>,
    ) -> SupervisorExit {
        for i in 0..self.running.len() {
            if let Err(e) = self.start(i, None, false).await {
                self.stop_all(0).await;
                return e;
            }
        }
        loop {
            let (i, serve_id, down) = weft::select! {
                _ = &mut stop => {
                    self.stop_all(0).await;
                    return SupervisorExit::Stopped;
                }
                d = downs.recv() => match d {
                    Some(d) => d,
                    None => return SupervisorExit::Stopped,
                },
            };
            // A notice for an incarnation already replaced or stopped.
            if self.running[i].as_ref().is_none_or(|r| r.serve_id != serve_id) {
                continue;
            }
            let dead = self.running[i].take().expect("checked above");
            let child = &self.spec.children[i];
            self.emit(RemoteSupervisorEvent::Exited {
                child: child.name.clone(),
                node: dead.node,
                reason: down.reason.clone(),
            });
            let restart = match child.restart {
                Restart::Permanent => true,
                Restart::Transient => !matches!(down.reason, Reason::Normal | Reason::Shutdown),
                Restart::Temporary => false,
            };
            if !restart {
                continue;
            }
            if self.too_many_restarts() {
                self.stop_all(0).await;
                self.emit(RemoteSupervisorEvent::Escalated);
                return SupervisorExit::Escalated;
            }
            // The node it ran on, unless that node is what died.
            let prefer = (down.reason != Reason::NoConnection).then_some(dead.node);
            let from = match self.spec.strategy {
                Strategy::OneForOne | Strategy::Dynamic => None,
                Strategy::OneForAll => Some(0),
                Strategy::RestForOne => Some(i + 1),
            };
            if let Some(from) = from {
                self.stop_all(from).await;
            }
            let again: Vec<usize> = match from {
                None => vec![i],
                Some(from) => {
                    (from.min(i)..self.running.len()).filter(|&j| j == i || self.running[j].is_none()).collect()
                }
            };
            for j in again {
                let prefer = if j == i { prefer } else { None };
                if let Err(e) = self.start(j, prefer, true).await {
                    self.stop_all(0).await;
                    return e;
                }
            }
        }
    }

    fn emit(&self, e: RemoteSupervisorEvent) {
        let _ = self.events.send(e);
    }

    fn too_many_restarts(&mut self) -> bool {
        let now = Instant::now();
        while self.restarts.front().is_some_and(|&t| now.duration_since(t) > self.spec.period) {
            self.restarts.pop_front();
        }
        self.restarts.push_back(now);
        self.restarts.len() > self.spec.max_restarts as usize
    }

    /// Candidate nodes for child `i`: `prefer`, then its placement list, then every live node.
    fn candidates(&self, i: usize, prefer: Option<NodeId>) -> Vec<NodeId> {
        let live = self.node.nodes();
        let mut out: Vec<NodeId> = Vec::new();
        for n in prefer.into_iter().chain(self.spec.children[i].nodes.iter().copied()).chain(live.iter().copied()) {
            if live.contains(&n) && !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }

    async fn start(&mut self, i: usize, prefer: Option<NodeId>, restart: bool) -> Result<(), SupervisorExit> {
        let child = self.spec.children[i].clone();
        let mut last = RemoteError::NodeDown;
        for node in self.candidates(i, prefer) {
            let spawned =
                self.node.spawn_raw_ref(node, &child.factory, &child.name, &child.args, restart, SPAWN_TIMEOUT).await;
            let serve_id = match spawned {
                Ok(id) => id,
                Err(e) => {
                    last = e;
                    continue;
                }
            };
            let monitor = self.node.monitor_raw(node, serve_id, &child.name);
            let downs = self.downs.clone();
            let watch = weft::spawn(async move {
                let down = monitor.await;
                let _ = downs.send((i, serve_id, down));
            });
            self.running[i] = Some(Running { node, serve_id, watch });
            let name = child.name.clone();
            self.emit(if restart {
                RemoteSupervisorEvent::Restarted { child: name, node, serve_id }
            } else {
                RemoteSupervisorEvent::Started { child: name, node, serve_id }
            });
            return Ok(());
        }
        Err(SupervisorExit::Unplaceable(child.name, last))
    }

    /// Stops children `from..` (reverse start order), forgetting their monitors first so their
    /// exits are not taken for failures.
    async fn stop_all(&mut self, from: usize) {
        for j in (from..self.running.len()).rev() {
            if let Some(r) = self.running[j].take() {
                r.watch.abort();
                let _ = self.node.stop_raw(r.node, r.serve_id).await;
            }
        }
    }
}
