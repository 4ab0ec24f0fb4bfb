//! kameo on tokio: default bounded mailbox (64), `tell`/`ask` requests; supervision through
//! `link` + `on_link_died` (panic signals) and `supervise` with `RestartPolicy::Permanent`
//! (restarts; kameo limits restarts per child, here set high enough never to trip).
//! The documented-way rows (`ring_doc_1t`, `skynet_doc_1t`) are not written for this peer
//! (`documented.rs`).

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kameo::prelude::{Actor, ActorId, ActorRef, ActorStopReason, Context, Message, Spawn, WeakActorRef};
use kameo::supervision::RestartPolicy;

use super::adapter::{ActorPeer, Behavior, Done, Flow};

pub struct Kameo;

pub struct FnActor(Behavior);

impl Actor for FnActor {
    type Args = Self;
    type Error = Infallible;
    async fn on_start(args: Self, _actor_ref: ActorRef<Self>) -> Result<Self, Infallible> {
        Ok(args)
    }
}

pub struct Tell(u64);
pub struct Ask(u64);

impl Message<Tell> for FnActor {
    type Reply = ();
    async fn handle(&mut self, msg: Tell, ctx: &mut Context<Self, ()>) {
        if (self.0)(msg.0).1 == Flow::Stop {
            ctx.stop();
        }
    }
}

impl Message<Ask> for FnActor {
    type Reply = u64;
    async fn handle(&mut self, msg: Ask, ctx: &mut Context<Self, u64>) -> u64 {
        let (out, flow) = (self.0)(msg.0);
        if flow == Flow::Stop {
            ctx.stop();
        }
        out
    }
}

/// Panics on its first message while `panic` is set; a restarted incarnation counts itself.
struct Crashy {
    panic: Arc<AtomicBool>,
}

#[derive(Clone)]
struct CrashyArgs {
    panic: Arc<AtomicBool>,
    restarted: Done,
}

impl Actor for Crashy {
    type Args = CrashyArgs;
    type Error = Infallible;
    async fn on_start(args: CrashyArgs, _actor_ref: ActorRef<Self>) -> Result<Self, Infallible> {
        if !args.panic.load(Ordering::Acquire) {
            args.restarted.add(1);
        }
        Ok(Crashy { panic: args.panic })
    }
}

impl Message<Ask> for Crashy {
    type Reply = u64;
    async fn handle(&mut self, _msg: Ask, _ctx: &mut Context<Self, u64>) -> u64 {
        if self.panic.swap(false, Ordering::AcqRel) {
            panic!("crashy");
        }
        1
    }
}

impl Message<Tell> for Crashy {
    type Reply = ();
    async fn handle(&mut self, _msg: Tell, _ctx: &mut Context<Self, ()>) {
        if self.panic.swap(false, Ordering::AcqRel) {
            panic!("crashy");
        }
    }
}

/// Counts panicked links.
struct Sup(Done);

impl Actor for Sup {
    type Args = Self;
    type Error = Infallible;
    async fn on_start(args: Self, _actor_ref: ActorRef<Self>) -> Result<Self, Infallible> {
        Ok(args)
    }
    async fn on_link_died(
        &mut self,
        _actor_ref: WeakActorRef<Self>,
        _id: ActorId,
        reason: ActorStopReason,
    ) -> Result<ControlFlow<ActorStopReason>, Infallible> {
        if let ActorStopReason::Panicked(_) = reason {
            self.0.add(1);
        }
        Ok(ControlFlow::Continue(()))
    }
}

impl ActorPeer for Kameo {
    const NAME: &'static str = "kameo";
    type Addr = ActorRef<FnActor>;

    fn spawn(behavior: Behavior) -> Self::Addr {
        FnActor::spawn(FnActor(behavior))
    }

    fn tell(addr: &Self::Addr, msg: u64) -> impl Future<Output = ()> + Send {
        async move { addr.tell(Tell(msg)).await.map_err(|_| ()).expect("actor alive") }
    }

    fn tell_now(addr: &Self::Addr, msg: u64) {
        if addr.tell(Tell(msg)).try_send().is_err() {
            panic!("tell_now: mailbox full or closed");
        }
    }

    fn ask(addr: &Self::Addr, msg: u64) -> impl Future<Output = u64> + Send {
        async move { addr.ask(Ask(msg)).await.map_err(|_| ()).expect("ask answered") }
    }

    fn panic_signals(n: u64) -> impl Future<Output = Option<u64>> + Send {
        async move {
            let (done, rx) = Done::new(n);
            let sup = Sup::spawn(Sup(done.clone()));
            let unused = Done::new(0).0;
            for _ in 0..n {
                let c = Crashy::spawn(CrashyArgs { panic: Arc::new(AtomicBool::new(true)), restarted: unused.clone() });
                c.link(&sup).await;
                c.tell(Tell(0)).await.ok()?;
            }
            let _ = rx.await;
            Some(done.get())
        }
    }

    fn panic_restarts(n: u64) -> impl Future<Output = Option<u64>> + Send {
        async move {
            let (done, rx) = Done::new(n);
            let sup = Sup::spawn(Sup(Done::new(u64::MAX).0));
            let mut children = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let args = CrashyArgs { panic: Arc::new(AtomicBool::new(true)), restarted: done.clone() };
                let c = Crashy::supervise(&sup, args)
                    .restart_policy(RestartPolicy::Permanent)
                    .restart_limit(u32::MAX, Duration::from_secs(1))
                    .spawn()
                    .await;
                c.tell(Tell(0)).await.ok()?;
                children.push(c);
            }
            let _ = rx.await;
            let mut answers = 0;
            for c in &children {
                answers += c.ask(Ask(0)).await.ok()?;
            }
            Some(answers)
        }
    }
}
