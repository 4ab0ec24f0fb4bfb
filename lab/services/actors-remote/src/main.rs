//! `actors-remote-bench`: one side of a `weft-lab actors-remote` measurement.
//!
//!     actors-remote-bench serve --system weft|zenoh --listen ENDPOINT
//!     actors-remote-bench drive --system weft|zenoh --connect ENDPOINT --workload W --n N
//!
//! `serve` prints `ready` once it accepts and runs until killed. `drive` joins, runs one
//! workload and prints one JSON line (`tell16`, `tell1k`: messages/s, every message counted by
//! the receiver before the clock stops; `ask1`, `ask64`: round trips at 1 or 64 outstanding,
//! p50/p99; `lookup`: names resolved; `watch`: prints `watching`, then `down` the moment the
//! server's death is noticed — the lab kills the server and times the gap). The command line,
//! the loops that count and time and the JSON line are `bench-common`'s, shared with
//! `actors-remote-peers` and `zenoh-ab`.

mod weft_side;
mod zenoh_side;

use bench_common::{report, Program};

/// This program, as its usage line and failures name it.
pub static BENCH: Program = Program {
    name: "actors-remote-bench",
    usage: "actors-remote-bench serve --system weft|zenoh --listen EP | drive --system weft|zenoh --connect EP --workload W --n N",
};

#[weft::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = BENCH.args(1000);
    let (endpoint, workload, n) = (&args.endpoint, &args.workload, args.n);
    match (args.mode.as_str(), args.system.as_str()) {
        ("serve", "weft") => weft_side::serve(endpoint).await,
        ("serve", "zenoh") => zenoh_side::serve(endpoint).await,
        ("drive", "weft") => report(Some("weft"), workload, weft_side::drive(endpoint, workload, n)).await,
        ("drive", "zenoh") => report(Some("zenoh"), workload, zenoh_side::drive(endpoint, workload, n)).await,
        _ => BENCH.usage(),
    }
}
