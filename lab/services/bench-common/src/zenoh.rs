//! Raw Zenoh as both Zenoh programs use it (`zenoh-ab`, and `actors-remote`'s floor under
//! weft-actor-remote): peers with multicast scouting off that reach each other by the
//! endpoints the lab passes; a server with a subscriber counting samples (`bench/sink`), a
//! queryable answering that count (`bench/count`) and one echoing each query's payload
//! (`bench/echo`); and the driver's calls to each. Any Zenoh error fails the process.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zenoh::qos::CongestionControl;
use zenoh::{Config, Session};

use crate::{Measured, Program, LIMIT};

/// Opens a peer session listening on `listen` (any loopback port when `None`) and, when
/// given, connecting to `connect`.
pub async fn open(program: &Program, listen: Option<&str>, connect: Option<&str>) -> Session {
    let mut c = Config::default();
    let mut set =
        |k: &str, v: String| c.insert_json5(k, &v).unwrap_or_else(|e| program.fail(format_args!("config {k}: {e}")));
    set("mode", "\"peer\"".into());
    set("scouting/multicast/enabled", "false".into());
    set("listen/endpoints", format!("[{:?}]", listen.unwrap_or("tcp/127.0.0.1:0")));
    if let Some(e) = connect {
        set("connect/endpoints", format!("[{e:?}]"));
    }
    zenoh::open(c).await.unwrap_or_else(|e| program.fail(format_args!("open: {e}")))
}

/// Declares the server's subscriber and queryables on `s`, prints `ready` (the line the lab
/// waits for), then answers echoes until the session closes.
pub async fn serve(program: &Program, s: &Session, ready: &str) {
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    let _sink = s
        .declare_subscriber("bench/sink")
        .callback(move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        })
        .await
        .unwrap_or_else(|e| program.fail(format_args!("subscriber: {e}")));
    let echo = s.declare_queryable("bench/echo").await.unwrap_or_else(|e| program.fail(format_args!("queryable: {e}")));
    let counter =
        s.declare_queryable("bench/count").await.unwrap_or_else(|e| program.fail(format_args!("queryable: {e}")));
    tokio::spawn(async move {
        while let Ok(q) = counter.recv_async().await {
            let _ = q.reply(q.key_expr().clone(), count.load(Ordering::Relaxed).to_string()).await;
        }
    });
    println!("{ready}");
    while let Ok(q) = echo.recv_async().await {
        let payload = q.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
        let _ = q.reply(q.key_expr().clone(), payload).await;
    }
}

/// The server's count of samples received, if it answers within 5 s.
pub async fn count(s: &Session) -> Option<u64> {
    let replies = s.get("bench/count").timeout(Duration::from_secs(5)).await.ok()?;
    let reply = replies.recv_async().await.ok()?;
    reply.result().ok()?.payload().try_to_string().ok()?.parse().ok()
}

/// Puts `n` samples of `size` bytes on `bench/sink` (congestion control Block: nothing is
/// dropped) and times them until the server has counted all `n` ([`Program::timed_delivery`]:
/// samples and count queries travel apart). The clock starts once the publisher matches the
/// server's subscriber.
pub async fn put_counted(program: &Program, s: &Session, size: usize, n: u64) -> Measured {
    let publisher = s
        .declare_publisher("bench/sink")
        .congestion_control(CongestionControl::Block)
        .await
        .unwrap_or_else(|e| program.fail(format_args!("publisher: {e}")));
    while !publisher.matching_status().await.is_ok_and(|m| m.matching()) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let send = async {
        for _ in 0..n {
            publisher.put(vec![0xabu8; size]).await.unwrap_or_else(|e| program.fail(format_args!("put: {e}")));
        }
    };
    program.timed_delivery(n, send, || count(s)).await
}

/// One round trip to `bench/echo`; fails the process unless the reply echoes `payload`.
pub async fn echo(program: &Program, s: &Session, payload: &[u8]) {
    let replies = s.get("bench/echo").payload(payload.to_vec()).timeout(LIMIT).await;
    let replies = replies.unwrap_or_else(|e| program.fail(format_args!("get: {e}")));
    let reply = replies.recv_async().await.unwrap_or_else(|e| program.fail(format_args!("no reply: {e}")));
    let sample = reply.into_result().unwrap_or_else(|e| program.fail(format_args!("error reply: {e:?}")));
    if *sample.payload().to_bytes() != *payload {
        program.fail("a reply that does not echo its query");
    }
}
