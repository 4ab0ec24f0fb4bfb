//! Raw Zenoh, the floor: `bench_common::zenoh`'s server (a subscriber counting samples on
//! `bench/sink`, queryables echoing on `bench/echo` and answering the count on `bench/count`)
//! plus a liveliness token (`bench/alive/server`). What weft-actor-remote adds on top of these
//! is its cost.

use bench_common::zenoh::{count, echo, open, put_counted};
use bench_common::{concurrent, Measured, Workload, LIMIT};
use zenoh::sample::SampleKind;

use crate::BENCH;

pub async fn serve(listen: &str) {
    let s = open(&BENCH, Some(listen), None).await;
    let _token = s.liveliness().declare_token("bench/alive/server").await.expect("token");
    bench_common::zenoh::serve(&BENCH, &s, "ready").await
}

pub async fn drive(connect: &str, workload: &str, n: u64) -> Option<Measured> {
    let s = open(&BENCH, None, Some(connect)).await;
    BENCH.poll_until("reach the server", LIMIT, || count(&s)).await;
    Some(match Workload::parse(workload) {
        Workload::Tell(size) => BENCH.bounded(workload, LIMIT, put_counted(&BENCH, &s, size, n)).await,
        Workload::Ask(tasks) => {
            let asks = concurrent(tasks, n / tasks, s.clone(), |s, _| async move { echo(&BENCH, &s, &[7; 16]).await });
            BENCH.bounded(workload, LIMIT, asks).await
        }
        Workload::Lookup => {
            concurrent(1, n, s.clone(), |s, _| async move {
                let replies = s.liveliness().get("bench/alive/*").await.expect("liveliness get");
                let mut found = 0;
                while let Ok(r) = replies.recv_async().await {
                    found += r.result().is_ok() as u32;
                }
                assert_eq!(found, 1);
            })
            .await
        }
        Workload::Watch => {
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
    })
}
