//! Three nodes in three processes on loopback: this test (node C) and two `weft-actor-node`
//! children (A and B). Remote tell/ask, monitors firing on a remote stop, a remote panic and
//! a SIGKILL of a whole node, and a killed node's name served again by its replacement.
//! A node at full CPU for a soak is never declared down.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{endpoint, lookup, node, STEP};
use weft_actor_remote::demo::{Answer, Cmd, Query};
use weft_actor_remote::{
    NodeId, Reason, RemoteChild, RemoteError, RemoteSupervisorEvent as Ev, RemoteSupervisorSpec, Strategy,
};

/// A child node, killed (SIGKILL) on drop.
struct Proc {
    child: Child,
    id: NodeId,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_node(name: &str, listen: &str, connect: &[&str], serve: &[&str]) -> Proc {
    spawn_node_with(name, listen, connect, serve, &[]).0
}

/// As `spawn_node`, with `extra` arguments, also returning the child's stdout after `ready`.
fn spawn_node_with(
    name: &str,
    listen: &str,
    connect: &[&str],
    serve: &[&str],
    extra: &[&str],
) -> (Proc, BufReader<std::process::ChildStdout>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_weft-actor-node"));
    cmd.args(["--name", name, "--listen", listen, "--lease-ms", "1000"]).args(extra);
    for c in connect {
        cmd.args(["--connect", c]);
    }
    for s in serve {
        cmd.args(["--serve", s]);
    }
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    out.read_line(&mut line).unwrap();
    let id = line.strip_prefix("ready ").and_then(|l| l.trim().parse().ok());
    let Some(id) = id else {
        let _ = child.kill();
        panic!("{name}: expected `ready ID`, got {line:?}");
    };
    (Proc { child, id }, out)
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_processes_tell_ask_monitor_and_survive_a_sigkill() {
    let (ep_a, ep_b) = (endpoint(), endpoint());
    let a = spawn_node("a", &ep_a, &[], &["alpha", "alpha-panics"]);
    let mut b = spawn_node("b", &ep_b, &[&ep_a], &["beta"]);
    let c = node("c", &endpoint(), &[&ep_a, &ep_b]).await;

    let alpha = lookup(&c, "alpha").await;
    let beta = lookup(&c, "beta").await;
    assert_eq!((alpha.node_id(), beta.node_id()), (a.id, b.id));
    for seq in 0..500 {
        alpha.tell(Cmd::Add { seq, n: 2 }).await.unwrap();
    }
    let got = alpha.ask(Query::Get, STEP).await.unwrap();
    assert_eq!(got, Answer::State { total: 1000, count: 500, in_order: true, blobs: 0 });

    // A remote panic and a remote stop, each seen once with its reason.
    let panics = lookup(&c, "alpha-panics").await;
    let (m_panic, m_stop) = (c.monitor(&panics), c.monitor(&alpha));
    assert!(matches!(panics.ask(Query::Get, STEP).await, Ok(Answer::State { .. })));
    assert!(matches!(alpha.ask(Query::Get, STEP).await, Ok(Answer::State { .. })));
    panics.tell(Cmd::Panic("remote boom".into())).await.unwrap();
    alpha.tell(Cmd::Stop).await.unwrap();
    assert_eq!(weft::time::timeout(STEP, m_panic).await.unwrap().reason, Reason::Panic("remote boom".into()));
    assert_eq!(weft::time::timeout(STEP, m_stop).await.unwrap().reason, Reason::Normal);

    // SIGKILL of node B: its monitor fires NoConnection (the connection closes at once; a
    // silent peer would take its 1 s lease), asks fail, the name is gone.
    let m_beta = c.monitor(&beta);
    assert!(matches!(beta.ask(Query::Get, STEP).await, Ok(Answer::State { .. })));
    let killed = Instant::now();
    b.child.kill().unwrap();
    let down = weft::time::timeout(STEP, m_beta).await.unwrap();
    let detected = killed.elapsed();
    assert_eq!((down.reason, down.node), (Reason::NoConnection, b.id));
    eprintln!("SIGKILL to monitor notice: {detected:?}");
    assert!(detected < Duration::from_secs(5), "detection took {detected:?}");
    assert_eq!(beta.ask(Query::Get, STEP).await.unwrap_err(), RemoteError::NodeDown);

    // B's replacement serves "beta" again: the name resolves to the new incarnation.
    let b2 = spawn_node("b2", &endpoint(), &[&ep_a], &["beta"]);
    let beta2 = lookup(&c, "beta").await;
    assert_eq!(beta2.node_id(), b2.id);
    assert_ne!(b2.id, b.id);
    assert_eq!(
        beta2.ask(Query::Get, STEP).await.unwrap(),
        Answer::State { total: 0, count: 0, in_order: true, blobs: 0 }
    );
    drop(a);
}

/// SIGSTOP: the node's connections stay open but it says nothing. It is declared down within
/// its lease, and when it resumes (SIGCONT) it is back with the same id and the same actor,
/// its state intact, while the monitor that fired stays fired.
#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_node_is_declared_down_within_its_lease_and_heals() {
    let ep_a = endpoint();
    let a = spawn_node("a", &ep_a, &[], &["gamma"]);
    let c = node("c", &endpoint(), &[&ep_a]).await;
    let gamma = lookup(&c, "gamma").await;
    gamma.tell(Cmd::Add { seq: 0, n: 41 }).await.unwrap();
    assert!(matches!(gamma.ask(Query::Get, STEP).await, Ok(Answer::State { total: 41, .. })));
    let monitor = c.monitor(&gamma);
    let pid = a.child.id().to_string();
    let signal = |sig: &str| assert!(Command::new("kill").args([sig, &pid]).status().unwrap().success());
    let stopped = Instant::now();
    signal("-STOP");
    let down = weft::time::timeout(STEP, monitor).await.unwrap();
    let detected = stopped.elapsed();
    signal("-CONT");
    eprintln!("SIGSTOP to monitor notice: {detected:?} (lease 1 s)");
    assert_eq!((down.reason, down.node), (Reason::NoConnection, a.id));
    assert!(detected >= Duration::from_millis(500), "declared down after {detected:?}, before its lease");
    assert!(detected < Duration::from_secs(6), "declared down only after {detected:?}");
    // Healed: the same node, the same incarnation, its state kept.
    let again = common::eventually("A back after SIGCONT", || async {
        match gamma.ask(Query::Get, Duration::from_secs(1)).await {
            Ok(answer) => Some(answer),
            Err(RemoteError::NodeDown) | Err(RemoteError::Timeout) => None,
            Err(e) => panic!("ask after heal: {e}"),
        }
    })
    .await;
    assert_eq!(again, Answer::State { total: 41, count: 1, in_order: true, blobs: 0 });
    assert_eq!(lookup(&c, "gamma").await.serve_id(), gamma.serve_id());
    drop(a);
}

/// A supervisor on this node (S) places a child on node B; the child's panic restarts it on B;
/// B's SIGKILL restarts it on A, the next node of its placement, and its name then resolves
/// to the new incarnation there.
#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_supervisor_restarts_a_child_of_a_killed_node_elsewhere() {
    let (ep_a, ep_b) = (endpoint(), endpoint());
    let a = spawn_node("a", &ep_a, &[], &[]);
    let mut b = spawn_node("b", &ep_b, &[&ep_a], &[]);
    let s = node("s", &endpoint(), &[&ep_a, &ep_b]).await;
    common::eventually("S sees A and B", || async {
        let n = s.nodes();
        (n.contains(&a.id) && n.contains(&b.id)).then_some(())
    })
    .await;
    let spec = RemoteSupervisorSpec::new(Strategy::OneForOne)
        // A period no run of this test outlasts, however loaded the machine: the escalation
        // below must come from the count alone.
        .intensity(3, Duration::from_secs(600))
        .child(RemoteChild::new("worker", "counter", &()).on(&[b.id, a.id]));
    let mut sup = s.supervise(spec);
    let Ev::Started { node, serve_id: first, .. } = next(&mut sup).await else { panic!("expected Started") };
    assert_eq!(node, b.id);
    let worker = lookup(&s, "worker").await;
    assert_eq!((worker.node_id(), worker.serve_id()), (b.id, first));

    worker.tell(Cmd::Panic("child fault".into())).await.unwrap();
    assert_eq!(
        next(&mut sup).await,
        Ev::Exited { child: "worker".into(), node: b.id, reason: Reason::Panic("child fault".into()) }
    );
    let Ev::Restarted { node, serve_id: second, .. } = next(&mut sup).await else { panic!("expected Restarted") };
    assert_eq!(node, b.id, "a panic restarts the child on its own node");
    assert_ne!(second, first);

    b.child.kill().unwrap();
    assert_eq!(next(&mut sup).await, Ev::Exited { child: "worker".into(), node: b.id, reason: Reason::NoConnection });
    let Ev::Restarted { node, serve_id: third, .. } = next(&mut sup).await else { panic!("expected Restarted") };
    assert_eq!(node, a.id, "B is gone: the next node of the placement");
    let worker = common::eventually("worker resolves to A", || async {
        s.lookup::<weft_actor_remote::demo::Counter>("worker").await.ok().filter(|w| w.node_id() == a.id)
    })
    .await;
    assert_eq!(worker.serve_id(), third);
    worker.tell(Cmd::Add { seq: 0, n: 9 }).await.unwrap();
    assert!(matches!(worker.ask(Query::Get, STEP).await, Ok(Answer::State { total: 9, .. })));

    // Restarts so far: 2 of 3 allowed in the period. One more is allowed; the next escalates,
    // which stops the child.
    let mut current = third;
    for expect_escalation in [false, true] {
        let w = common::eventually("worker resolves to its newest incarnation", || async {
            s.lookup::<weft_actor_remote::demo::Counter>("worker").await.ok().filter(|w| w.serve_id() == current)
        })
        .await;
        w.tell(Cmd::Panic("again".into())).await.unwrap();
        let exited = next(&mut sup).await;
        assert_eq!(exited, Ev::Exited { child: "worker".into(), node: a.id, reason: Reason::Panic("again".into()) });
        match next(&mut sup).await {
            Ev::Restarted { node, serve_id, .. } if !expect_escalation => {
                assert_eq!(node, a.id);
                current = serve_id;
            }
            Ev::Escalated if expect_escalation => {}
            ev => panic!("after restart {} of 3 allowed: {ev:?}", if expect_escalation { 4 } else { 3 }),
        }
    }
    assert_eq!(sup.wait().await, weft_actor_remote::SupervisorExit::Escalated);
    drop(a);
}

async fn next(sup: &mut weft_actor_remote::RemoteSupervisor) -> Ev {
    weft::time::timeout(STEP, sup.next_event()).await.expect("no supervisor event in time").expect("supervisor ended")
}

/// A node whose process runs at full CPU (`--burn 2`: two spinning threads and two tasks
/// computing on its runtime's workers, on a 2-core box) stays alive to everyone for the whole
/// soak (`WEFT_SOAK_SECS`, default 10; CI runs 60): this node's monitor on its actor never
/// fires, nobody lists it down, the other child node prints no `down` line, and asks to it keep
/// succeeding — busy is not dead, with a 1 s lease.
#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_at_full_cpu_is_never_declared_down() {
    let secs: u64 = std::env::var("WEFT_SOAK_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let (ep_a, ep_b) = (endpoint(), endpoint());
    let (a, _) = spawn_node_with("a", &ep_a, &[], &["busy"], &["--burn", "2"]);
    let (b, b_out) = spawn_node_with("b", &ep_b, &[&ep_a], &[], &[]);
    // B's later lines (`down ID` / `up ID`), read on a blocking thread until B is killed.
    let b_lines = weft::task::spawn_blocking(move || b_out.lines().map_while(Result::ok).collect::<Vec<_>>());
    let c = node("c", &endpoint(), &[&ep_a, &ep_b]).await;
    let busy = lookup(&c, "busy").await;
    let mut monitor = std::pin::pin!(c.monitor(&busy));
    let (start, mut asks, mut slowest) = (Instant::now(), 0u32, Duration::ZERO);
    while start.elapsed() < Duration::from_secs(secs) {
        if let Ok(down) = weft::time::timeout(Duration::from_millis(100), monitor.as_mut()).await {
            panic!("after {:?} of full CPU: a false notice {down:?}", start.elapsed());
        }
        assert!(c.nodes_down().is_empty(), "after {:?}: nodes down {:?}", start.elapsed(), c.nodes_down());
        let asked = Instant::now();
        let answer = busy.ask(Query::Get, STEP).await;
        assert!(matches!(answer, Ok(Answer::State { .. })), "ask {asks} to the busy node: {answer:?}");
        slowest = slowest.max(asked.elapsed());
        asks += 1;
    }
    drop(b);
    let lines = b_lines.await.unwrap();
    assert!(!lines.iter().any(|l| l.starts_with("down")), "B saw a node go down: {lines:?}");
    eprintln!("soak: {secs} s with node A at full CPU, {asks} asks (slowest {slowest:?}), no false notice");
    drop(a);
}
