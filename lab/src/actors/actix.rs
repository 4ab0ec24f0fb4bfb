//! actix on actix-rt: every actor on the one `System` arbiter (actix runs an actor on the
//! arbiter that started it, so `threads` is ignored: the `_mt` rows are single-threaded for
//! actix); `do_send` for tells (actix's sends from outside skip the mailbox capacity), `send`
//! for asks. The panic workloads are not run: a panic in an actix handler unwinds through
//! the arbiter and takes down its thread and every actor on it, and actix's `Supervisor`
//! restarts an actor only after it stopped itself, never after a panic.

use std::future::Future;

use actix::prelude::{Actor, Addr, Context, Handler, Message};
use actix::ActorContext;

use super::adapter::{ActorPeer, Behavior, Flow};

pub struct Actix;

pub struct FnActor(Behavior);

impl Actor for FnActor {
    type Context = Context<Self>;
}

pub struct Tell(u64);
pub struct Ask(u64);

impl Message for Tell {
    type Result = ();
}

impl Message for Ask {
    type Result = u64;
}

impl Handler<Tell> for FnActor {
    type Result = ();
    fn handle(&mut self, msg: Tell, ctx: &mut Context<Self>) {
        if (self.0)(msg.0).1 == Flow::Stop {
            ctx.stop();
        }
    }
}

impl Handler<Ask> for FnActor {
    type Result = u64;
    fn handle(&mut self, msg: Ask, ctx: &mut Context<Self>) -> u64 {
        let (out, flow) = (self.0)(msg.0);
        if flow == Flow::Stop {
            ctx.stop();
        }
        out
    }
}

impl ActorPeer for Actix {
    const NAME: &'static str = "actix";
    /// An actix context handles every message its mailbox holds before it returns to the
    /// arbiter, so an actor that sends itself a message per message never yields: on the
    /// one-thread `System`, `spawn_storm_busy`'s busy actors would starve everything else.
    const FAIR_TO_SELF_SENDERS: bool = false;
    type Addr = Addr<FnActor>;

    fn block_on<F>(_threads: usize, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        actix_rt::System::new().block_on(f)
    }

    fn spawn(behavior: Behavior) -> Self::Addr {
        FnActor(behavior).start()
    }

    fn tell(addr: &Self::Addr, msg: u64) -> impl Future<Output = ()> + Send {
        addr.do_send(Tell(msg));
        async {}
    }

    fn tell_now(addr: &Self::Addr, msg: u64) {
        addr.do_send(Tell(msg));
    }

    fn ask(addr: &Self::Addr, msg: u64) -> impl Future<Output = u64> + Send {
        let req = addr.send(Ask(msg));
        async move { req.await.expect("actix ask answered") }
    }

    fn spawn_task<F: Future<Output = ()> + Send + 'static>(f: F) {
        actix_rt::spawn(f);
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn sleep(d: std::time::Duration) -> impl Future<Output = ()> + Send {
        actix_rt::time::sleep(d)
    }

    fn panic_signals(_n: u64) -> impl Future<Output = Option<u64>> + Send {
        async { None }
    }

    fn panic_restarts(_n: u64) -> impl Future<Output = Option<u64>> + Send {
        async { None }
    }

    fn ring_documented(actors: u64, hops: u64) -> impl Future<Output = Option<u64>> + Send {
        async move { Some(super::documented::actix::ring(actors, hops).await) }
    }

    fn skynet_documented(leaves: u64) -> impl Future<Output = Option<u64>> + Send {
        async move { Some(super::documented::actix::skynet(leaves).await) }
    }
}
