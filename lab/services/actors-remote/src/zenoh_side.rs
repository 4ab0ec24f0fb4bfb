//! Raw Zenoh, the floor: a subscriber counting samples (`bench/sink`), a queryable echoing
//! (`bench/echo`) and one answering the count (`bench/count`), a liveliness token
//! (`bench/alive/server`). What weft-actor-remote adds on top of these is its cost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zenoh::qos::CongestionControl;
use zenoh::sample::SampleKind;
use zenoh::{Config, Session};

use crate::{bounded, concurrent, Measured};

const LIMIT: Duration = Duration::from_secs(60);

fn config(listen: Option<&str>, connect: Option<&str>) -> Config {
    let mut c = Config::default();
    let mut set = |k: &str, v: String| c.insert_json5(k, &v).expect("zenoh config");
    set("mode", "\"peer\"".into());
    set("scouting/multicast/enabled", "false".into());
    set("listen/endpoints", format!("[{:?}]", listen.unwrap_or("tcp/127.0.0.1:0")));
    if let Some(e) = connect {
        set("connect/endpoints", format!("[{e:?}]"));
    }
    c
}

pub async fn serve(listen: &str) {
    let s = zenoh::open(config(Some(listen), None)).await.expect("open");
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    let _sub = s.declare_subscriber("bench/sink").callback(move |_| {
        c.fetch_add(1, Ordering::Relaxed);
    });
    let _sub = _sub.await.expect("subscriber");
    let echo = s.declare_queryable("bench/echo").await.expect("queryable");
    let counter = s.declare_queryable("bench/count").await.expect("queryable");
    let _token = s.liveliness().declare_token("bench/alive/server").await.expect("token");
    weft::spawn(async move {
        while let Ok(q) = counter.recv_async().await {
            let n = count.load(Ordering::Relaxed);
            let _ = q.reply(q.key_expr().clone(), n.to_string()).await;
        }
    });
    println!("ready");
    while let Ok(q) = echo.recv_async().await {
        let payload = q.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
        let _ = q.reply(q.key_expr().clone(), payload).await;
    }
}

async fn count(s: &Session) -> Option<u64> {
    let replies = s.get("bench/count").timeout(Duration::from_secs(5)).await.ok()?;
    let reply = replies.recv_async().await.ok()?;
    reply.result().ok()?.payload().try_to_string().ok()?.parse().ok()
}

pub async fn drive(connect: &str, workload: &str, n: u64) -> Option<Measured> {
    let s = zenoh::open(config(None, Some(connect))).await.expect("open");
    let before = bounded("reach the server", LIMIT, async {
        loop {
            if let Some(c) = count(&s).await {
                return c;
            }
            weft::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    let tell = |size: usize| {
        let s = s.clone();
        async move {
            let publisher = s
                .declare_publisher("bench/sink")
                .congestion_control(CongestionControl::Block)
                .await
                .expect("publisher");
            while !publisher.matching_status().await.expect("matching").matching() {
                weft::time::sleep(Duration::from_millis(5)).await;
            }
            let start = Instant::now();
            for _ in 0..n {
                publisher.put(vec![0xabu8; size]).await.expect("put");
            }
            // Puts and queries are separate channels: poll until every sample was counted.
            loop {
                let got = count(&s).await.unwrap_or(0) - before;
                if got >= n {
                    assert_eq!(got, n, "the receiver counted {got} of {n} samples");
                    break;
                }
                weft::time::sleep(Duration::from_micros(200)).await;
            }
            Measured { ops: n, took: start.elapsed(), latencies_us: Vec::new() }
        }
    };
    let asks = |tasks: u64| {
        let s = s.clone();
        concurrent(tasks, n / tasks, move || {
            let s = s.clone();
            async move {
                let replies = s.get("bench/echo").payload(vec![7u8; 16]).timeout(LIMIT).await.expect("get");
                let reply = replies.recv_async().await.expect("reply");
                assert_eq!(&*reply.result().expect("ok reply").payload().to_bytes(), &[7u8; 16]);
            }
        })
    };
    Some(match workload {
        "tell16" => bounded("tell16", LIMIT, tell(16)).await,
        "tell1k" => bounded("tell1k", LIMIT, tell(1024)).await,
        "ask1" => bounded("ask1", LIMIT, asks(1)).await,
        "ask64" => bounded("ask64", LIMIT, asks(64)).await,
        "lookup" => {
            let s = s.clone();
            concurrent(1, n, move || {
                let s = s.clone();
                async move {
                    let replies = s.liveliness().get("bench/alive/*").await.expect("liveliness get");
                    let mut found = 0;
                    while let Ok(r) = replies.recv_async().await {
                        found += r.result().is_ok() as u32;
                    }
                    assert_eq!(found, 1);
                }
            })
            .await
        }
        "watch" => {
            let sub = s.liveliness().declare_subscriber("bench/alive/server").history(true).await.expect("subscriber");
            let first = sub.recv_async().await.expect("token");
            assert_eq!(first.kind(), SampleKind::Put);
            println!("watching");
            while let Ok(sample) = sub.recv_async().await {
                if sample.kind() == SampleKind::Delete {
                    println!("down NoConnection");
                    return None;
                }
            }
            return None;
        }
        other => panic!("unknown workload {other}"),
    })
}
