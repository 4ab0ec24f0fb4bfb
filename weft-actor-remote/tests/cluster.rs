//! Two and three nodes in one process (one weft runtime, Zenoh over loopback TCP): names,
//! tell/ask, FIFO, monitors, node loss, hostile input.

mod common;

use std::time::{Duration, Instant};

use common::{endpoint, eventually, lookup, node, STEP};
use weft_actor_remote::demo::{Answer, Cmd, Counter, Query};
use weft_actor_remote::{wire, LookupError, NodeId, Reason, RegisterError, RemoteError};
use zenoh::qos::CongestionControl;

async fn state(r: &weft_actor_remote::RemoteRef<Counter>) -> (u64, u64, bool) {
    match r.ask(Query::Get, STEP).await.unwrap() {
        Answer::State { total, count, in_order, .. } => (total, count, in_order),
        other => panic!("unexpected answer {other:?}"),
    }
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn tell_and_ask_across_nodes_in_order() {
    let ep = endpoint();
    let a = node("a", &ep, &[]).await;
    let b = node("b", &endpoint(), &[&ep]).await;
    a.serve("counter", weft_actor::spawn(Counter::new())).await.unwrap();
    let counter = lookup(&b, "counter").await;
    assert_eq!(counter.node_id(), a.id());
    const N: u64 = 2000;
    for seq in 0..N {
        counter.tell(Cmd::Add { seq, n: seq }).await.unwrap();
    }
    // An ask after the tells is answered after all of them (one channel: FIFO).
    assert_eq!(state(&counter).await, (N * (N - 1) / 2, N, true));
    assert_eq!(counter.ask(Query::Echo(vec![7; 1000]), STEP).await.unwrap(), Answer::Echo(vec![7; 1000]));
    // The serving node reaches its own actor without the network, through the same API.
    let local = a.lookup::<Counter>("counter").await.unwrap();
    assert_eq!(state(&local).await.1, N);
    // Wrong type, bad name, unknown name, duplicate name: typed errors.
    struct Other;
    impl weft_actor::Actor for Other {
        type Msg = ();
        async fn handle(&mut self, (): (), _: &mut weft_actor::Context<Self>) {}
    }
    impl weft_actor_remote::RemoteActor for Other {
        type Tell = u8;
        type Ask = u8;
        type Answer = u8;
        fn from_tell(_: u8) {}
        fn from_ask(_: u8, _: weft_actor::Reply<u8>) {}
    }
    assert_eq!(b.lookup::<Other>("counter").await.unwrap_err(), LookupError::WrongType);
    assert_eq!(b.lookup::<Counter>("no/such").await.unwrap_err(), LookupError::BadName);
    assert_eq!(b.lookup::<Counter>("nobody-serves-this").await.unwrap_err(), LookupError::NotFound);
    let dup = b.serve("counter", weft_actor::spawn(Counter::new())).await.unwrap_err();
    assert_eq!(dup, RegisterError::Taken(a.id()));
    assert_eq!(counter.ask(Query::Ignore, STEP).await.unwrap_err(), RemoteError::NoReply);
    let t0 = Instant::now();
    let slow = weft_actor_remote::RemoteRef::clone(&counter);
    assert_eq!(slow.ask(Query::Get, Duration::from_nanos(1)).await.unwrap_err(), RemoteError::Timeout);
    assert!(t0.elapsed() < STEP);
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn monitors_report_stop_panic_noproc_and_node_loss_once() {
    let ep = endpoint();
    let a = node("a", &ep, &[]).await;
    let b = node("b", &endpoint(), &[&ep]).await;
    for name in ["stopper", "panicker", "bystander"] {
        a.serve(name, weft_actor::spawn(Counter::new())).await.unwrap();
    }
    let stopper = lookup(&b, "stopper").await;
    let panicker = lookup(&b, "panicker").await;
    let bystander = lookup(&b, "bystander").await;
    let (m_stop, m_panic, m_by) = (b.monitor(&stopper), b.monitor(&panicker), b.monitor(&bystander));
    // Two monitors on one actor: each fires once.
    let m_stop2 = b.monitor(&stopper);
    // The actors are idle and answer before they are told to die.
    assert_eq!(state(&stopper).await.1, 0);
    assert_eq!(state(&panicker).await.1, 0);
    stopper.tell(Cmd::Stop).await.unwrap();
    panicker.tell(Cmd::Panic("deliberate".into())).await.unwrap();
    let d = weft::time::timeout(STEP, m_stop).await.unwrap();
    assert_eq!((d.reason, d.name.as_str(), d.node), (Reason::Normal, "stopper", a.id()));
    assert_eq!(weft::time::timeout(STEP, m_stop2).await.unwrap().reason, Reason::Normal);
    assert_eq!(weft::time::timeout(STEP, m_panic).await.unwrap().reason, Reason::Panic("deliberate".into()));
    // The stopped actor's name is gone everywhere; a monitor on it now says NoProc.
    eventually("stopper's name withdrawn", || async {
        (b.lookup::<Counter>("stopper").await.err() == Some(LookupError::NotFound)).then_some(())
    })
    .await;
    assert_eq!(weft::time::timeout(STEP, b.monitor(&stopper)).await.unwrap().reason, Reason::NoProc);
    assert_eq!(stopper.tell(Cmd::Add { seq: 0, n: 1 }).await, Ok(()), "a tell is fire and forget");
    assert_eq!(stopper.ask(Query::Get, STEP).await.unwrap_err(), RemoteError::NotFound);
    // A's node goes away: the remaining monitor fires NoConnection, asks fail NodeDown.
    a.shutdown().await;
    let d = weft::time::timeout(STEP, m_by).await.unwrap();
    assert_eq!(d.reason, Reason::NoConnection);
    eventually("B sees A down", || async { b.nodes_down().contains(&a.id()).then_some(()) }).await;
    assert_eq!(bystander.ask(Query::Get, STEP).await.unwrap_err(), RemoteError::NodeDown);
    assert_eq!(bystander.tell(Cmd::Stop).await.unwrap_err(), RemoteError::NodeDown);
    assert_eq!(b.lookup::<Counter>("bystander").await.unwrap_err(), LookupError::NotFound);
    assert_eq!(weft::time::timeout(STEP, b.monitor(&bystander)).await.unwrap().reason, Reason::NoConnection);
    assert!(b.metrics().dropped_node_down >= 1);
}

#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_frames_are_dropped_and_counted() {
    let ep = endpoint();
    let a = node("a", &ep, &[]).await;
    let b = node("b", &endpoint(), &[&ep]).await;
    a.serve("target", weft_actor::spawn(Counter::new())).await.unwrap();
    let target = lookup(&b, "target").await;
    let inbox = format!("weft-actor/inbox/{}", a.id());
    let before = a.metrics();
    let garbage: Vec<Vec<u8>> = vec![
        vec![],
        vec![0xff; 64],
        vec![wire::VERSION + 1, 0, 0],
        vec![wire::VERSION, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        vec![0u8; 2 << 20],
    ];
    // Blocking congestion control: a plain `put` may be dropped by Zenoh under load.
    let put = |bytes: Vec<u8>| b.session().put(&inbox, bytes).congestion_control(CongestionControl::Block);
    for g in &garbage {
        put(g.clone()).await.unwrap();
    }
    // A well-formed frame whose payload is not a `Cmd`, and one for an actor A does not serve.
    let bad_payload = wire::encode(b.id(), wire::Frame::Tell { to: target.serve_id(), payload: &[0xff, 0xff, 0xff] });
    let unknown = wire::encode(b.id(), wire::Frame::Tell { to: 999_999, payload: &[] });
    // A Down for a monitor nobody holds, and an answer to no request: ignored.
    let stray_down = wire::encode(NodeId(1), wire::Frame::Down { monitor: 5, reason: Reason::Killed });
    for f in [bad_payload, unknown, stray_down] {
        put(f).await.unwrap();
    }
    let m = eventually("garbage counted", || async {
        let m = a.metrics();
        (m.malformed - before.malformed >= 4
            && m.oversized > before.oversized
            && m.bad_payload > before.bad_payload
            && m.unknown_actor > before.unknown_actor)
            .then_some(m)
    })
    .await;
    assert_eq!(m.malformed - before.malformed, 4, "{m:?}");
    // The node and the actor still work.
    target.tell(Cmd::Add { seq: 0, n: 5 }).await.unwrap();
    assert_eq!(state(&target).await, (5, 1, true));
    // A message over the sender's own limit is refused before it leaves.
    let huge = vec![0u8; 2 << 20];
    assert_eq!(target.tell(Cmd::Blob(huge)).await.unwrap_err(), RemoteError::TooLarge);
}

/// An actor that waits on a gate before handling anything: its mailbox fills, then the node's
/// overflow budget; past it tells are dropped and counted and asks answered `Overloaded`, and
/// once the gate opens everything that was kept arrives, in order.
#[weft::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_past_the_overflow_budget_is_dropped_and_counted() {
    use weft_actor::{Actor, Context, Reply};
    struct Gated {
        gate: Option<weft::sync::oneshot::Receiver<()>>,
        seen: Vec<u64>,
    }
    enum Msg {
        Seq(u64),
        Seen(Reply<Vec<u64>>),
    }
    impl Actor for Gated {
        type Msg = Msg;
        async fn handle(&mut self, msg: Msg, _: &mut Context<Self>) {
            if let Some(g) = self.gate.take() {
                let _ = g.await;
            }
            match msg {
                Msg::Seq(n) => self.seen.push(n),
                Msg::Seen(r) => drop(r.send(std::mem::take(&mut self.seen))),
            }
        }
    }
    impl weft_actor_remote::RemoteActor for Gated {
        type Tell = u64;
        type Ask = ();
        type Answer = Vec<u64>;
        fn from_tell(n: u64) -> Msg {
            Msg::Seq(n)
        }
        fn from_ask((): (), r: Reply<Vec<u64>>) -> Msg {
            Msg::Seen(r)
        }
    }
    let ep = endpoint();
    let mut config = weft_actor_remote::NodeConfig::peer("a").listen(&ep);
    config.max_queued_bytes = 64 * 100; // 100 messages (each counts as at least 64 bytes)
    let a = weft_actor_remote::Node::start(config).await.unwrap();
    let b = node("b", &endpoint(), &[&ep]).await;
    let (open, gate) = weft::sync::oneshot::channel();
    a.serve(
        "gated",
        weft_actor::spawn_with(Gated { gate: Some(gate), seen: Vec::new() }, weft_actor::Mailbox::Bounded(8)),
    )
    .await
    .unwrap();
    let r = eventually("lookup gated", || async { b.lookup::<Gated>("gated").await.ok() }).await;
    const SENT: u64 = 400;
    for n in 0..SENT {
        r.tell(n).await.unwrap();
    }
    let dropped = eventually("drops counted", || async {
        let d = a.metrics().dropped_full;
        (d > 0 && d + 100 + 9 >= SENT).then_some(d)
    })
    .await;
    assert_eq!(r.ask((), STEP).await.unwrap_err(), RemoteError::Overloaded);
    open.send(()).unwrap();
    let seen = eventually("the kept tells handled", || async { r.ask((), STEP).await.ok() }).await;
    assert_eq!(seen.len() as u64, SENT - dropped, "kept = sent - dropped");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "kept tells arrive in order: {seen:?}");
}

/// A monitor is in place before the tells sent after it: each actor here is told to panic right
/// after being monitored, with nothing between, and every notice carries the panic — never
/// `NoProc` (the monitor arriving after the actor died). One worker, so a monitor frame left to
/// a task races the tell.
#[weft::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_monitor_is_in_place_before_the_next_tell() {
    let ep = endpoint();
    let a = node("a", &ep, &[]).await;
    let b = node("b", &endpoint(), &[&ep]).await;
    for i in 0..100 {
        let name = format!("doomed-{i}");
        a.serve(&name, weft_actor::spawn(Counter::new())).await.unwrap();
        let doomed = lookup(&b, &name).await;
        let down = b.monitor(&doomed);
        doomed.tell(Cmd::Panic(format!("fault {i}"))).await.unwrap();
        let down = weft::time::timeout(STEP, down).await.expect("no notice in time");
        assert_eq!((down.node, down.reason), (a.id(), Reason::Panic(format!("fault {i}"))), "actor {i}");
    }
}
