//! ractor on tokio: `spawn_instant` (a sync spawn, as the workloads spawn from handlers),
//! `cast` (ractor's mailboxes are unbounded), `call` for asks; supervision through
//! `spawn_linked` and `handle_supervisor_evt` (ractor has no restart strategies: the
//! supervisor re-spawns by hand on `ActorFailed`).
//! The documented-way rows (`ring_doc_1t`, `skynet_doc_1t`) are not written for this peer
//! (`documented.rs`).

use std::future::Future;
use std::sync::{Arc, Mutex};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};

use super::adapter::{ActorPeer, Behavior, Done, Flow};

pub struct Ractor;

pub enum Msg {
    Tell(u64),
    Ask(u64, RpcReplyPort<u64>),
}

pub struct FnActor;

impl Actor for FnActor {
    type Msg = Msg;
    type State = Behavior;
    type Arguments = Behavior;

    async fn pre_start(&self, _myself: ActorRef<Msg>, args: Behavior) -> Result<Behavior, ActorProcessingErr> {
        Ok(args)
    }

    async fn handle(&self, myself: ActorRef<Msg>, msg: Msg, state: &mut Behavior) -> Result<(), ActorProcessingErr> {
        let flow = match msg {
            Msg::Tell(v) => state(v).1,
            Msg::Ask(v, port) => {
                let (out, flow) = state(v);
                let _ = port.send(out);
                flow
            }
        };
        if flow == Flow::Stop {
            myself.stop(None);
        }
        Ok(())
    }
}

/// Panics on its first message when started with `true`; answers asks with 1.
struct Crashy;

impl Actor for Crashy {
    type Msg = Msg;
    type State = bool;
    type Arguments = bool;

    async fn pre_start(&self, _myself: ActorRef<Msg>, panic: bool) -> Result<bool, ActorProcessingErr> {
        Ok(panic)
    }

    async fn handle(&self, _myself: ActorRef<Msg>, msg: Msg, panic: &mut bool) -> Result<(), ActorProcessingErr> {
        if *panic {
            panic!("crashy");
        }
        if let Msg::Ask(_, port) = msg {
            let _ = port.send(1);
        }
        Ok(())
    }
}

/// Counts `ActorFailed` events; with `restart`, re-spawns a non-panicking child for each.
struct Sup {
    done: Done,
    restart: bool,
    restarted: Arc<Mutex<Vec<ActorRef<Msg>>>>,
}

impl Actor for Sup {
    type Msg = ();
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _myself: ActorRef<()>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<()>,
        event: SupervisionEvent,
        _state: &mut (),
    ) -> Result<(), ActorProcessingErr> {
        if let SupervisionEvent::ActorFailed(..) = event {
            if self.restart {
                let (child, _) = Actor::spawn_linked(None, Crashy, false, myself.get_cell()).await?;
                self.restarted.lock().unwrap().push(child);
            }
            self.done.add(1);
        }
        Ok(())
    }
}

async fn supervised(n: u64, restart: bool) -> Option<u64> {
    let (done, rx) = Done::new(n);
    let restarted = Arc::new(Mutex::new(Vec::new()));
    let sup = Sup { done: done.clone(), restart, restarted: restarted.clone() };
    let (sup, _) = Actor::spawn(None, sup, ()).await.ok()?;
    for _ in 0..n {
        let (child, _) = Actor::spawn_linked(None, Crashy, true, sup.get_cell()).await.ok()?;
        child.cast(Msg::Tell(0)).ok()?;
    }
    let _ = rx.await;
    if !restart {
        return Some(done.get());
    }
    let children: Vec<_> = restarted.lock().unwrap().drain(..).collect();
    let mut answers = 0;
    for c in children {
        answers += Ractor::ask(&c, 0).await;
    }
    Some(answers)
}

impl ActorPeer for Ractor {
    const NAME: &'static str = "ractor";
    type Addr = ActorRef<Msg>;

    fn spawn(behavior: Behavior) -> Self::Addr {
        ractor::ActorRuntime::spawn_instant(None, FnActor, behavior).expect("ractor spawn").0
    }

    fn tell(addr: &Self::Addr, msg: u64) -> impl Future<Output = ()> + Send {
        let r = addr.cast(Msg::Tell(msg));
        async move { r.map_err(|_| ()).expect("actor alive") }
    }

    fn tell_now(addr: &Self::Addr, msg: u64) {
        if addr.cast(Msg::Tell(msg)).is_err() {
            panic!("tell_now: actor gone");
        }
    }

    fn ask(addr: &Self::Addr, msg: u64) -> impl Future<Output = u64> + Send {
        async move {
            match addr.call(|port| Msg::Ask(msg, port), None).await {
                Ok(ractor::rpc::CallResult::Success(v)) => v,
                _ => panic!("ractor call failed"),
            }
        }
    }

    fn panic_signals(n: u64) -> impl Future<Output = Option<u64>> + Send {
        supervised(n, false)
    }

    fn panic_restarts(n: u64) -> impl Future<Output = Option<u64>> + Send {
        supervised(n, true)
    }
}
