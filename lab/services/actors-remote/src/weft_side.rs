//! weft-actor-remote: a `demo::Counter` served as `sink`; tells carry `Blob`s, asks `Echo`.

use std::time::{Duration, Instant};

use weft_actor_remote::demo::{Answer, Cmd, Counter, Query};
use weft_actor_remote::{Node, NodeConfig, RemoteRef};

use crate::{bounded, concurrent, Measured};

const LIMIT: Duration = Duration::from_secs(60);

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
    let sink = bounded("lookup sink", LIMIT, async {
        loop {
            if let Ok(s) = node.lookup::<Counter>("sink").await {
                return s;
            }
            weft::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let tell = |size: usize| {
        let sink = sink.clone();
        async move {
            let before = blobs(&sink).await;
            let start = Instant::now();
            for _ in 0..n {
                sink.tell(Cmd::Blob(vec![0xab; size])).await.expect("tell");
            }
            // FIFO: this ask is answered after every tell above was handled.
            let after = blobs(&sink).await;
            assert_eq!(after - before, n, "the receiver counted {} of {n} tells", after - before);
            Measured { ops: n, took: start.elapsed(), latencies_us: Vec::new() }
        }
    };
    let asks = |tasks: u64| {
        let sink = sink.clone();
        concurrent(tasks, n / tasks, move || {
            let sink = sink.clone();
            async move {
                let answer = sink.ask(Query::Echo(vec![7; 16]), LIMIT).await.expect("ask Echo");
                assert_eq!(answer, Answer::Echo(vec![7; 16]));
            }
        })
    };
    Some(match workload {
        "tell16" => bounded("tell16", LIMIT, tell(16)).await,
        "tell1k" => bounded("tell1k", LIMIT, tell(1024)).await,
        "ask1" => bounded("ask1", LIMIT, asks(1)).await,
        "ask64" => bounded("ask64", LIMIT, asks(64)).await,
        "lookup" => {
            let (node, at) = (node.clone(), sink.node_id());
            concurrent(1, n, move || {
                let node = node.clone();
                async move {
                    let found = node.lookup::<Counter>("sink").await.expect("lookup");
                    assert_eq!(found.node_id(), at);
                }
            })
            .await
        }
        "watch" => {
            let down = node.monitor(&sink);
            println!("watching");
            let d = down.await;
            println!("down {:?}", d.reason);
            return None;
        }
        other => panic!("unknown workload {other}"),
    })
}
