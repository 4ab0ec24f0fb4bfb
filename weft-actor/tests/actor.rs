//! Actors without supervision: tell/ask, bounded mailbox back-pressure, ask timeouts,
//! registration, and exact drop counts on stop, kill, last-ref drop and runtime shutdown.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{rt, rt1, wait_until, Cmd, Log, Worker};
use weft::sync::oneshot;
use weft_actor::{
    lookup, register, spawn, spawn_with, Actor, AskError, Context, ExitReason, Mailbox, RegisterError, Reply,
    TrySendError,
};

struct Counter(u64);

enum CounterMsg {
    Add(u64),
    Get(Reply<u64>),
}

impl Actor for Counter {
    type Msg = CounterMsg;
    async fn handle(&mut self, msg: CounterMsg, _ctx: &mut Context<Self>) {
        match msg {
            CounterMsg::Add(n) => self.0 += n,
            CounterMsg::Get(r) => {
                let _ = r.send(self.0);
            }
        }
    }
}

#[test]
fn tell_then_ask_sees_every_tell() {
    rt().block_on(async {
        let c = spawn(Counter(0));
        for i in 0..1000 {
            c.tell(CounterMsg::Add(i)).await.unwrap();
        }
        assert_eq!(c.ask(CounterMsg::Get).await.unwrap(), 499_500);
    });
}

/// `send`/`tell` futures do nothing until polled, on both kinds of mailbox: a dropped one sends
/// nothing and hands its message to nobody, an awaited one sends once, in order.
#[test]
fn send_futures_send_only_when_polled_on_either_mailbox() {
    for mailbox in [Mailbox::Bounded(4), Mailbox::Unbounded] {
        rt().block_on(async move {
            let c = spawn_with(Counter(0), mailbox);
            drop(c.tell(CounterMsg::Add(1_000)));
            drop(c.send(CounterMsg::Add(2_000)));
            let later = c.tell(CounterMsg::Add(5));
            c.send(CounterMsg::Add(2)).await.unwrap();
            later.await.unwrap();
            assert_eq!(c.ask(CounterMsg::Get).await.unwrap(), 7, "{mailbox:?}");
        });
    }
}

/// Counts drops of an answer value.
struct Payload(Arc<AtomicUsize>);
impl Drop for Payload {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

enum SlowMsg {
    Hold(Reply<Payload>),
    /// Answer the held request now; report whether the asker had gone and whether `send`
    /// handed the payload back.
    Release(Arc<AtomicUsize>, Reply<(bool, bool)>),
    Drop(Reply<u8>),
}

struct Slow(Option<Reply<Payload>>);

impl Actor for Slow {
    type Msg = SlowMsg;
    async fn handle(&mut self, msg: SlowMsg, _ctx: &mut Context<Self>) {
        match msg {
            SlowMsg::Hold(r) => self.0 = Some(r),
            SlowMsg::Release(drops, r) => {
                let held = self.0.take().unwrap();
                let closed = held.is_closed();
                let returned = held.send(Payload(drops)).is_err();
                let _ = r.send((closed, returned));
            }
            SlowMsg::Drop(r) => drop(r),
        }
    }
}

#[test]
fn ask_timeout_leaves_no_waiter_behind() {
    rt1().block_on(async {
        let a = spawn(Slow(None));
        let r = a.ask_timeout(SlowMsg::Hold, Duration::from_millis(5)).await;
        assert!(matches!(r, Err(AskError::Timeout)));
        let drops = Arc::new(AtomicUsize::new(0));
        let (closed, returned) = a.ask(|r| SlowMsg::Release(drops.clone(), r)).await.unwrap();
        assert!(closed, "the timed-out asker's receiver was dropped");
        assert!(returned, "a late answer is handed back, not stored");
        assert_eq!(drops.load(Ordering::SeqCst), 1, "and is dropped exactly once");
        assert_eq!(a.ask(SlowMsg::Drop).await, Err(AskError::NoReply));
    });
}

#[test]
fn ask_a_stopped_actor_is_closed() {
    rt().block_on(async {
        let log = Log::default();
        let drops = Arc::new(AtomicUsize::new(0));
        let w = spawn(Worker::new("w", &log, &drops));
        w.stop();
        assert!(matches!(w.wait_stopped().await, ExitReason::Shutdown));
        assert_eq!(w.ask(Cmd::Ping).await, Err(AskError::Closed));
        assert!(matches!(w.try_send(Cmd::Stop), Err(TrySendError::Closed(Cmd::Stop))));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(log.take(), ["start w", "stop w", "drop w"]);
    });
}

enum GateMsg {
    Wait(oneshot::Receiver<()>),
    Item(usize, usize),
    Done(Reply<Vec<Vec<usize>>>),
}

struct Gate(Vec<Vec<usize>>);

impl Actor for Gate {
    type Msg = GateMsg;
    async fn handle(&mut self, msg: GateMsg, _ctx: &mut Context<Self>) {
        match msg {
            GateMsg::Wait(rx) => {
                let _ = rx.await;
            }
            GateMsg::Item(producer, seq) => self.0[producer].push(seq),
            GateMsg::Done(r) => {
                let _ = r.send(std::mem::take(&mut self.0));
            }
        }
    }
}

#[test]
fn bounded_mailbox_under_10x_overload_loses_nothing_and_stays_bounded() {
    const CAP: usize = 16;
    const PRODUCERS: usize = 4;
    const PER: usize = CAP * 10 / PRODUCERS;
    rt().block_on(async {
        let a = spawn_with(Gate(vec![Vec::new(); PRODUCERS]), Mailbox::Bounded(CAP));
        let (open, gate) = oneshot::channel();
        a.send(GateMsg::Wait(gate)).await.unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let mut producers = Vec::new();
        for p in 0..PRODUCERS {
            let (a, accepted) = (a.clone(), accepted.clone());
            producers.push(weft::spawn(async move {
                for seq in 0..PER {
                    a.send(GateMsg::Item(p, seq)).await.unwrap();
                    accepted.fetch_add(1, Ordering::SeqCst);
                }
            }));
        }
        // The actor is stuck on the gate: exactly CAP more messages fit, however long we wait.
        wait_until("mailbox full", || accepted.load(Ordering::SeqCst) == CAP).await;
        for _ in 0..1000 {
            weft::task::yield_now().await;
        }
        assert_eq!(accepted.load(Ordering::SeqCst), CAP);
        match a.try_send(GateMsg::Item(9, 9)) {
            Err(TrySendError::Full(GateMsg::Item(9, 9))) => {}
            _ => panic!("try_send on a full mailbox must hand the message back"),
        }
        open.send(()).unwrap();
        for p in producers {
            p.await.unwrap();
        }
        let got = a.ask(GateMsg::Done).await.unwrap();
        for seqs in got {
            assert_eq!(seqs, (0..PER).collect::<Vec<_>>(), "every message, in per-producer order");
        }
    });
}

#[test]
fn send_timeout_on_a_full_mailbox_hands_the_message_back() {
    rt1().block_on(async {
        let a = spawn_with(Gate(vec![Vec::new()]), Mailbox::Bounded(1));
        let (_open, gate) = oneshot::channel();
        a.send(GateMsg::Wait(gate)).await.unwrap();
        a.send(GateMsg::Item(0, 0)).await.unwrap();
        let r = a.send_timeout(GateMsg::Item(0, 1), Duration::from_millis(5)).await;
        assert!(matches!(r, Err(weft_actor::SendTimeoutError::Timeout(GateMsg::Item(0, 1)))));
    });
}

#[test]
fn unbounded_mailbox_never_waits() {
    rt1().block_on(async {
        let c = spawn_with(Counter(0), Mailbox::Unbounded);
        for _ in 0..10_000 {
            c.try_send(CounterMsg::Add(1)).unwrap();
        }
        assert_eq!(c.ask(CounterMsg::Get).await.unwrap(), 10_000);
    });
}

#[test]
fn state_dropped_once_on_stop_kill_last_ref_and_runtime_shutdown() {
    let log = Log::default();
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = rt();
    rt.block_on(async {
        let w = spawn(Worker::new("stop", &log, &drops));
        w.stop();
        w.wait_stopped().await;
        assert_eq!(drops.load(Ordering::SeqCst), 1);

        let w = spawn(Worker::new("kill", &log, &drops));
        w.ask(Cmd::Ping).await.unwrap();
        w.kill();
        assert!(matches!(w.wait_stopped().await, ExitReason::Killed));
        assert_eq!(drops.load(Ordering::SeqCst), 2);

        let w = spawn(Worker::new("lastref", &log, &drops));
        drop(w);
        wait_until("last ref dropped stops the actor", || drops.load(Ordering::SeqCst) == 3).await;

        let w = spawn(Worker::new("panic", &log, &drops));
        w.send(Cmd::Panic).await.unwrap();
        let r = w.wait_stopped().await;
        assert_eq!(r.panic_message(), Some("boom panic"));
        assert_eq!(drops.load(Ordering::SeqCst), 4);
    });
    let mut keep = Vec::new();
    rt.block_on(async {
        for _ in 0..100 {
            keep.push(spawn(Worker::new("rt", &log, &drops)));
        }
        keep[99].ask(Cmd::Ping).await.unwrap();
    });
    assert_eq!(drops.load(Ordering::SeqCst), 4);
    drop(rt);
    assert_eq!(drops.load(Ordering::SeqCst), 104);
    assert!(keep.iter().all(|w| !w.is_alive()));
    // No stopped hook for killed actors; the clean stops ran theirs.
    let l = log.take();
    assert!(l.contains(&"stop stop".to_string()) && !l.contains(&"stop kill".to_string()));
    assert!(l.contains(&"stop lastref".to_string()) && l.contains(&"stop panic".to_string()));
}

#[test]
fn registry_is_typed_and_released_on_stop() {
    rt().block_on(async {
        let c = spawn(Counter(7));
        register("test-registry-counter", &c).unwrap();
        assert_eq!(
            register("test-registry-counter", &c),
            Err(RegisterError::AlreadyRegistered("test-registry-counter".into()))
        );
        let found = lookup::<Counter>("test-registry-counter").unwrap();
        assert_eq!(found.ask(CounterMsg::Get).await.unwrap(), 7);
        assert!(lookup::<Slow>("test-registry-counter").is_none(), "wrong type");
        drop(found);
        c.stop();
        c.wait_stopped().await;
        assert!(lookup::<Counter>("test-registry-counter").is_none());
        assert_eq!(register("test-registry-counter", &c), Err(RegisterError::NotAlive));
    });
}

/// Answers with the thread it ran on.
struct WhereAmI;

impl Actor for WhereAmI {
    type Msg = Reply<std::thread::ThreadId>;
    async fn handle(&mut self, reply: Reply<std::thread::ThreadId>, _ctx: &mut Context<Self>) {
        let _ = reply.send(std::thread::current().id());
    }
}

/// Asks `WhereAmI` `n` times from its own handler and answers how many of the answers came
/// from another thread than its own.
struct Asker(weft_actor::ActorRef<WhereAmI>);

impl Actor for Asker {
    type Msg = (u32, Reply<u32>);
    async fn handle(&mut self, (n, reply): (u32, Reply<u32>), _ctx: &mut Context<Self>) {
        let mut elsewhere = 0;
        for _ in 0..n {
            let there = self.0.ask(|r| r).await.unwrap();
            elsewhere += u32::from(there != std::thread::current().id());
        }
        let _ = reply.send(elsewhere);
    }
}

/// An actor asking another on a multi-thread runtime is answered on its own worker, with no
/// cross-thread wake: the asked actor is woken into the asking worker's LIFO slot and runs
/// there, and the answer wakes the asker into it the same way (`weft/src/runtime/scheduler/
/// multi_thread/worker.rs`). Migrations are possible (a task that has run three times in a
/// row from the slot goes to the stealable queue), so this allows a few; with every wake
/// going through the shared queue instead, 51 to 196 of them did (five runs).
#[test]
fn asks_between_actors_are_answered_on_the_askers_worker() {
    rt().block_on(async {
        let asker = spawn(Asker(spawn(WhereAmI)));
        // Warm-up: both tasks start wherever the spawns put them, then settle.
        asker.ask(|r| (10, r)).await.unwrap();
        let elsewhere = asker.ask(|r| (1_000, r)).await.unwrap();
        assert!(elsewhere <= 10, "{elsewhere} of 1,000 asks were answered on another thread");
    });
}

/// Asks to stop, says so, then waits forever in the same `handle`.
struct StopThenHang(Arc<AtomicUsize>);

impl Actor for StopThenHang {
    type Msg = ();
    async fn handle(&mut self, _: (), ctx: &mut Context<Self>) {
        ctx.stop_with(ExitReason::Shutdown);
        self.0.store(1, Ordering::SeqCst);
        std::future::pending::<()>().await;
    }
}

/// A stop the actor asked for but never reached (its task was killed first) is not its exit
/// reason: killed is `Killed`. (The guard keeps the final reason where the request is kept,
/// `run::Incarnation`; only a finished task reports it.)
#[test]
fn a_kill_after_an_unreached_stop_request_reports_killed() {
    rt().block_on(async {
        let asked = Arc::new(AtomicUsize::new(0));
        let a = spawn(StopThenHang(asked.clone()));
        a.tell(()).await.unwrap();
        wait_until("the stop request", || asked.load(Ordering::SeqCst) == 1).await;
        a.kill();
        assert!(matches!(a.wait_stopped().await, ExitReason::Killed));
    });
}
