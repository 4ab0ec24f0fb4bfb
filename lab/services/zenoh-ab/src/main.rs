//! `zenoh-ab`: one side of a `weft-lab zenoh-ab` measurement — Zenoh 1.10.2 written with its
//! documented API, built twice (`tokio/`: the real tokio; `weft/`: the same dependencies with
//! `[patch.crates-io] tokio = compat/tokio`), so the difference between the builds is the
//! runtime under Zenoh's five internal runtimes and under this program's own.
//!
//!     zenoh-ab serve --listen ENDPOINT
//!     zenoh-ab drive --connect ENDPOINT --workload put16|put1k|get1|get64 --n N
//!
//! `serve` declares a subscriber counting samples (`bench/sink`), an echo queryable
//! (`bench/echo`) and a queryable answering the count (`bench/count`), then prints
//! `listening on ADDR` and serves until killed. `drive` joins and runs one workload, printing
//! one JSON line: `put*` puts N samples (congestion control Block: nothing dropped) and stops
//! the clock only when the server has counted all N (asserted equal); `get*` runs N echo round
//! trips with 1 or 64 outstanding, each reply checked, with p50/p99.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zenoh::qos::CongestionControl;
use zenoh::{Config, Session};

/// The bound on every workload: a hung peer fails the run instead of hanging the lab.
const LIMIT: Duration = Duration::from_secs(60);

fn fail(what: &str) -> ! {
    eprintln!("zenoh-ab: {what}");
    std::process::exit(3)
}

fn usage() -> ! {
    fail("usage: zenoh-ab serve --listen EP | drive --connect EP --workload put16|put1k|get1|get64 --n N")
}

fn config(listen: Option<&str>, connect: Option<&str>) -> Config {
    let mut c = Config::default();
    let mut set = |k: &str, v: String| c.insert_json5(k, &v).unwrap_or_else(|e| fail(&format!("config {k}: {e}")));
    set("mode", "\"peer\"".into());
    set("scouting/multicast/enabled", "false".into());
    set("listen/endpoints", format!("[{:?}]", listen.unwrap_or("tcp/127.0.0.1:0")));
    if let Some(e) = connect {
        set("connect/endpoints", format!("[{e:?}]"));
    }
    c
}

async fn serve(listen: &str) {
    let s = zenoh::open(config(Some(listen), None)).await.unwrap_or_else(|e| fail(&format!("open: {e}")));
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    let _sink = s
        .declare_subscriber("bench/sink")
        .callback(move |_| {
            c.fetch_add(1, Ordering::Relaxed);
        })
        .await
        .unwrap_or_else(|e| fail(&format!("subscriber: {e}")));
    let echo = s.declare_queryable("bench/echo").await.unwrap_or_else(|e| fail(&format!("queryable: {e}")));
    let counter = s.declare_queryable("bench/count").await.unwrap_or_else(|e| fail(&format!("queryable: {e}")));
    tokio::spawn(async move {
        while let Ok(q) = counter.recv_async().await {
            let _ = q.reply(q.key_expr().clone(), count.load(Ordering::Relaxed).to_string()).await;
        }
    });
    println!("listening on {}", listen.trim_start_matches("tcp/"));
    while let Ok(q) = echo.recv_async().await {
        let payload = q.payload().map(|p| p.to_bytes().into_owned()).unwrap_or_default();
        let _ = q.reply(q.key_expr().clone(), payload).await;
    }
}

/// The server's count of samples received, if it answers.
async fn count(s: &Session) -> Option<u64> {
    let replies = s.get("bench/count").timeout(Duration::from_secs(5)).await.ok()?;
    let reply = replies.recv_async().await.ok()?;
    reply.result().ok()?.payload().try_to_string().ok()?.parse().ok()
}

/// What a workload measured.
struct Measured {
    ops: u64,
    took: Duration,
    latencies_us: Vec<f64>,
}

async fn put(s: &Session, size: usize, n: u64) -> Measured {
    let before = loop {
        if let Some(c) = count(s).await {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let publisher = s
        .declare_publisher("bench/sink")
        .congestion_control(CongestionControl::Block)
        .await
        .unwrap_or_else(|e| fail(&format!("publisher: {e}")));
    while !publisher.matching_status().await.is_ok_and(|m| m.matching()) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let payload = vec![0xabu8; size];
    let start = Instant::now();
    for _ in 0..n {
        publisher.put(payload.clone()).await.unwrap_or_else(|e| fail(&format!("put: {e}")));
    }
    // Samples and queries travel apart: poll until the server counted every sample.
    loop {
        let got = count(s).await.unwrap_or(before) - before;
        if got > n {
            fail(&format!("the server counted {got} samples of {n} put"));
        }
        if got == n {
            break;
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
    Measured { ops: n, took: start.elapsed(), latencies_us: Vec::new() }
}

async fn gets(s: &Session, outstanding: u64, n: u64) -> Measured {
    let per_task = n / outstanding;
    let start = Instant::now();
    let tasks: Vec<_> = (0..outstanding)
        .map(|t| {
            let s = s.clone();
            tokio::spawn(async move {
                let mut lat = Vec::with_capacity(per_task as usize);
                for i in 0..per_task {
                    let asked = (t * per_task + i).to_le_bytes();
                    let began = Instant::now();
                    let replies = s.get("bench/echo").payload(asked.to_vec()).timeout(LIMIT).await;
                    let replies = replies.unwrap_or_else(|e| fail(&format!("get: {e}")));
                    let reply = replies.recv_async().await.unwrap_or_else(|e| fail(&format!("no reply: {e}")));
                    let sample = reply.into_result().unwrap_or_else(|e| fail(&format!("error reply: {e:?}")));
                    if *sample.payload().to_bytes() != asked {
                        fail("a reply that does not echo its query");
                    }
                    lat.push(began.elapsed().as_secs_f64() * 1e6);
                }
                lat
            })
        })
        .collect();
    let mut latencies_us = Vec::new();
    for t in tasks {
        latencies_us.extend(t.await.unwrap_or_else(|e| fail(&format!("get task: {e}"))));
    }
    Measured { ops: per_task * outstanding, took: start.elapsed(), latencies_us }
}

/// This process's CPU (user + system) so far, seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // /proc reports clock ticks; Linux fixes USER_HZ at 100 for this interface.
    (ticks(11) + ticks(12)) / 100.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p / 100.0).round() as usize]
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| usage());
    let (mut endpoint, mut workload, mut n) = (String::new(), String::new(), 10_000u64);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--listen" | "--connect" => endpoint = value(),
            "--workload" => workload = value(),
            "--n" => n = value().parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    if mode == "serve" {
        return serve(&endpoint).await;
    }
    if mode != "drive" {
        usage();
    }
    let s = zenoh::open(config(None, Some(&endpoint))).await.unwrap_or_else(|e| fail(&format!("open: {e}")));
    let cpu0 = cpu_seconds();
    let run = async {
        match workload.as_str() {
            "put16" => put(&s, 16, n).await,
            "put1k" => put(&s, 1024, n).await,
            "get1" => gets(&s, 1, n).await,
            "get64" => gets(&s, 64, n).await,
            _ => usage(),
        }
    };
    let mut m = tokio::time::timeout(LIMIT, run).await.unwrap_or_else(|_| fail(&format!("{workload}: over {LIMIT:?}")));
    let cpu = cpu_seconds() - cpu0;
    m.latencies_us.sort_by(f64::total_cmp);
    println!(
        "{{\"workload\":\"{workload}\",\"ops\":{},\"secs\":{},\"driver_cpu_s\":{cpu},\"p50_us\":{},\"p99_us\":{}}}",
        m.ops,
        m.took.as_secs_f64(),
        percentile(&m.latencies_us, 50.0),
        percentile(&m.latencies_us, 99.0)
    );
}
