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
//! trips with 1 or 64 outstanding, each reply checked, with p50/p99. The server, the driver's
//! calls, the command line, the loops that count and time and the JSON line are
//! `bench-common`'s (its `zenoh` module is also `actors-remote`'s raw-Zenoh floor).

use bench_common::zenoh::{echo, open, put_counted, serve};
use bench_common::{concurrent, report, Measured, Program, LIMIT};
use zenoh::Session;

/// This program, as its usage line and failures name it.
static BENCH: Program = Program {
    name: "zenoh-ab",
    usage: "zenoh-ab serve --listen EP | drive --connect EP --workload put16|put1k|get1|get64 --n N",
};

/// `n` echo round trips, `outstanding` at a time. Each query's payload is its own index, so a
/// reply to any other query fails the check.
async fn gets(s: &Session, outstanding: u64, n: u64) -> Measured {
    concurrent(outstanding, n / outstanding, s.clone(), |s, i| async move { echo(&BENCH, &s, &i.to_le_bytes()).await })
        .await
}

#[tokio::main]
async fn main() {
    let args = BENCH.args(10_000);
    if !args.system.is_empty() {
        BENCH.usage();
    }
    match args.mode.as_str() {
        "serve" => {
            let s = open(&BENCH, Some(&args.endpoint), None).await;
            serve(&BENCH, &s, &format!("listening on {}", args.endpoint.trim_start_matches("tcp/"))).await
        }
        "drive" => {
            let s = open(&BENCH, None, Some(&args.endpoint)).await;
            let (workload, n) = (args.workload.as_str(), args.n);
            let run = async {
                match workload {
                    "put16" => put_counted(&BENCH, &s, 16, n).await,
                    "put1k" => put_counted(&BENCH, &s, 1024, n).await,
                    "get1" => gets(&s, 1, n).await,
                    "get64" => gets(&s, 64, n).await,
                    _ => BENCH.usage(),
                }
            };
            report(None, workload, async { Some(BENCH.bounded(workload, LIMIT, run).await) }).await
        }
        _ => BENCH.usage(),
    }
}
