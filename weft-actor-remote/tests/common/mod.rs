//! Shared by the tests: free loopback ports, nodes joined to each other, and polling helpers.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use weft_actor_remote::{demo::Counter, LookupError, Node, NodeConfig, RemoteRef};

pub const STEP: Duration = Duration::from_secs(10);

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn endpoint() -> String {
    format!("tcp/127.0.0.1:{}", free_port())
}

/// A node listening on `listen`, connected to `connect`, with a short lease.
pub async fn node(name: &str, listen: &str, connect: &[&str]) -> Node {
    let mut c = NodeConfig::peer(name).listen(listen).lease(Duration::from_millis(1000));
    for e in connect {
        c = c.connect(e);
    }
    Node::start(c).await.unwrap()
}

/// Polls `f` until it returns `Some`, at most `STEP`.
pub async fn eventually<T, F: std::future::Future<Output = Option<T>>>(what: &str, mut f: impl FnMut() -> F) -> T {
    let deadline = Instant::now() + STEP;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {STEP:?}");
        weft::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Looks `name` up until it resolves (names propagate through Zenoh).
pub async fn lookup(node: &Node, name: &str) -> RemoteRef<Counter> {
    eventually(&format!("lookup {name}"), || async {
        match node.lookup::<Counter>(name).await {
            Ok(r) => Some(r),
            Err(LookupError::NotFound) | Err(LookupError::Timeout) => None,
            Err(e) => panic!("lookup {name}: {e}"),
        }
    })
    .await
}
