//! The separate-process checks: this program started again as a child peer (`peer-child`),
//! talking to the parent over loopback TCP, then killed with SIGKILL.
//!
//! The child connects to the parent's listening peer and declares three things: a liveliness
//! token, a subscriber that republishes every sample it receives on a second key (in order,
//! congestion control Block), and a queryable. The parent checks, one line each:
//!
//! 6. the child's token appears; 200 samples put by the parent come back echoed in order; 50
//!    `get` round trips to the child's queryable answer right;
//! 7. after SIGKILL the child's token disappears within the link lease (`LEASE`).
//!
//! The child exits when its stdin closes, so a parent that dies early leaves no child behind.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use zenoh::qos::CongestionControl;
use zenoh::sample::SampleKind;

use crate::{eventually, fail, free_loopback_port, peer_config, text, within, OrFail};

/// The link lease both processes announce: a peer silent this long is declared gone.
pub const LEASE: Duration = Duration::from_secs(3);
const ECHOED_SAMPLES: u32 = 200;
const CHILD_GETS: u32 = 50;

const TOKEN: &str = "weft/conformance/proc/alive/child";
const TO_CHILD: &str = "weft/conformance/proc/to-child";
const FROM_CHILD: &str = "weft/conformance/proc/from-child";
const CHILD_QUERY: &str = "weft/conformance/proc/query";

/// A child process, killed on drop (a failing check must not leave it running).
struct ChildPeer(Child);

impl Drop for ChildPeer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn with_lease(mut config: zenoh::Config) -> zenoh::Config {
    let lease = LEASE.as_millis().to_string();
    config.insert_json5("transport/link/tx/lease", &lease).or_fail("config transport/link/tx/lease");
    config
}

/// The child's side: serve until stdin closes or the process is killed.
pub async fn child(connect: &str) {
    let s = within("child: open", zenoh::open(with_lease(peer_config("tcp/127.0.0.1:0", Some(connect)))))
        .await
        .or_fail("child: open");
    let echo = within(
        "child: declare_publisher",
        s.declare_publisher(FROM_CHILD).congestion_control(CongestionControl::Block),
    )
    .await
    .or_fail("child: declare_publisher");
    let incoming =
        within("child: declare_subscriber", s.declare_subscriber(TO_CHILD)).await.or_fail("child: subscriber");
    let queryable =
        within("child: declare_queryable", s.declare_queryable(CHILD_QUERY)).await.or_fail("child: queryable");
    let _token = within("child: declare_token", s.liveliness().declare_token(TOKEN)).await.or_fail("child: token");
    tokio::spawn(async move {
        while let Ok(q) = queryable.recv_async().await {
            let asked = q.payload().map(text).unwrap_or_default();
            q.reply(q.key_expr().clone(), format!("child {asked}")).await.or_fail("child: reply");
        }
    });
    tokio::spawn(async move {
        while let Ok(sample) = incoming.recv_async().await {
            echo.put(text(sample.payload())).await.or_fail("child: echo put");
        }
    });
    // Blocks a blocking-pool thread, not a worker, until the parent closes our stdin.
    let _ = tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink())).await;
}

fn spawn_child(endpoint: &str) -> ChildPeer {
    let exe = std::env::current_exe().or_fail("current_exe");
    let child = Command::new(exe)
        .args(["peer-child", endpoint])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .or_fail("spawn the child peer");
    ChildPeer(child)
}

/// The parent's side: checks 6 and 7.
pub async fn check() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_loopback_port());
    let p = within("parent: open", zenoh::open(with_lease(peer_config(&endpoint, None)))).await.or_fail("parent: open");
    let watch = within("parent: liveliness subscriber", p.liveliness().declare_subscriber(TOKEN).history(true))
        .await
        .or_fail("parent: liveliness subscriber");
    let echoed = within("parent: subscriber", p.declare_subscriber(FROM_CHILD)).await.or_fail("parent: subscriber");
    let mut child = spawn_child(&endpoint);

    let seen = within("processes: the child's token appearing", watch.recv_async()).await.or_fail("liveliness");
    if seen.kind() != SampleKind::Put || seen.key_expr().as_str() != TOKEN {
        fail(&format!("processes: first liveliness event {:?} {}", seen.kind(), seen.key_expr()));
    }
    let publisher =
        within("parent: publisher", p.declare_publisher(TO_CHILD).congestion_control(CongestionControl::Block))
            .await
            .or_fail("parent: publisher");
    eventually("parent's publisher matching the child's subscriber", || async {
        publisher.matching_status().await.or_fail("matching_status").matching()
    })
    .await;
    // The child's echo publisher may match our subscriber later than its subscriber matched
    // us: a first sample could be echoed into the void. Probe until one comes back.
    let mut probes = 0;
    loop {
        within("probe put", publisher.put("probe")).await.or_fail("probe put");
        probes += 1;
        match tokio::time::timeout(Duration::from_millis(100), echoed.recv_async()).await {
            Ok(Ok(s)) if text(s.payload()) == "probe" => break,
            Ok(Ok(s)) => fail(&format!("processes: echo of a probe came back as {:?}", text(s.payload()))),
            _ if probes >= 100 => fail("processes: no probe came back from the child in 10 s"),
            _ => {}
        }
    }
    // Late echoes of earlier probes, if any, come before the numbered samples.
    while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(200), echoed.recv_async()).await {}
    for i in 0..ECHOED_SAMPLES {
        within("parent put", publisher.put(i.to_string())).await.or_fail(&format!("parent put {i}"));
    }
    for i in 0..ECHOED_SAMPLES {
        let what = format!("processes: echo of sample {i}");
        let sample = within(&what, echoed.recv_async()).await.or_fail(&what);
        if text(sample.payload()) != i.to_string() {
            fail(&format!("{what}: got {:?}", text(sample.payload())));
        }
    }
    for i in 0..CHILD_GETS {
        let what = format!("processes: get {i} to the child's queryable");
        let replies =
            within(&what, p.get(CHILD_QUERY).payload(i.to_string()).timeout(crate::STEP)).await.or_fail(&what);
        let reply = within(&what, replies.recv_async()).await.or_fail(&what);
        let got = reply.into_result().map(|s| text(s.payload())).unwrap_or_else(|e| fail(&format!("{what}: {e:?}")));
        if got != format!("child {i}") {
            fail(&format!("{what}: replied {got:?}"));
        }
    }
    println!(
        "processes: ok (a child peer process: its token seen, {ECHOED_SAMPLES} samples echoed back in order, \
         {CHILD_GETS} get round trips)"
    );

    child.0.kill().or_fail("SIGKILL the child");
    let killed = Instant::now();
    let gone =
        within("processes: the killed child's token disappearing", watch.recv_async()).await.or_fail("liveliness");
    let took = killed.elapsed();
    if gone.kind() != SampleKind::Delete || gone.key_expr().as_str() != TOKEN {
        fail(&format!("processes: after SIGKILL, liveliness event {:?} {}", gone.kind(), gone.key_expr()));
    }
    if took > LEASE {
        fail(&format!("processes: the killed child was seen gone after {took:?}, beyond the {LEASE:?} lease"));
    }
    println!("SIGKILL: ok (the child's token disappeared {took:.1?} after SIGKILL; lease {LEASE:?})");
    drop(child);
    within("parent: close", p.close()).await.or_fail("parent: close");
}
