//! `actors-remote-peers`: one side of a `weft-lab actors-remote` measurement for the peers —
//! kameo's `remote` feature (libp2p) and ractor_cluster — on the real tokio.
//!
//!     actors-remote-peers serve --system kameo|ractor --listen ENDPOINT
//!     actors-remote-peers drive --system kameo|ractor --connect ENDPOINT --workload W --n N
//!
//! Same command line, same JSON line and the same workloads as `actors-remote-bench`
//! (../actors-remote): `tell16`, `tell1k` (messages/s, every message counted by the receiver
//! before the clock stops), `ask1`, `ask64` (16-byte echo round trips at 1 or 64 outstanding,
//! p50/p99), `lookup` (the server actor's registered name resolved N times), `watch` (prints
//! `watching`, then `down REASON` the moment the server's death is noticed, or `down timeout`
//! after 10 s without a notice). ENDPOINT is Zenoh's form, `tcp/HOST:PORT`, as the lab passes
//! it; each side turns it into its own (a libp2p multiaddr, a socket address).
//!
//! Each side is written the way its own documentation shows (kameo's custom-swarm guide and
//! `examples/custom_swarm.rs`; ractor's `ractor_playground/src/distributed.rs`): this crate
//! measures the libraries as their users meet them, not tuned forks of them. The command
//! line, the loops that count and time and the JSON line are `bench-common`'s.

mod kameo_side;
mod ractor_side;

use std::time::Duration;

use bench_common::{report, Program};

/// This program, as its usage line and failures name it.
pub static BENCH: Program = Program {
    name: "actors-remote-peers",
    usage: "actors-remote-peers serve --system kameo|ractor --listen EP | drive --system kameo|ractor --connect EP --workload W --n N",
};

/// How long a `watch` driver waits for a notice before printing `down timeout`.
pub const WATCH_LIMIT: Duration = Duration::from_secs(10);

/// `tcp/HOST:PORT` (the lab's form) → `(HOST, PORT)`.
pub fn host_port(endpoint: &str) -> (String, u16) {
    let rest = endpoint.strip_prefix("tcp/").unwrap_or_else(|| BENCH.usage());
    let (host, port) = rest.rsplit_once(':').unwrap_or_else(|| BENCH.usage());
    (host.to_string(), port.parse().unwrap_or_else(|_| BENCH.usage()))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = BENCH.args(1000);
    let (endpoint, workload, n) = (&args.endpoint, &args.workload, args.n);
    match (args.mode.as_str(), args.system.as_str()) {
        ("serve", "kameo") => kameo_side::serve(endpoint).await,
        ("serve", "ractor") => ractor_side::serve(endpoint).await,
        ("drive", "kameo") => report(Some("kameo"), workload, kameo_side::drive(endpoint, workload, n)).await,
        ("drive", "ractor") => report(Some("ractor"), workload, ractor_side::drive(endpoint, workload, n)).await,
        _ => BENCH.usage(),
    }
    // Only a driver gets here. Both systems keep background tasks (a swarm, a node server)
    // that outlive main's future: leave without waiting for them.
    std::process::exit(0)
}
