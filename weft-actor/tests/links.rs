//! Links and monitors: propagation of abnormal exits, `trap_exit`, `Down` notices, and
//! monitoring or linking an actor that is already dead.

mod common;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use common::{rt, Cmd, Log, Worker};
use weft_actor::{spawn, Actor, ActorRef, Context, Down, Exit, ExitReason, Reply};

enum WatchMsg {
    Link(ActorRef<Worker>, bool, Reply<()>),
    Monitor(ActorRef<Worker>, Reply<()>),
    Seen(Reply<Vec<String>>),
}

/// Records the exits and downs it sees, as `exit <reason>` / `down <reason>`.
struct Watcher {
    seen: Vec<String>,
}

impl Actor for Watcher {
    type Msg = WatchMsg;
    async fn handle(&mut self, msg: WatchMsg, ctx: &mut Context<Self>) {
        match msg {
            WatchMsg::Link(other, trap, r) => {
                ctx.trap_exit(trap);
                ctx.link(&other);
                let _ = r.send(());
            }
            WatchMsg::Monitor(other, r) => {
                ctx.monitor(&other);
                let _ = r.send(());
            }
            WatchMsg::Seen(r) => {
                let _ = r.send(self.seen.clone());
            }
        }
    }
    async fn handle_exit(&mut self, exit: Exit, _ctx: &mut Context<Self>) {
        self.seen.push(format!("exit {:?}", exit.reason));
    }
    async fn handle_down(&mut self, down: Down, _ctx: &mut Context<Self>) {
        self.seen.push(format!("down {:?}", down.reason));
    }
}

fn worker(log: &Log) -> ActorRef<Worker> {
    spawn(Worker::new("w", log, &Arc::new(AtomicUsize::new(0))))
}

/// Waits until the watcher has seen `n` notices (each `Seen` is handled after any signal
/// queued before it, since signals overtake messages).
async fn seen(w: &ActorRef<Watcher>, n: usize) -> Vec<String> {
    loop {
        let s = w.ask(WatchMsg::Seen).await.unwrap();
        if s.len() >= n {
            return s;
        }
        weft::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

#[test]
fn abnormal_exit_propagates_through_a_link() {
    rt().block_on(async {
        let log = Log::default();
        let w = worker(&log);
        let watcher = spawn(Watcher { seen: vec![] });
        watcher.ask(|r| WatchMsg::Link(w.clone(), false, r)).await.unwrap();
        w.send(Cmd::Panic).await.unwrap();
        let r = watcher.wait_stopped().await;
        assert_eq!(r.panic_message(), Some("boom w"), "{r:?}");
    });
}

#[test]
fn normal_exit_does_not_propagate() {
    rt().block_on(async {
        let log = Log::default();
        let w = worker(&log);
        let watcher = spawn(Watcher { seen: vec![] });
        watcher.ask(|r| WatchMsg::Link(w.clone(), false, r)).await.unwrap();
        watcher.ask(|r| WatchMsg::Monitor(w.clone(), r)).await.unwrap();
        w.send(Cmd::Stop).await.unwrap();
        assert_eq!(seen(&watcher, 1).await, ["down Normal"]);
        assert!(watcher.is_alive());
    });
}

#[test]
fn trap_exit_turns_exits_into_messages() {
    rt().block_on(async {
        let log = Log::default();
        let w = worker(&log);
        let watcher = spawn(Watcher { seen: vec![] });
        watcher.ask(|r| WatchMsg::Link(w.clone(), true, r)).await.unwrap();
        w.send(Cmd::Panic).await.unwrap();
        assert_eq!(seen(&watcher, 1).await, ["exit Panic(\"boom w\")"]);
        assert!(watcher.is_alive());
    });
}

#[test]
fn link_is_two_way() {
    rt().block_on(async {
        let log = Log::default();
        let w = worker(&log);
        let watcher = spawn(Watcher { seen: vec![] });
        watcher.ask(|r| WatchMsg::Link(w.clone(), false, r)).await.unwrap();
        watcher.kill();
        assert!(matches!(w.wait_stopped().await, ExitReason::Killed));
        assert_eq!(log.take(), ["start w", "stop w", "drop w"]);
    });
}

#[test]
fn monitor_reports_down_with_reason() {
    rt().block_on(async {
        let log = Log::default();
        let w = worker(&log);
        let watcher = spawn(Watcher { seen: vec![] });
        watcher.ask(|r| WatchMsg::Monitor(w.clone(), r)).await.unwrap();
        w.send(Cmd::Panic).await.unwrap();
        assert_eq!(seen(&watcher, 1).await, ["down Panic(\"boom w\")"]);
    });
}

#[test]
fn monitoring_or_linking_a_dead_actor_delivers_at_once() {
    rt().block_on(async {
        let log = Log::default();
        let w = worker(&log);
        w.stop();
        assert!(matches!(w.wait_stopped().await, ExitReason::Shutdown));
        let watcher = spawn(Watcher { seen: vec![] });
        watcher.ask(|r| WatchMsg::Monitor(w.clone(), r)).await.unwrap();
        assert_eq!(seen(&watcher, 1).await, ["down Shutdown"]);
        watcher.ask(|r| WatchMsg::Link(w.clone(), true, r)).await.unwrap();
        assert_eq!(seen(&watcher, 2).await, ["down Shutdown", "exit Shutdown"]);
    });
}
