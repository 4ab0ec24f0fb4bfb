//! zenoh on weft, checked: zenoh peers in one process and across processes, written with
//! zenoh's documented API only, over loopback TCP (multicast scouting off, so nothing leaves the
//! machine). Checked, one line each:
//!
//! 1. pub/sub: 200 samples put by peer A reach peer B's subscriber in order, none lost;
//! 2. queryable: 50 `get` round trips from A to a queryable declared by B;
//! 3. liveliness: B sees A's token appear (subscriber and `get`) and disappear;
//! 4. zenoh's blocking `.wait()` API inside `spawn_blocking` and inside `block_in_place`;
//! 5. which runtime ran it all: weft answers `long_poll_count()`, tokio has no such metric;
//! 6. a child peer process: its token, samples echoed in order, `get` round trips;
//! 7. the child killed with SIGKILL: its token gone within the link lease (`processes.rs`);
//! 8. checks 1–4 again in child processes under two `ZENOH_RUNTIME` configurations.
//!
//! `Cargo.toml`'s `[patch.crates-io]` runs zenoh, quinn, tokio-util and the rest of the graph on
//! weft; `tokio/Cargo.toml` builds the same source on the real tokio, the baseline, and CI runs
//! both. Every wait is bounded (`STEP`), a watchdog thread bounds each process, and any failure
//! exits non-zero with the check's name.

use std::fmt::Display;
use std::future::{Future, IntoFuture};
use std::time::{Duration, Instant};

use zenoh::qos::CongestionControl;
use zenoh::sample::SampleKind;
use zenoh::{Config, Session, Wait};

mod processes;

/// The bound on every single wait.
const STEP: Duration = Duration::from_secs(10);
/// The bound on the whole program, enforced from a plain thread (in case a runtime hangs).
const WHOLE_RUN: Duration = Duration::from_secs(120);

const PUBSUB_SAMPLES: u32 = 200;
const QUERY_ROUND_TRIPS: u32 = 50;
const BLOCKING_SAMPLES: u32 = 20;

fn fail(what: &str) -> ! {
    eprintln!("zenoh: FAILED: {what}");
    std::process::exit(1)
}

trait OrFail<T> {
    fn or_fail(self, what: &str) -> T;
}

impl<T, E: Display> OrFail<T> for Result<T, E> {
    fn or_fail(self, what: &str) -> T {
        self.unwrap_or_else(|e| fail(&format!("{what}: {e}")))
    }
}

/// `fut`, or a failure naming `what` after `STEP`.
async fn within<T>(what: &str, fut: impl IntoFuture<Output = T>) -> T {
    tokio::time::timeout(STEP, fut).await.unwrap_or_else(|_| fail(&format!("{what}: nothing within {STEP:?}")))
}

/// Polls `cond` every 10 ms until it holds, for at most `STEP`.
async fn eventually<F: Future<Output = bool>>(what: &str, mut cond: impl FnMut() -> F) {
    let deadline = Instant::now() + STEP;
    while !cond().await {
        if Instant::now() >= deadline {
            fail(&format!("{what}: not within {STEP:?}"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn text(payload: &zenoh::bytes::ZBytes) -> String {
    payload.try_to_string().map(|s| s.into_owned()).unwrap_or_else(|e| format!("<not UTF-8: {e}>"))
}

fn free_loopback_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").or_fail("bind a probe socket on 127.0.0.1");
    probe.local_addr().or_fail("probe socket address").port()
}

/// A peer's configuration: loopback only, no multicast scouting.
fn peer_config(listen: &str, connect: Option<&str>) -> Config {
    let mut config = Config::default();
    let mut set = |key: &str, value: String| {
        config.insert_json5(key, &value).or_fail(&format!("config {key} = {value}"));
    };
    set("mode", r#""peer""#.into());
    set("scouting/multicast/enabled", "false".into());
    set("listen/endpoints", format!(r#"["{listen}"]"#));
    if let Some(endpoint) = connect {
        set("connect/endpoints", format!(r#"["{endpoint}"]"#));
    }
    config
}

/// Check 4's body, all through zenoh's blocking API: B subscribes, A publishes `BLOCKING_SAMPLES`
/// samples once it sees the subscriber, B receives them in order; then one `get` from A to the
/// queryable B declared in check 2. Called on a `spawn_blocking` thread and inside
/// `block_in_place`, where zenoh's `.wait()` blocks on its own runtimes.
fn blocking_round(a: &Session, b: &Session, key: &str) -> Result<(), String> {
    let deadline = Instant::now() + STEP;
    let subscriber = b.declare_subscriber(key).wait().map_err(|e| format!("declare_subscriber: {e}"))?;
    let publisher = a
        .declare_publisher(key)
        .congestion_control(CongestionControl::Block)
        .wait()
        .map_err(|e| format!("declare_publisher: {e}"))?;
    while !publisher.matching_status().wait().map_err(|e| format!("matching_status: {e}"))?.matching() {
        if Instant::now() >= deadline {
            return Err(format!("A's publisher never matched B's subscriber within {STEP:?}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    for i in 0..BLOCKING_SAMPLES {
        publisher.put(i.to_string()).wait().map_err(|e| format!("put {i}: {e}"))?;
    }
    for i in 0..BLOCKING_SAMPLES {
        let sample = subscriber
            .recv_timeout(STEP)
            .map_err(|e| format!("recv sample {i}: {e}"))?
            .ok_or_else(|| format!("sample {i} not received within {STEP:?}"))?;
        let got = text(sample.payload());
        if got != i.to_string() {
            return Err(format!("sample {i}: got {got:?}"));
        }
    }
    let replies =
        a.get("weft/conformance/query").payload("blocking").timeout(STEP).wait().map_err(|e| format!("get: {e}"))?;
    let reply = replies
        .recv_timeout(STEP)
        .map_err(|e| format!("get reply: {e}"))?
        .ok_or_else(|| format!("no reply to get within {STEP:?}"))?;
    let sample = reply.into_result().map_err(|e| format!("get replied with an error: {e:?}"))?;
    if text(sample.payload()) != "reply blocking" {
        return Err(format!("get replied {:?}", text(sample.payload())));
    }
    publisher.undeclare().wait().map_err(|e| format!("undeclare publisher: {e}"))?;
    subscriber.undeclare().wait().map_err(|e| format!("undeclare subscriber: {e}"))?;
    Ok(())
}

// Check 5 without giving up the tokio baseline: weft's `RuntimeMetrics` has an inherent
// `long_poll_count(&self) -> u64`, which method resolution prefers to a trait method of the same
// name; tokio's has none, so there this trait's method answers, with a type saying so. The same
// source thus compiles on both and reports which runtime it ran on.
#[allow(dead_code)] // on weft, the inherent method wins and this is never called
trait NoLongPollCount {
    fn long_poll_count(&self) -> NotWeft;
}
#[allow(dead_code)]
struct NotWeft;
impl NoLongPollCount for tokio::runtime::RuntimeMetrics {
    fn long_poll_count(&self) -> NotWeft {
        NotWeft
    }
}
trait LongPolls {
    fn long_polls(self) -> Option<u64>;
}
impl LongPolls for u64 {
    fn long_polls(self) -> Option<u64> {
        Some(self)
    }
}
impl LongPolls for NotWeft {
    fn long_polls(self) -> Option<u64> {
        None
    }
}

/// The `ZENOH_RUNTIME` configurations the in-process checks run under again, each in a child
/// process (zenoh reads the variable once, when its first runtime starts): zenoh's documented
/// example (rx and acc handed over to app), and one with more workers and net handed to tx.
/// With each, the zenoh runtimes whose threads must exist and those that must not (handed over).
const RUNTIME_CONFIGS: [(&str, &[&str], &[&str]); 2] = [
    (
        "(rx: (handover: app), acc: (handover: app), app: (worker_threads: 2), tx: (max_blocking_threads: 1))",
        &["app", "tx"],
        &["rx", "acc"],
    ),
    (
        "(app: (worker_threads: 4), rx: (worker_threads: 1), tx: (worker_threads: 2), net: (handover: tx))",
        &["app", "rx", "tx"],
        &["net"],
    ),
];

#[tokio::main]
async fn main() {
    zenoh::try_init_log_from_env(); // RUST_LOG=zenoh=debug, when a check needs looking into
    std::thread::spawn(|| {
        std::thread::sleep(WHOLE_RUN);
        eprintln!("zenoh: FAILED: the whole run took over {WHOLE_RUN:?}");
        std::process::exit(2);
    });
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => {
            in_process().await;
            processes::check().await;
            for (config, present, absent) in RUNTIME_CONFIGS {
                with_runtime_config(config, present, absent).await;
            }
        }
        ["in-process"] => {
            in_process().await;
            println!("zenoh runtimes: {}", zenoh_runtime_threads().join(" "));
        }
        ["peer-child", endpoint] => return processes::child(endpoint).await,
        _ => fail("usage: zenoh-template [in-process | peer-child ENDPOINT]"),
    }
    let (runtime, detail) = which_runtime();
    println!("runtime: {runtime} (Handle::current().metrics(): {detail})");
    println!("zenoh: ok ({runtime} runtime: {detail})");
}

/// The zenoh runtimes this process has threads of, with how many: `app:2 tx:3 …` (zenoh names
/// each runtime's threads `{runtime}-{n}` through `Builder::thread_name_fn`).
fn zenoh_runtime_threads() -> Vec<String> {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for entry in std::fs::read_dir("/proc/self/task").or_fail("/proc/self/task") {
        let comm = std::fs::read_to_string(entry.or_fail("task entry").path().join("comm")).unwrap_or_default();
        if let Some((name, n)) = comm.trim().rsplit_once('-') {
            if ["app", "acc", "tx", "rx", "net"].contains(&name) && n.parse::<u32>().is_ok() {
                *counts.entry(name.to_string()).or_default() += 1;
            }
        }
    }
    counts.into_iter().map(|(name, n)| format!("{name}:{n}")).collect()
}

/// Checks 1–4 again in a child process whose zenoh runtimes follow `config`: they pass, and
/// the runtimes `present` have threads there while those handed over (`absent`) have none.
async fn with_runtime_config(config: &'static str, present: &[&str], absent: &[&str]) {
    let exe = std::env::current_exe().or_fail("current_exe");
    let run = tokio::task::spawn_blocking(move || {
        std::process::Command::new(exe).arg("in-process").env("ZENOH_RUNTIME", config).output()
    });
    let out = within("a ZENOH_RUNTIME run", run).await.or_fail("join").or_fail("run with ZENOH_RUNTIME");
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !stdout.lines().any(|l| l.starts_with("zenoh: ok")) {
        fail(&format!("ZENOH_RUNTIME={config}: {}\n{stdout}{}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    let line = stdout.lines().find_map(|l| l.strip_prefix("zenoh runtimes: ")).unwrap_or_default();
    let has = |rt: &str| line.split(' ').any(|t| t.starts_with(&format!("{rt}:")));
    if !present.iter().all(|rt| has(rt)) || absent.iter().any(|rt| has(rt)) {
        fail(&format!(
            "ZENOH_RUNTIME={config}: runtimes with threads {line:?}; expected {present:?} and none of {absent:?}"
        ));
    }
    println!("ZENOH_RUNTIME: ok (checks 1-4 passed with ZENOH_RUNTIME='{config}'; runtime threads: {line})");
}

/// Check 5: which runtime ran it all.
fn which_runtime() -> (&'static str, String) {
    let metrics = tokio::runtime::Handle::current().metrics();
    match metrics.long_poll_count().long_polls() {
        Some(long_polls) => ("weft", format!("{} workers, {long_polls} long polls", metrics.num_workers())),
        None => ("tokio", format!("{} workers, no long_poll_count", metrics.num_workers())),
    }
}

/// Checks 1–4: two peers in this process.
async fn in_process() {
    // Two peers: A listens on a free loopback port, B connects to it.
    let endpoint = format!("tcp/127.0.0.1:{}", free_loopback_port());
    let a = within("open peer A", zenoh::open(peer_config(&endpoint, None))).await.or_fail("open peer A");
    let b = within("open peer B", zenoh::open(peer_config("tcp/127.0.0.1:0", Some(&endpoint))))
        .await
        .or_fail("open peer B");
    let (a_zid, b_zid) = (a.info().zid().await, b.info().zid().await);
    eventually("A and B connected to each other", || async {
        a.info().peers_zid().await.any(|z| z == b_zid) && b.info().peers_zid().await.any(|z| z == a_zid)
    })
    .await;

    // 1. pub/sub.
    let key = "weft/conformance/pubsub";
    let subscriber = within("B declare_subscriber", b.declare_subscriber(key)).await.or_fail("B declare_subscriber");
    let publisher =
        within("A declare_publisher", a.declare_publisher(key).congestion_control(CongestionControl::Block))
            .await
            .or_fail("A declare_publisher");
    eventually("A's publisher matching B's subscriber", || async {
        publisher.matching_status().await.or_fail("matching_status").matching()
    })
    .await;
    for i in 0..PUBSUB_SAMPLES {
        within("A put", publisher.put(i.to_string())).await.or_fail(&format!("A put {i}"));
    }
    for i in 0..PUBSUB_SAMPLES {
        let sample = within(&format!("pub/sub: B receiving sample {i}"), subscriber.recv_async())
            .await
            .or_fail(&format!("pub/sub: B receiving sample {i}"));
        let got = text(sample.payload());
        if got != i.to_string() || sample.key_expr().as_str() != key || sample.kind() != SampleKind::Put {
            fail(&format!("pub/sub: sample {i} arrived as {:?} {} {got:?}", sample.kind(), sample.key_expr()));
        }
    }
    within("undeclare publisher", publisher.undeclare()).await.or_fail("undeclare publisher");
    within("undeclare subscriber", subscriber.undeclare()).await.or_fail("undeclare subscriber");
    println!(
        "pub/sub: ok ({PUBSUB_SAMPLES} samples put by A received by B in order, none lost; \
         congestion control Block, reliable)"
    );

    // 2. queryable: B answers "reply <payload>" to each query.
    let key = "weft/conformance/query";
    let queryable = within("B declare_queryable", b.declare_queryable(key)).await.or_fail("B declare_queryable");
    let server = tokio::spawn(async move {
        while let Ok(query) = queryable.recv_async().await {
            let asked = query.payload().map(text).unwrap_or_default();
            if let Err(e) = query.reply(query.key_expr().clone(), format!("reply {asked}")).await {
                fail(&format!("queryable: reply to {asked:?}: {e}"));
            }
        }
    });
    let querier = within("A declare_querier", a.declare_querier(key)).await.or_fail("A declare_querier");
    eventually("A's querier matching B's queryable", || async {
        querier.matching_status().await.or_fail("querier matching_status").matching()
    })
    .await;
    within("undeclare querier", querier.undeclare()).await.or_fail("undeclare querier");
    for i in 0..QUERY_ROUND_TRIPS {
        let what = format!("queryable: get {i}");
        let replies = within(&what, a.get(key).payload(i.to_string()).timeout(STEP)).await.or_fail(&what);
        let reply = within(&what, replies.recv_async()).await.or_fail(&format!("{what}: no reply"));
        let sample = reply.into_result().unwrap_or_else(|e| fail(&format!("{what}: error reply {e:?}")));
        let got = text(sample.payload());
        if got != format!("reply {i}") {
            fail(&format!("{what}: replied {got:?}"));
        }
        // The channel closes after the final reply: exactly one reply per get.
        if let Ok(extra) = within(&what, replies.recv_async()).await {
            fail(&format!("{what}: a second reply {:?}", extra.result().map(|s| text(s.payload()))));
        }
    }
    println!("queryable: ok ({QUERY_ROUND_TRIPS} get round trips from A to B's queryable, one right reply each)");

    // 3. liveliness.
    let token_key = "weft/conformance/alive/a";
    let watch =
        within("B liveliness subscriber", b.liveliness().declare_subscriber("weft/conformance/alive/**").history(true))
            .await
            .or_fail("B liveliness subscriber");
    let token = within("A declare_token", a.liveliness().declare_token(token_key)).await.or_fail("A declare_token");
    let seen =
        within("liveliness: B seeing A's token appear", watch.recv_async()).await.or_fail("liveliness subscriber");
    if seen.kind() != SampleKind::Put || seen.key_expr().as_str() != token_key {
        fail(&format!("liveliness: first event {:?} {}", seen.kind(), seen.key_expr()));
    }
    let replies = within("liveliness get", b.liveliness().get("weft/conformance/alive/**").timeout(STEP))
        .await
        .or_fail("liveliness get");
    let reply = within("liveliness get: reply", replies.recv_async()).await.or_fail("liveliness get: no reply");
    let alive = reply.into_result().unwrap_or_else(|e| fail(&format!("liveliness get: error reply {e:?}")));
    if alive.key_expr().as_str() != token_key {
        fail(&format!("liveliness get: found {}", alive.key_expr()));
    }
    within("undeclare token", token.undeclare()).await.or_fail("undeclare token");
    let gone =
        within("liveliness: B seeing A's token disappear", watch.recv_async()).await.or_fail("liveliness subscriber");
    if gone.kind() != SampleKind::Delete || gone.key_expr().as_str() != token_key {
        fail(&format!("liveliness: second event {:?} {} (expected Delete)", gone.kind(), gone.key_expr()));
    }
    within("undeclare liveliness subscriber", watch.undeclare()).await.or_fail("undeclare liveliness subscriber");
    println!("liveliness: ok (B saw A's token appear, found it by get, saw it disappear on undeclare)");

    // 4. the blocking API, from a blocking-pool thread and from a worker inside block_in_place.
    let (a2, b2) = (a.clone(), b.clone());
    let on_pool = tokio::task::spawn_blocking(move || blocking_round(&a2, &b2, "weft/conformance/blocking/pool"));
    within("spawn_blocking round", on_pool)
        .await
        .or_fail("spawn_blocking round panicked")
        .unwrap_or_else(|e| fail(&format!("wait() inside spawn_blocking: {e}")));
    tokio::task::block_in_place(|| blocking_round(&a, &b, "weft/conformance/blocking/in-place"))
        .unwrap_or_else(|e| fail(&format!("wait() inside block_in_place: {e}")));
    println!(
        "blocking API: ok (.wait() declare/put/recv/get inside spawn_blocking and inside block_in_place, \
         {BLOCKING_SAMPLES} samples each)"
    );

    server.abort();
    within("close peer B", b.close()).await.or_fail("close peer B");
    within("close peer A", a.close()).await.or_fail("close peer A");
}
