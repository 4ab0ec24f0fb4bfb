//! weft-actor-remote: a `demo::Counter` served as `sink`; tells carry `Blob`s, asks `Echo`.

use bench_common::{concurrent, Measured, Workload, LIMIT};
use weft_actor_remote::demo::{Answer, Cmd, Counter, Query};
use weft_actor_remote::{Node, NodeConfig, RemoteRef};

use crate::BENCH;

pub async fn serve(listen: &str) {
    let node = Node::start(NodeConfig::peer("server").listen(listen)).await.expect("start node");
    node.serve("sink", weft_actor::spawn(Counter::new())).await.expect("serve sink");
    println!("ready");
    std::future::pending::<()>().await;
}

async fn blobs(sink: &RemoteRef<Counter>) -> u64 {
    match sink.ask(Query::Get, LIMIT).await.expect("ask Get") {
        Answer::State { blobs, .. } => blobs,
        other => panic!("unexpected answer {other:?}"),
    }
}

pub async fn drive(connect: &str, workload: &str, n: u64) -> Option<Measured> {
    let node = Node::start(NodeConfig::peer("driver").connect(connect)).await.expect("start node");
    let sink = BENCH.poll_until("lookup sink", LIMIT, || async { node.lookup::<Counter>("sink").await.ok() }).await;
    Some(match Workload::parse(workload) {
        Workload::Tell(size) => {
            let send = async {
                for _ in 0..n {
                    sink.tell(Cmd::Blob(vec![0xab; size])).await.expect("tell");
                }
            };
            // FIFO: the first count asked after the tells is answered after all of them.
            BENCH.bounded(workload, LIMIT, BENCH.timed_delivery(n, send, || blobs(&sink))).await
        }
        Workload::Ask(tasks) => {
            let asks = concurrent(tasks, n / tasks, sink.clone(), |sink, _| async move {
                let answer = sink.ask(Query::Echo(vec![7; 16]), LIMIT).await.expect("ask Echo");
                assert_eq!(answer, Answer::Echo(vec![7; 16]));
            });
            BENCH.bounded(workload, LIMIT, asks).await
        }
        Workload::Lookup => {
            let at = sink.node_id();
            concurrent(1, n, node.clone(), move |node, _| async move {
                let found = node.lookup::<Counter>("sink").await.expect("lookup");
                assert_eq!(found.node_id(), at);
            })
            .await
        }
        Workload::Watch => {
            let down = node.monitor(&sink);
            println!("watching");
            let d = down.await;
            println!("down {:?}", d.reason);
            return None;
        }
    })
}
