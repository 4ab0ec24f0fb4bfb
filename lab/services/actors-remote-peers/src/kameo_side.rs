//! kameo 0.22 with its `remote` feature: a `Sink` actor registered as `sink` on a libp2p swarm
//! built as kameo's custom-swarm guide shows (TCP + noise + yamux, `remote::Behaviour`,
//! `init_global`, the driver dialing the server's known address — no mDNS, as the lab gives
//! each side the other's address, the way Zenoh's side runs with scouting off).
//!
//! Tells are `RemoteTellRequest::send_ack`, 64 in flight (see `TELL_WINDOW`); asks `RemoteActorRef::ask`; lookups
//! `RemoteActorRef::lookup` (a Kademlia provider query, then the registration record); the
//! watch links a local actor to the remote one with `link_remote` and waits for
//! `on_link_died` (kameo signals `PeerDisconnected` when the libp2p connection closes).

use std::error::Error;
use std::ops::ControlFlow;
use std::time::Duration;

use bench_common::{concurrent, Measured, Workload, LIMIT};
use kameo::error::Infallible;
use kameo::prelude::*;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{noise, tcp, yamux, Multiaddr, PeerId, SwarmBuilder};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::{host_port, BENCH, WATCH_LIMIT};

/// Tells in flight at once. kameo's fire-and-forget `send` loses messages once more than
/// `messaging::Config`'s `max_concurrent_streams` (100 by default) arrive at once — the
/// receiver drops the surplus inbound streams — so the tell workloads, which must count every
/// message, use the acknowledged `send_ack`, kept under that limit.
const TELL_WINDOW: usize = 64;

/// The served actor: counts blobs, echoes, answers its count.
#[derive(Actor, RemoteActor)]
pub struct Sink {
    blobs: u64,
}

/// A one-way message (a tell).
#[derive(Serialize, Deserialize)]
pub struct Blob(#[serde(with = "serde_bytes")] Vec<u8>);

/// A request echoed back.
#[derive(Serialize, Deserialize)]
pub struct Echo(#[serde(with = "serde_bytes")] Vec<u8>);

/// Echo's reply.
#[derive(Reply, Serialize, Deserialize, PartialEq, Debug)]
pub struct Echoed(#[serde(with = "serde_bytes")] Vec<u8>);

/// Asks for the number of blobs counted so far.
#[derive(Serialize, Deserialize)]
pub struct Count;

#[remote_message]
impl Message<Blob> for Sink {
    type Reply = ();

    async fn handle(&mut self, _msg: Blob, _ctx: &mut Context<Self, Self::Reply>) {
        self.blobs += 1;
    }
}

#[remote_message]
impl Message<Echo> for Sink {
    type Reply = Echoed;

    async fn handle(&mut self, msg: Echo, _ctx: &mut Context<Self, Self::Reply>) -> Echoed {
        Echoed(msg.0)
    }
}

#[remote_message]
impl Message<Count> for Sink {
    type Reply = u64;

    async fn handle(&mut self, _msg: Count, _ctx: &mut Context<Self, Self::Reply>) -> u64 {
        self.blobs
    }
}

/// The driver's `watch` actor: linked to the remote sink, it reports how the link died.
#[derive(RemoteActor)]
pub struct Watcher {
    down: mpsc::UnboundedSender<ActorStopReason>,
}

impl Actor for Watcher {
    type Args = Self;
    type Error = Infallible;

    async fn on_start(args: Self, _actor_ref: ActorRef<Self>) -> Result<Self, Infallible> {
        Ok(args)
    }

    async fn on_link_died(
        &mut self,
        _actor_ref: WeakActorRef<Self>,
        _id: ActorId,
        reason: ActorStopReason,
    ) -> Result<ControlFlow<ActorStopReason>, Infallible> {
        let _ = self.down.send(reason.clone());
        Ok(ControlFlow::Break(reason))
    }
}

#[derive(NetworkBehaviour)]
struct PeerBehaviour {
    kameo: remote::Behaviour,
}

/// `tcp/HOST:PORT` → `/ip4/HOST/tcp/PORT`.
fn multiaddr(endpoint: &str) -> Multiaddr {
    let (host, port) = host_port(endpoint);
    format!("/ip4/{host}/tcp/{port}").parse().expect("multiaddr")
}

/// Builds this process's swarm, makes it kameo's global one, listens on `listen`, dials
/// `dial`, and runs it on a task. The dialed peer's address goes into the swarm's address
/// book on connection, which is how kameo's registry (Kademlia) learns it — what the guide's
/// mDNS handler does with discovered peers.
fn start_swarm(listen: Multiaddr, dial: Option<Multiaddr>) -> Result<PeerId, Box<dyn Error>> {
    let mut swarm = SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(tcp::Config::default(), noise::Config::new, yamux::Config::default)?
        .with_behaviour(|key| {
            let kameo = remote::Behaviour::new(key.public().to_peer_id(), remote::messaging::Config::default());
            Ok(PeerBehaviour { kameo })
        })?
        .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(300)))
        .build();
    swarm.behaviour().kameo.init_global();
    swarm.listen_on(listen)?;
    if let Some(addr) = dial {
        swarm.dial(addr)?;
    }
    let local = *swarm.local_peer_id();
    tokio::spawn(async move {
        loop {
            match futures::StreamExt::select_next_some(&mut swarm).await {
                SwarmEvent::ConnectionEstablished { peer_id, endpoint, .. } if endpoint.is_dialer() => {
                    swarm.add_peer_address(peer_id, endpoint.get_remote_address().clone());
                }
                SwarmEvent::OutgoingConnectionError { error, .. } => {
                    eprintln!("actors-remote-peers: kameo: dial failed: {error}");
                }
                _ => {}
            }
        }
    });
    Ok(local)
}

pub async fn serve(listen: &str) {
    start_swarm(multiaddr(listen), None).expect("start swarm");
    let sink = Sink::spawn(Sink { blobs: 0 });
    sink.register("sink").await.expect("register sink");
    println!("ready");
    std::future::pending::<()>().await;
}

async fn blobs(sink: &RemoteActorRef<Sink>) -> u64 {
    sink.ask(&Count).await.expect("ask Count")
}

pub async fn drive(connect: &str, workload: &str, n: u64) -> Option<Measured> {
    start_swarm("/ip4/127.0.0.1/tcp/0".parse().expect("multiaddr"), Some(multiaddr(connect))).expect("start swarm");
    let lookup = || async { RemoteActorRef::<Sink>::lookup("sink").await.ok().flatten() };
    let sink = BENCH.poll_until("lookup sink", LIMIT, lookup).await;
    Some(match Workload::parse(workload) {
        Workload::Tell(size) => {
            let send = futures::StreamExt::for_each_concurrent(futures::stream::iter(0..n), TELL_WINDOW, |_| {
                let sink = &sink;
                async move {
                    let blob = Blob(vec![0xab; size]);
                    sink.tell(&blob).send_ack().await.expect("tell");
                }
            });
            // Each tell is its own request-response stream, in no order with the count's ask:
            // the count is polled until every tell was handled.
            BENCH.bounded(workload, LIMIT, BENCH.timed_delivery(n, send, || blobs(&sink))).await
        }
        Workload::Ask(tasks) => {
            let asks = concurrent(tasks, n / tasks, sink.clone(), |sink, _| async move {
                let answer = sink.ask(&Echo(vec![7; 16])).await.expect("ask Echo");
                assert_eq!(answer, Echoed(vec![7; 16]));
            });
            BENCH.bounded(workload, LIMIT, asks).await
        }
        Workload::Lookup => {
            let lookups = concurrent(1, n, sink.id(), |at, _| async move {
                let found = RemoteActorRef::<Sink>::lookup("sink").await.expect("lookup").expect("sink registered");
                assert_eq!(found.id(), at);
            });
            BENCH.bounded(workload, LIMIT, lookups).await
        }
        Workload::Watch => {
            let (tx, mut down) = mpsc::unbounded_channel();
            let watcher = Watcher::spawn(Watcher { down: tx });
            watcher.link_remote(&sink).await.expect("link_remote");
            println!("watching");
            match tokio::time::timeout(WATCH_LIMIT, down.recv()).await {
                Ok(Some(reason)) => println!("down {reason}"),
                _ => println!("down timeout"),
            }
            return None;
        }
    })
}
