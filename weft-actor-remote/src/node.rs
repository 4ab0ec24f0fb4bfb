//! A node: one Zenoh session, the tables of what it serves and what it waits for, and the
//! three tasks that keep them current — the dispatcher (its inbox), the node tracker
//! (`weft-actor/node/*` liveliness) and the name tracker (`weft-actor/name/**` liveliness).
//!
//! The tasks hold the node weakly: dropping the last `Node` handle closes the session (which
//! withdraws this node's tokens everywhere) and the tasks end with their subscribers.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{de::DeserializeOwned, Serialize};
use weft::sync::oneshot;
use weft_actor::ActorRef;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Publisher;
use zenoh::qos::CongestionControl;
use zenoh::sample::SampleKind;
use zenoh::{Session, Wait};

use crate::config::NodeConfig;
use crate::remote_ref::{LookupError, RemoteDown, RemoteError, RemoteMonitor, RemoteRef};
use crate::served::{Inbox, Refused, Typed};
use crate::wire::{self, Frame, NodeId, Outcome, Reason};
use crate::{tag_hash, RemoteActor};

const NODES: &str = "weft-actor/node";
const NAMES: &str = "weft-actor/name";
const INBOX: &str = "weft-actor/inbox";

/// How long `lookup` waits for the cluster when its own view has no answer.
const LOOKUP_QUERY: Duration = Duration::from_secs(2);

/// Why `serve` refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterError {
    /// A live node already serves that name.
    Taken(NodeId),
    /// Not a valid name (see `LookupError::BadName`).
    BadName,
    /// Zenoh refused the declaration (its message).
    Transport(String),
}

impl std::fmt::Display for RegisterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegisterError::Taken(n) => write!(f, "the name is already served by node {n}"),
            RegisterError::BadName => {
                f.write_str("invalid actor name (ASCII letters, digits and -_.: only, 1 to 200 bytes)")
            }
            RegisterError::Transport(e) => write!(f, "transport: {e}"),
        }
    }
}

impl std::error::Error for RegisterError {}

/// What went wrong, counted (a snapshot from `Node::metrics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeMetrics {
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames dropped unread: over `max_message_bytes`.
    pub oversized: u64,
    /// Frames dropped unread: not a valid encoding, or another wire version.
    pub malformed: u64,
    /// Tells and asks whose payload did not decode as the actor's type.
    pub bad_payload: u64,
    /// Tells for an actor not served here (stopped, unserved, or never).
    pub unknown_actor: u64,
    /// Tells dropped because the node's overflow budget (`max_queued_bytes`) was spent.
    pub dropped_full: u64,
    /// Tells this node could not send: the target node was known down.
    pub dropped_node_down: u64,
    /// Nodes seen going down.
    pub nodes_down: u64,
}

#[derive(Default)]
struct Counters {
    frames_in: AtomicU64,
    frames_out: AtomicU64,
    oversized: AtomicU64,
    malformed: AtomicU64,
    bad_payload: AtomicU64,
    unknown_actor: AtomicU64,
    dropped_full: AtomicU64,
    dropped_node_down: AtomicU64,
    nodes_down: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

/// A served actor.
struct Served {
    name: String,
    inbox: Arc<dyn Inbox>,
    /// Monitors other nodes (or this one) hold on it: (watcher node, monitor number).
    watchers: Vec<(NodeId, u64)>,
    /// Withdrawn (dropped) when the actor stops or is unserved.
    _token: LivelinessToken,
}

struct PendingAsk {
    node: NodeId,
    tx: oneshot::Sender<Result<Vec<u8>, RemoteError>>,
}

struct HeldMonitor {
    node: NodeId,
    serve_id: u64,
    name: String,
    tx: oneshot::Sender<RemoteDown>,
}

/// Makes an actor from encoded arguments (`register_factory`): its inbox and type tag hash.
type Factory = dyn Fn(&[u8]) -> Result<(Arc<dyn Inbox>, u64), Refused> + Send + Sync;

/// Why `Inner::remote_ref` has no local actor to hand out.
enum NotLocal {
    NotServed,
    WrongType,
}

/// A name's registration as seen through liveliness: (node, serve id) → type tag hash.
type Registrations = BTreeMap<(NodeId, u64), u64>;

/// Which of a name's registrations a lookup returns: the lowest node not known down, and on it
/// the newest incarnation (serve ids grow on each node). A restarted actor's old registration
/// may linger a moment beside the new one (its withdrawal and the new token travel apart);
/// the newer one is the one alive.
fn pick(regs: &Registrations, down: &HashSet<NodeId>) -> Option<((NodeId, u64), u64)> {
    let (&(node, _), _) = regs.iter().find(|((n, _), _)| !down.contains(n))?;
    regs.range((node, 0)..=(node, u64::MAX)).next_back().map(|(&k, &t)| (k, t))
}

#[derive(Default)]
struct State {
    served: HashMap<u64, Served>,
    asks: HashMap<u64, PendingAsk>,
    monitors: HashMap<u64, HeldMonitor>,
    publishers: HashMap<NodeId, Arc<Publisher<'static>>>,
    names: HashMap<String, Registrations>,
    nodes_down: HashSet<NodeId>,
    /// Nodes whose token is present (this one included).
    nodes_up: BTreeSet<NodeId>,
    factories: HashMap<String, Arc<Factory>>,
    shut_down: bool,
}

pub(crate) struct Inner {
    session: Session,
    id: NodeId,
    config: NodeConfig,
    state: Mutex<State>,
    next: AtomicU64,
    counters: Counters,
    /// Bytes in the served actors' overflow queues (`served.rs`).
    queued: Arc<std::sync::atomic::AtomicUsize>,
    /// The runtime the node was started on: tasks the inbox callback (on Zenoh's runtime)
    /// starts run here.
    rt: weft::runtime::Handle,
    /// The inbox subscriber (callback), set once right after start.
    inbox: Mutex<Option<zenoh::pubsub::Subscriber<()>>>,
    _node_token: LivelinessToken,
}

/// One process's membership in a cluster. Cheap to clone; the session closes when the last
/// clone is dropped or `shutdown` is called.
#[derive(Clone)]
pub struct Node {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Node({} {})", self.inner.config.name, self.inner.id)
    }
}

fn transport(e: impl std::fmt::Display) -> String {
    e.to_string()
}

pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// Parses `weft-actor/name/{name}/{node}/{serve}/{tag}`.
fn parse_name_key(key: &str) -> Option<(String, NodeId, u64, u64)> {
    let rest = key.strip_prefix(NAMES)?.strip_prefix('/')?;
    let mut parts = rest.split('/');
    let (name, node, serve, tag) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !valid_name(name) {
        return None;
    }
    Some((name.to_string(), node.parse().ok()?, serve.parse().ok()?, u64::from_str_radix(tag, 16).ok()?))
}

impl Node {
    /// Opens the Zenoh session and joins the cluster. Needs a multi-thread weft runtime (Zenoh
    /// runs its own tasks there).
    pub async fn start(config: NodeConfig) -> Result<Node, String> {
        let session = zenoh::open(config.zenoh_config()?).await.map_err(transport)?;
        let zid = session.zid();
        let id = NodeId(u128::from_le_bytes(zid.to_le_bytes()));
        let node_token = session.liveliness().declare_token(format!("{NODES}/{id}")).await.map_err(transport)?;
        let nodes =
            session.liveliness().declare_subscriber(format!("{NODES}/*")).history(true).await.map_err(transport)?;
        let names =
            session.liveliness().declare_subscriber(format!("{NAMES}/**")).history(true).await.map_err(transport)?;
        let inner = Arc::new(Inner {
            session,
            id,
            config,
            state: Mutex::new(State::default()),
            next: AtomicU64::new(1),
            counters: Counters::default(),
            queued: Arc::default(),
            rt: weft::runtime::Handle::current(),
            inbox: Mutex::new(None),
            _node_token: node_token,
        });
        // The inbox is read in Zenoh's callback, on its receiving task: `dispatch` never waits,
        // and a channel plus a task of our own between Zenoh and the mailboxes would cost a wake
        // per frame, a large share of the messages/s raw Zenoh reaches (`weft-lab actors-remote`;
        // docs/notes/performance-figures.md, "Remote actors").
        let weak = Arc::downgrade(&inner);
        let inbox = inner
            .session
            .declare_subscriber(format!("{INBOX}/{id}"))
            .callback(move |sample| {
                let Some(inner) = weak.upgrade() else { return };
                inner.dispatch(&sample.payload().to_bytes());
                // Never let the node end on Zenoh's own task (closing the session from inside
                // its callback): the last reference is dropped on the node's runtime instead.
                if Arc::strong_count(&inner) == 1 {
                    let rt = inner.rt.clone();
                    rt.spawn(async move { drop(inner) });
                }
            })
            .await
            .map_err(transport)?;
        *inner.inbox.lock().unwrap_or_else(|p| p.into_inner()) = Some(inbox);
        let weak = Arc::downgrade(&inner);
        weft::spawn(async move {
            while let Ok(sample) = nodes.recv_async().await {
                let Some(inner) = weak.upgrade() else { break };
                let Some(node) = sample.key_expr().as_str().rsplit('/').next().and_then(|s| s.parse().ok()) else {
                    continue;
                };
                if node == inner.id {
                    inner.lock().nodes_up.insert(node);
                    continue;
                }
                match sample.kind() {
                    SampleKind::Delete => inner.node_down(node),
                    // Back after a partition (same session, so the same id): reachable again.
                    // Monitors that fired stay fired; its names come back with their tokens.
                    SampleKind::Put => {
                        let mut st = inner.lock();
                        st.nodes_down.remove(&node);
                        st.nodes_up.insert(node);
                    }
                }
            }
        });
        let weak = Arc::downgrade(&inner);
        weft::spawn(async move {
            while let Ok(sample) = names.recv_async().await {
                let Some(inner) = weak.upgrade() else { break };
                let Some((name, node, serve, tag)) = parse_name_key(sample.key_expr().as_str()) else { continue };
                let mut st = inner.lock();
                match sample.kind() {
                    SampleKind::Put => {
                        st.names.entry(name).or_default().insert((node, serve), tag);
                    }
                    SampleKind::Delete => {
                        if let Some(regs) = st.names.get_mut(&name) {
                            regs.remove(&(node, serve));
                            if regs.is_empty() {
                                st.names.remove(&name);
                            }
                        }
                    }
                }
            }
        });
        Ok(Node { inner })
    }

    /// This node's id (its Zenoh session id).
    pub fn id(&self) -> NodeId {
        self.inner.id
    }

    pub fn name(&self) -> &str {
        &self.inner.config.name
    }

    /// The Zenoh session, for what this crate does not wrap.
    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Nodes seen going down and not back since.
    pub fn nodes_down(&self) -> Vec<NodeId> {
        self.inner.lock().nodes_down.iter().copied().collect()
    }

    pub fn metrics(&self) -> NodeMetrics {
        let c = &self.inner.counters;
        NodeMetrics {
            frames_in: c.frames_in.load(Relaxed),
            frames_out: c.frames_out.load(Relaxed),
            oversized: c.oversized.load(Relaxed),
            malformed: c.malformed.load(Relaxed),
            bad_payload: c.bad_payload.load(Relaxed),
            unknown_actor: c.unknown_actor.load(Relaxed),
            dropped_full: c.dropped_full.load(Relaxed),
            dropped_node_down: c.dropped_node_down.load(Relaxed),
            nodes_down: c.nodes_down.load(Relaxed),
        }
    }

    /// Serves `actor` under `name`, cluster-wide, until it stops or `unserve(name)`. Fails if
    /// a live node already serves the name (two nodes registering at the same instant may both
    /// succeed; every node then resolves the name to the lower node id).
    pub async fn serve<A: RemoteActor>(&self, name: &str, actor: ActorRef<A>) -> Result<(), RegisterError> {
        let inbox: Arc<dyn Inbox> = Arc::new(self.inner.typed(actor));
        self.inner.serve_inbox(name, inbox, tag_hash(&A::type_tag()), false).await.map(|_| ())
    }

    /// Lets other nodes spawn `A`s here (`spawn_on`, remote supervisors): `make` builds one
    /// from the arguments they send. Replaces an earlier factory of that name.
    pub fn register_factory<A, Args, F>(&self, factory: &str, make: F)
    where
        A: RemoteActor,
        Args: DeserializeOwned,
        F: Fn(Args) -> A + Send + Sync + 'static,
    {
        let (queued, max) = (self.inner.queued.clone(), self.inner.config.max_queued_bytes);
        let f: Arc<Factory> = Arc::new(move |args: &[u8]| {
            let args: Args = wire::decode_payload(args).map_err(|_| Refused::Decode)?;
            let inbox: Arc<dyn Inbox> = Arc::new(Typed::new(weft_actor::spawn(make(args)), queued.clone(), max));
            Ok((inbox, tag_hash(&A::type_tag())))
        });
        self.inner.lock().factories.insert(factory.to_string(), f);
    }

    /// Spawns an actor on `node` from its factory `factory` with `args`, served under `name`,
    /// and returns a reference to it. `takeover`: serve even if the name is registered
    /// elsewhere (what a supervisor restarting a child whose node died does).
    pub async fn spawn_on<A: RemoteActor, Args: Serialize>(
        &self,
        node: NodeId,
        factory: &str,
        name: &str,
        args: &Args,
        takeover: bool,
        timeout: Duration,
    ) -> Result<RemoteRef<A>, RemoteError> {
        let args = wire::encode_payload(args).map_err(|_| RemoteError::Decode)?;
        let serve_id = self.spawn_raw_ref(node, factory, name, &args, takeover, timeout).await?;
        self.inner.remote_ref(node, serve_id, name).map_err(|e| match e {
            NotLocal::NotServed => RemoteError::NotFound,
            NotLocal::WrongType => RemoteError::Decode,
        })
    }

    /// `spawn_on` with its arguments already encoded (what a supervisor keeps to restart a
    /// child): returns the serve id of the new actor.
    pub(crate) async fn spawn_raw_ref(
        &self,
        node: NodeId,
        factory: &str,
        name: &str,
        args: &[u8],
        takeover: bool,
        timeout: Duration,
    ) -> Result<u64, RemoteError> {
        if node == self.inner.id {
            return self.inner.spawn_here(factory, name, args, takeover).await;
        }
        let bytes =
            self.inner.request(node, |req| Frame::Spawn { req, factory, name, args, takeover }, timeout).await?;
        wire::decode_payload(&bytes).map_err(|_| RemoteError::Decode)
    }

    pub(crate) fn monitor_raw(&self, node: NodeId, serve_id: u64, name: &str) -> RemoteMonitor {
        self.inner.monitor(node, serve_id, name)
    }

    /// Stops a served actor by id, here or remotely (reason `Shutdown`).
    pub(crate) async fn stop_raw(&self, node: NodeId, serve_id: u64) -> Result<(), RemoteError> {
        if node == self.inner.id {
            if let Some(s) = self.inner.lock().served.get(&serve_id) {
                s.inbox.stop(false);
            }
            return Ok(());
        }
        self.inner.stop_remote(node, serve_id, false)
    }

    /// Live nodes (whose tokens this node sees), this one included, in id order.
    pub fn nodes(&self) -> Vec<NodeId> {
        let st = self.inner.lock();
        let mut nodes: BTreeSet<NodeId> = st.nodes_up.iter().copied().filter(|n| !st.nodes_down.contains(n)).collect();
        nodes.insert(self.inner.id);
        nodes.into_iter().collect()
    }

    /// Stops serving `name` (the actor keeps running); its monitors get `NoProc`. Returns
    /// whether it was served here.
    pub async fn unserve(&self, name: &str) -> bool {
        let id = self.inner.lock().served.iter().find(|(_, s)| s.name == name).map(|(&id, _)| id);
        match id {
            Some(id) => {
                self.inner.unserve_id(id, Reason::NoProc);
                true
            }
            None => false,
        }
    }

    /// Finds the actor served under `name` on any live node (this one included).
    pub async fn lookup<A: RemoteActor>(&self, name: &str) -> Result<RemoteRef<A>, LookupError> {
        if !valid_name(name) {
            return Err(LookupError::BadName);
        }
        let inner = &self.inner;
        let found = match inner.resolve(name) {
            Some(found) => found,
            // Not seen yet (this node just started, or the name was just served): ask.
            None => inner.query_name(name).await.map_err(|_| LookupError::Timeout)?.ok_or(LookupError::NotFound)?,
        };
        let ((node, serve_id), tag) = found;
        if tag != tag_hash(&A::type_tag()) {
            return Err(LookupError::WrongType);
        }
        inner.remote_ref(node, serve_id, name).map_err(|e| match e {
            NotLocal::NotServed => LookupError::NotFound,
            NotLocal::WrongType => LookupError::WrongType,
        })
    }

    /// Monitors `target`: the returned future resolves exactly once, when the actor stops (its
    /// reason), was not running (`NoProc`) or its node goes down (`NoConnection`). The monitor
    /// is in place before anything this node sends `target` after this call: a tell that makes
    /// the actor stop is seen with its reason, never as `NoProc`.
    pub fn monitor<A: RemoteActor>(&self, target: &RemoteRef<A>) -> RemoteMonitor {
        self.inner.monitor(target.target, target.serve_id, &target.name)
    }

    /// Leaves the cluster: withdraws every token and closes the session (other nodes see this
    /// node down at once). Pending asks fail with `NodeDown`.
    pub async fn shutdown(&self) {
        let (served, asks, monitors) = {
            let mut st = self.inner.lock();
            st.shut_down = true;
            (std::mem::take(&mut st.served), std::mem::take(&mut st.asks), std::mem::take(&mut st.monitors))
        };
        drop(served);
        let inbox = self.inner.inbox.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(inbox);
        for (_, ask) in asks {
            let _ = ask.tx.send(Err(RemoteError::NodeDown));
        }
        for (_, m) in monitors {
            let _ = m.tx.send(RemoteDown {
                node: m.node,
                serve_id: m.serve_id,
                name: m.name,
                reason: Reason::NoConnection,
            });
        }
        let _ = self.inner.session.close().await;
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the tables half-updated in a way that
        // matters more than losing the node: keep serving.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A reference to `serve_id` on `node`. On this node it carries the `ActorRef<A>` itself,
    /// so messages skip the network; that fails if nothing is served there under the id, or
    /// it is not an `A`.
    fn remote_ref<A: RemoteActor>(
        self: &Arc<Self>,
        node: NodeId,
        serve_id: u64,
        name: &str,
    ) -> Result<RemoteRef<A>, NotLocal> {
        let local = if node == self.id {
            let st = self.lock();
            let served = st.served.get(&serve_id).ok_or(NotLocal::NotServed)?;
            Some(served.inbox.local().downcast_ref::<ActorRef<A>>().ok_or(NotLocal::WrongType)?.clone())
        } else {
            None
        };
        Ok(RemoteRef {
            node: Arc::downgrade(self),
            target: node,
            serve_id,
            name: name.to_string(),
            local,
            _types: PhantomData,
        })
    }

    fn typed<A: RemoteActor>(&self, actor: ActorRef<A>) -> Typed<A> {
        Typed::new(actor, self.queued.clone(), self.config.max_queued_bytes)
    }

    fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Relaxed)
    }

    /// The registration this node's view resolves `name` to (see `pick`).
    fn resolve(&self, name: &str) -> Option<((NodeId, u64), u64)> {
        let st = self.lock();
        pick(st.names.get(name)?, &st.nodes_down)
    }

    /// Asks the cluster who serves `name` now (liveliness query), for a name this node's view
    /// does not hold yet.
    async fn query_name(&self, name: &str) -> Result<Option<((NodeId, u64), u64)>, String> {
        let replies = self
            .session
            .liveliness()
            .get(format!("{NAMES}/{name}/*/*/*"))
            .timeout(LOOKUP_QUERY)
            .await
            .map_err(transport)?;
        let mut found: Registrations = BTreeMap::new();
        while let Ok(reply) = replies.recv_async().await {
            if let Ok(sample) = reply.result() {
                if let Some((n, node, serve, tag)) = parse_name_key(sample.key_expr().as_str()) {
                    if n == name {
                        found.insert((node, serve), tag);
                    }
                }
            }
        }
        let st = self.lock();
        Ok(pick(&found, &st.nodes_down))
    }

    // Declaring a publisher and putting on it are plain calls: zenoh's futures for both are
    // `Ready(wait())`, so they block the caller exactly as much when awaited. Calling them
    // directly is what orders frames by the caller's calls: a monitor set up before a tell
    // reaches the target node before that tell, as Erlang orders signals between two processes.
    fn publisher(&self, node: NodeId) -> Result<Arc<Publisher<'static>>, RemoteError> {
        {
            let st = self.lock();
            if st.shut_down {
                return Err(RemoteError::Transport("this node is shut down".into()));
            }
            if st.nodes_down.contains(&node) {
                return Err(RemoteError::NodeDown);
            }
            if let Some(p) = st.publishers.get(&node) {
                return Ok(p.clone());
            }
        }
        let p = self
            .session
            .declare_publisher(format!("{INBOX}/{node}"))
            .congestion_control(CongestionControl::Block)
            .wait()
            .map_err(|e| RemoteError::Transport(e.to_string()))?;
        let mut st = self.lock();
        // Another sender may have declared one meanwhile: keep the first (one publisher per
        // destination is what keeps FIFO).
        Ok(st.publishers.entry(node).or_insert_with(|| Arc::new(p)).clone())
    }

    fn send(&self, node: NodeId, frame: Frame<'_>) -> Result<(), RemoteError> {
        self.send_bytes(node, wire::encode(self.id, frame))
    }

    fn send_bytes(&self, node: NodeId, bytes: Vec<u8>) -> Result<(), RemoteError> {
        if bytes.len() > self.config.max_message_bytes {
            return Err(RemoteError::TooLarge);
        }
        let p = self.publisher(node)?;
        p.put(bytes).wait().map_err(|e| RemoteError::Transport(e.to_string()))?;
        bump(&self.counters.frames_out);
        Ok(())
    }

    pub(crate) fn tell<T: Serialize>(&self, node: NodeId, to: u64, msg: &T) -> Result<(), RemoteError> {
        let bytes = wire::encode_tell(self.id, to, msg).map_err(|_| RemoteError::Decode)?;
        let r = self.send_bytes(node, bytes);
        if r == Err(RemoteError::NodeDown) {
            bump(&self.counters.dropped_node_down);
        }
        r
    }

    pub(crate) async fn ask<Q: Serialize, R: DeserializeOwned>(
        &self,
        node: NodeId,
        to: u64,
        req: &Q,
        timeout: Duration,
    ) -> Result<R, RemoteError> {
        let payload = wire::encode_payload(req).map_err(|_| RemoteError::Decode)?;
        let bytes = self.request(node, |req| Frame::Ask { to, req, payload: &payload }, timeout).await?;
        wire::decode_payload(&bytes).map_err(|_| RemoteError::Decode)
    }

    /// Sends the frame `make(request number)` and waits for its `Answer` (at most `timeout`,
    /// sending included).
    async fn request<'f>(
        &self,
        node: NodeId,
        make: impl FnOnce(u64) -> Frame<'f>,
        timeout: Duration,
    ) -> Result<Vec<u8>, RemoteError> {
        let id = self.next_id();
        let (tx, rx) = oneshot::channel();
        self.lock().asks.insert(id, PendingAsk { node, tx });
        // Whatever happens next, the entry goes: removed by the answer, the node going down,
        // or here.
        struct Forget<'a>(&'a Inner, u64);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0.lock().asks.remove(&self.1);
            }
        }
        let _forget = Forget(self, id);
        let answer = weft::time::timeout(timeout, async {
            self.send(node, make(id))?;
            rx.await.map_err(|_| RemoteError::NodeDown)?
        });
        answer.await.unwrap_or(Err(RemoteError::Timeout))
    }

    /// Serves `inbox` under `name`; returns its serve id.
    async fn serve_inbox(
        self: &Arc<Self>,
        name: &str,
        inbox: Arc<dyn Inbox>,
        tag: u64,
        takeover: bool,
    ) -> Result<u64, RegisterError> {
        if !valid_name(name) {
            return Err(RegisterError::BadName);
        }
        if !takeover {
            if let Some(((node, _), _)) = self.resolve(name) {
                return Err(RegisterError::Taken(node));
            }
            if let Ok(Some(((node, _), _))) = self.query_name(name).await {
                return Err(RegisterError::Taken(node));
            }
        }
        let serve_id = self.next_id();
        let key = format!("{NAMES}/{name}/{}/{serve_id}/{tag:016x}", self.id);
        let token =
            self.session.liveliness().declare_token(key).await.map_err(|e| RegisterError::Transport(e.to_string()))?;
        let stopped = inbox.stopped();
        {
            let mut st = self.lock();
            if st.served.values().any(|s| s.name == name) {
                return Err(RegisterError::Taken(self.id));
            }
            st.served.insert(serve_id, Served { name: name.to_string(), inbox, watchers: Vec::new(), _token: token });
            st.names.entry(name.to_string()).or_default().insert((self.id, serve_id), tag);
        }
        let weak = Arc::downgrade(self);
        self.rt.spawn(async move {
            let reason = stopped.await;
            if let Some(inner) = weak.upgrade() {
                inner.unserve_id(serve_id, reason);
            }
        });
        Ok(serve_id)
    }

    /// Runs factory `factory` here and serves the actor under `name`.
    async fn spawn_here(
        self: &Arc<Self>,
        factory: &str,
        name: &str,
        args: &[u8],
        takeover: bool,
    ) -> Result<u64, RemoteError> {
        let f = self.lock().factories.get(factory).cloned();
        let f = f.ok_or_else(|| RemoteError::Refused(format!("no factory {factory:?} on node {}", self.id)))?;
        let (inbox, tag) =
            f(args).map_err(|_| RemoteError::Refused(format!("arguments for {factory:?} do not decode")))?;
        let stop = inbox.clone();
        self.serve_inbox(name, inbox, tag, takeover).await.map_err(|e| {
            // Not served: the new actor must not linger.
            stop.stop(true);
            RemoteError::Refused(e.to_string())
        })
    }

    pub(crate) fn stop_remote(&self, node: NodeId, to: u64, kill: bool) -> Result<(), RemoteError> {
        self.send(node, Frame::Stop { to, kill })
    }

    fn monitor(self: &Arc<Self>, node: NodeId, serve_id: u64, name: &str) -> RemoteMonitor {
        let id = self.next_id();
        let (tx, rx) = oneshot::channel();
        let down = |reason| RemoteDown { node, serve_id, name: name.to_string(), reason };
        let mut st = self.lock();
        if st.shut_down || st.nodes_down.contains(&node) {
            let _ = tx.send(down(Reason::NoConnection));
        } else if node == self.id {
            match st.served.get_mut(&serve_id) {
                Some(s) => {
                    s.watchers.push((self.id, id));
                    st.monitors.insert(id, HeldMonitor { node, serve_id, name: name.to_string(), tx });
                }
                None => {
                    let _ = tx.send(down(Reason::NoProc));
                }
            }
        } else {
            st.monitors.insert(id, HeldMonitor { node, serve_id, name: name.to_string(), tx });
            drop(st);
            // Sent now, not by a task: anything this caller sends the target afterwards must
            // find the monitor in place.
            if let Err(e) = self.send(node, Frame::Monitor { to: serve_id, monitor: id }) {
                let reason = if e == RemoteError::NodeDown { Reason::NoConnection } else { Reason::NoProc };
                self.fire_monitor(id, reason);
            }
        }
        RemoteMonitor { rx, target: (node, serve_id, name.to_string()), node: Arc::downgrade(self), id, done: false }
    }

    pub(crate) fn demonitor(self: &Arc<Self>, id: u64) {
        let Some(m) = self.lock().monitors.remove(&id) else { return };
        if m.node == self.id {
            if let Some(s) = self.lock().served.get_mut(&m.serve_id) {
                s.watchers.retain(|&(_, w)| w != id);
            }
            return;
        }
        let _ = self.send(m.node, Frame::Demonitor { monitor: id });
    }

    /// Completes monitor `id` with `reason`, if it is still held (exactly once).
    fn fire_monitor(&self, id: u64, reason: Reason) {
        let m = self.lock().monitors.remove(&id);
        if let Some(m) = m {
            let _ = m.tx.send(RemoteDown { node: m.node, serve_id: m.serve_id, name: m.name, reason });
        }
    }

    /// Removes a served actor (it stopped, or was unserved) and tells its watchers.
    fn unserve_id(&self, serve_id: u64, reason: Reason) {
        let mut served = {
            let mut st = self.lock();
            let Some(served) = st.served.remove(&serve_id) else { return };
            if let Some(regs) = st.names.get_mut(&served.name) {
                regs.remove(&(self.id, serve_id));
                if regs.is_empty() {
                    st.names.remove(&served.name);
                }
            }
            served
        };
        // The name is withdrawn (its token dropped) before any watcher hears of the exit, so a
        // supervisor restarting the actor registers its successor after the old one is gone.
        let watchers = std::mem::take(&mut served.watchers);
        drop(served);
        for (watcher, monitor) in watchers {
            if watcher == self.id {
                self.fire_monitor(monitor, reason.clone());
            } else {
                let _ = self.send(watcher, Frame::Down { monitor, reason: reason.clone() });
            }
        }
    }

    /// A node's liveliness token went away: it crashed, shut down, or is cut off (a partition,
    /// or silence past its lease). If it was cut off it may come back with the same id; until
    /// its token reappears it is unreachable.
    fn node_down(&self, node: NodeId) {
        let (asks, monitors) = {
            let mut st = self.lock();
            st.nodes_up.remove(&node);
            if !st.nodes_down.insert(node) {
                return;
            }
            st.publishers.remove(&node);
            for regs in st.names.values_mut() {
                regs.retain(|&(n, _), _| n != node);
            }
            st.names.retain(|_, regs| !regs.is_empty());
            for s in st.served.values_mut() {
                s.watchers.retain(|&(w, _)| w != node);
            }
            let asks: Vec<u64> = st.asks.iter().filter(|(_, a)| a.node == node).map(|(&id, _)| id).collect();
            let asks: Vec<PendingAsk> = asks.into_iter().filter_map(|id| st.asks.remove(&id)).collect();
            let mons: Vec<u64> = st.monitors.iter().filter(|(_, m)| m.node == node).map(|(&id, _)| id).collect();
            (asks, mons)
        };
        bump(&self.counters.nodes_down);
        for a in asks {
            let _ = a.tx.send(Err(RemoteError::NodeDown));
        }
        for id in monitors {
            self.fire_monitor(id, Reason::NoConnection);
        }
    }

    /// One inbox sample. Never waits: deliveries are `try_send`s, and anything that must be
    /// sent back is sent by a task of its own.
    fn dispatch(self: &Arc<Self>, bytes: &[u8]) {
        bump(&self.counters.frames_in);
        let env = match wire::decode(bytes, self.config.max_message_bytes) {
            Ok(env) => env,
            Err(wire::WireError::Oversized(..)) => return bump(&self.counters.oversized),
            Err(_) => return bump(&self.counters.malformed),
        };
        let from = env.from;
        match env.frame {
            Frame::Tell { to, payload } => {
                let inbox = self.lock().served.get(&to).map(|s| s.inbox.clone());
                match inbox.map(|i| i.tell(payload)) {
                    None | Some(Err(Refused::Closed)) => bump(&self.counters.unknown_actor),
                    Some(Err(Refused::Decode)) => bump(&self.counters.bad_payload),
                    Some(Err(_)) => bump(&self.counters.dropped_full),
                    Some(Ok(())) => {}
                }
            }
            Frame::Ask { to, req, payload } => {
                let inbox = self.lock().served.get(&to).map(|s| s.inbox.clone());
                let answer = match inbox.map(|i| i.ask(payload)) {
                    None | Some(Err(Refused::Closed)) => Err(Refused::Closed),
                    Some(r) => r,
                };
                let inner = self.clone();
                self.rt.spawn(async move {
                    let answer = match answer {
                        Ok(fut) => fut.await,
                        Err(e) => Err(e),
                    };
                    if answer == Err(Refused::Decode) {
                        bump(&inner.counters.bad_payload);
                    }
                    let outcome = match &answer {
                        Ok(bytes) => Outcome::Answer(bytes),
                        Err(Refused::Closed) => Outcome::NotFound,
                        Err(Refused::NoReply) => Outcome::NoReply,
                        Err(Refused::Decode) => Outcome::BadRequest,
                        Err(Refused::Full) => Outcome::Overloaded,
                    };
                    let _ = inner.send(from, Frame::Answer { req, outcome });
                });
            }
            Frame::Answer { req, outcome } => {
                let Some(ask) = self.lock().asks.remove(&req) else { return };
                let _ = ask.tx.send(match outcome {
                    Outcome::Answer(bytes) => Ok(bytes.to_vec()),
                    Outcome::NotFound => Err(RemoteError::NotFound),
                    Outcome::NoReply => Err(RemoteError::NoReply),
                    Outcome::BadRequest => Err(RemoteError::Decode),
                    Outcome::Overloaded => Err(RemoteError::Overloaded),
                    Outcome::Refused(why) => Err(RemoteError::Refused(why.to_string())),
                });
            }
            Frame::Monitor { to, monitor } => {
                let mut st = self.lock();
                if st.nodes_down.contains(&from) {
                    return;
                }
                match st.served.get_mut(&to) {
                    Some(s) => s.watchers.push((from, monitor)),
                    None => {
                        drop(st);
                        let inner = self.clone();
                        self.rt.spawn(async move {
                            let _ = inner.send(from, Frame::Down { monitor, reason: Reason::NoProc });
                        });
                    }
                }
            }
            Frame::Stop { to, kill } => match self.lock().served.get(&to) {
                Some(s) => s.inbox.stop(kill),
                None => bump(&self.counters.unknown_actor),
            },
            Frame::Spawn { req, factory, name, args, takeover } => {
                let (factory, name, args) = (factory.to_string(), name.to_string(), args.to_vec());
                let inner = self.clone();
                self.rt.spawn(async move {
                    let result = inner.spawn_here(&factory, &name, &args, takeover).await;
                    let serve_id;
                    let outcome = match &result {
                        Ok(id) => {
                            serve_id = wire::encode_payload(id).expect("a u64 encodes");
                            Outcome::Answer(&serve_id)
                        }
                        Err(RemoteError::Refused(why)) => Outcome::Refused(why),
                        Err(_) => Outcome::Refused("spawn failed"),
                    };
                    let _ = inner.send(from, Frame::Answer { req, outcome });
                });
            }
            Frame::Demonitor { monitor } => {
                for s in self.lock().served.values_mut() {
                    s.watchers.retain(|&w| w != (from, monitor));
                }
            }
            Frame::Down { monitor, reason } => {
                // Only the node holding the target may end a monitor on it.
                let ok = self.lock().monitors.get(&monitor).is_some_and(|m| m.node == from);
                if ok {
                    self.fire_monitor(monitor, reason);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for good in ["a", "counter", "shard-7.eu:1", &"x".repeat(200)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "a/b", "a*", "$x", "a b", "é", &"x".repeat(201)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn name_keys_parse_and_reject_garbage() {
        let n = NodeId(0xabc);
        let key = format!("{NAMES}/counter/{n}/7/{:016x}", 99u64);
        assert_eq!(parse_name_key(&key), Some(("counter".into(), n, 7, 99)));
        for bad in [
            format!("{NAMES}/counter/{n}/7"),
            format!("{NAMES}/counter/{n}/7/{:016x}/extra", 1u64),
            format!("{NAMES}/coun*ter/{n}/7/0"),
            format!("{NAMES}/counter/nothex/7/0"),
            "other/prefix".to_string(),
        ] {
            assert_eq!(parse_name_key(&bad), None, "{bad}");
        }
    }
}
