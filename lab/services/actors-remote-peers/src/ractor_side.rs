//! ractor 0.15 with ractor_cluster: a `Sink` actor in the process group `sink` on a
//! `NodeServer`, set up as ractor's distributed playground shows (a node server per process,
//! a magic cookie, `client::connect` from the driver, `pg` to find the remote actor, messages
//! `#[derive(RactorClusterMessage)]` with `#[rpc]` variants).
//!
//! Tells are `cast`s, asks `call`s through the remote actor ractor_cluster spawns for the
//! sink. A lookup is `pg::get_members`: ractor_cluster pushes group membership to every
//! connected node, so a lookup reads local state and never crosses the wire. The watch
//! subscribes to the node server's events: ractor notices a dead node only when its session's
//! TCP connection closes.

use bench_common::{concurrent, Measured, Workload, LIMIT};
use ractor::{Actor, ActorId, ActorProcessingErr, ActorRef, RpcReplyPort};
use ractor_cluster::node::NodeServerSessionInformation;
use ractor_cluster::{NodeEventSubscription, NodeServer, NodeServerMessage, RactorClusterMessage};
use tokio::sync::mpsc;

use crate::{host_port, BENCH, WATCH_LIMIT};

const COOKIE: &str = "actors-remote";
const GROUP: &str = "sink";

#[derive(RactorClusterMessage)]
pub enum SinkMsg {
    Blob(Vec<u8>),
    #[rpc]
    Echo(Vec<u8>, RpcReplyPort<Vec<u8>>),
    #[rpc]
    Count(RpcReplyPort<u64>),
}

/// The served actor: counts blobs, echoes, answers its count.
pub struct Sink;

impl Actor for Sink {
    type Msg = SinkMsg;
    type State = u64;
    type Arguments = ();

    async fn pre_start(&self, myself: ActorRef<SinkMsg>, _: ()) -> Result<u64, ActorProcessingErr> {
        ractor::pg::join(GROUP.to_string(), vec![myself.get_cell()]);
        Ok(0)
    }

    async fn handle(
        &self,
        _myself: ActorRef<SinkMsg>,
        msg: SinkMsg,
        blobs: &mut u64,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SinkMsg::Blob(_) => *blobs += 1,
            SinkMsg::Echo(payload, reply) => reply.send(payload)?,
            SinkMsg::Count(reply) => reply.send(*blobs)?,
        }
        Ok(())
    }
}

/// Starts this process's node server on `host:port` (port 0: any).
async fn node(name: &str, host: &str, port: u16) -> ActorRef<NodeServerMessage> {
    let server = NodeServer::new(port, COOKIE.to_string(), name.to_string(), host.to_string(), None, None)
        .with_listen_addr(host.parse().expect("an IP address"));
    let (server, _) = Actor::spawn(None, server, ()).await.expect("start NodeServer");
    server
}

pub async fn serve(listen: &str) {
    let (host, port) = host_port(listen);
    let _server = node("server", &host, port).await;
    let _sink = Actor::spawn(Some(GROUP.to_string()), Sink, ()).await.expect("spawn sink");
    println!("ready");
    std::future::pending::<()>().await;
}

/// The remote members of the group `sink`.
fn remote_sinks() -> Vec<ActorRef<SinkMsg>> {
    ractor::pg::get_members(&GROUP.to_string())
        .into_iter()
        .filter(|cell| !cell.get_id().is_local())
        .map(ActorRef::from)
        .collect()
}

async fn blobs(sink: &ActorRef<SinkMsg>) -> u64 {
    ractor::call_t!(sink, SinkMsg::Count, LIMIT.as_millis() as u64).expect("call Count")
}

/// Forwards the node server's session-closed events to a channel.
struct Disconnects(mpsc::UnboundedSender<NodeServerSessionInformation>);

impl NodeEventSubscription for Disconnects {
    fn node_session_opened(&self, _: NodeServerSessionInformation) {}
    fn node_session_authenicated(&self, _: NodeServerSessionInformation) {}
    fn node_session_disconnected(&self, ses: NodeServerSessionInformation) {
        let _ = self.0.send(ses);
    }
}

pub async fn drive(connect: &str, workload: &str, n: u64) -> Option<Measured> {
    let (host, port) = host_port(connect);
    let server = node(&format!("driver-{}", std::process::id()), "127.0.0.1", 0).await;
    let (tx, mut disconnected) = mpsc::unbounded_channel();
    server
        .cast(NodeServerMessage::SubscribeToEvents { id: "watch".into(), subscription: Box::new(Disconnects(tx)) })
        .expect("subscribe");
    ractor_cluster::client_connect(&server, format!("{host}:{port}")).await.expect("connect");
    let sink = BENCH.poll_until("find sink", LIMIT, || async { remote_sinks().pop() }).await;
    Some(match Workload::parse(workload) {
        Workload::Tell(size) => {
            let send = async {
                for _ in 0..n {
                    sink.cast(SinkMsg::Blob(vec![0xab; size])).expect("cast");
                }
            };
            BENCH.bounded(workload, LIMIT, BENCH.timed_delivery(n, send, || blobs(&sink))).await
        }
        Workload::Ask(tasks) => {
            let asks = concurrent(tasks, n / tasks, sink.clone(), |sink, _| async move {
                let answer =
                    ractor::call_t!(sink, SinkMsg::Echo, LIMIT.as_millis() as u64, vec![7; 16]).expect("call Echo");
                assert_eq!(answer, vec![7; 16]);
            });
            BENCH.bounded(workload, LIMIT, asks).await
        }
        Workload::Lookup => {
            let lookups = concurrent(1, n, sink.get_id(), |at: ActorId, _| async move {
                let found = remote_sinks();
                assert_eq!(found.len(), 1, "one remote sink");
                assert_eq!(found[0].get_id(), at);
            });
            BENCH.bounded(workload, LIMIT, lookups).await
        }
        Workload::Watch => {
            println!("watching");
            match tokio::time::timeout(WATCH_LIMIT, disconnected.recv()).await {
                Ok(Some(_)) => println!("down SessionDisconnected"),
                _ => println!("down timeout"),
            }
            return None;
        }
    })
}
