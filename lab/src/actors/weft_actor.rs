//! weft-actor on weft: default bounded mailbox (64), supervision by `SupervisorSpec`.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use weft_actor::{Actor, ActorRef, ChildSpec, Context, Reply, Restart, Strategy, SupervisorEvent, SupervisorSpec};

use super::adapter::{ActorPeer, Behavior, Done, Flow};

pub struct WeftActor;

pub struct FnActor(Behavior);

pub enum Msg {
    Tell(u64),
    Ask(u64, Reply<u64>),
}

impl Actor for FnActor {
    type Msg = Msg;
    async fn handle(&mut self, msg: Msg, ctx: &mut Context<Self>) {
        let flow = match msg {
            Msg::Tell(m) => (self.0)(m).1,
            Msg::Ask(m, r) => {
                let (v, flow) = (self.0)(m);
                let _ = r.send(v);
                flow
            }
        };
        if flow == Flow::Stop {
            ctx.stop();
        }
    }
}

/// Panics on its first message when `panic` is set; answers asks with 1.
struct Crashy {
    panic: Arc<AtomicBool>,
}

impl Actor for Crashy {
    type Msg = Msg;
    async fn handle(&mut self, msg: Msg, _ctx: &mut Context<Self>) {
        if self.panic.swap(false, Ordering::AcqRel) {
            panic!("crashy");
        }
        if let Msg::Ask(_, r) = msg {
            let _ = r.send(1);
        }
    }
}

/// Runs `f` on a fresh weft runtime of `threads` workers (current-thread for 1), for both weft
/// peers. Its long-poll monitor counts instead of printing (`framework::measure::add_long_polls`,
/// shown under the study's table), as in the other studies: a workload that computes in an
/// actor (`fan_out_compute`) holds a worker for tens of milliseconds by design.
pub(super) fn block_on_weft<F: Future>(threads: usize, f: F) -> F::Output {
    let mut builder = if threads > 1 {
        let mut multi = weft::runtime::Builder::new_multi_thread();
        multi.worker_threads(threads);
        multi
    } else {
        weft::runtime::Builder::new_current_thread()
    };
    let rt = builder.enable_all().warn_on_long_polls(false).build().expect("weft runtime");
    let out = rt.block_on(f);
    crate::framework::measure::add_long_polls(rt.metrics().long_poll_count());
    out
}

impl ActorPeer for WeftActor {
    const NAME: &'static str = "weft-actor";
    type Addr = ActorRef<FnActor>;

    fn block_on<F>(threads: usize, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        block_on_weft(threads, f)
    }

    fn spawn(behavior: Behavior) -> Self::Addr {
        weft_actor::spawn(FnActor(behavior))
    }

    fn tell(addr: &Self::Addr, msg: u64) -> impl Future<Output = ()> + Send {
        async move { addr.tell(Msg::Tell(msg)).await.map_err(|_| ()).expect("actor alive") }
    }

    fn tell_now(addr: &Self::Addr, msg: u64) {
        if addr.try_send(Msg::Tell(msg)).is_err() {
            panic!("tell_now: mailbox full or closed");
        }
    }

    fn ask(addr: &Self::Addr, msg: u64) -> impl Future<Output = u64> + Send {
        async move { addr.ask(|r| Msg::Ask(msg, r)).await.expect("ask answered") }
    }

    fn spawn_task<F: Future<Output = ()> + Send + 'static>(f: F) {
        weft::spawn(f);
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        weft::task::yield_now()
    }

    fn sleep(d: Duration) -> impl Future<Output = ()> + Send {
        weft::time::sleep(d)
    }

    fn panic_signals(n: u64) -> impl Future<Output = Option<u64>> + Send {
        async move {
            let (done, rx) = Done::new(n);
            let d = done.clone();
            let mut spec = SupervisorSpec::new(Strategy::OneForOne).on_event(move |e| {
                if let SupervisorEvent::ChildExited { reason, .. } = e {
                    if reason.is_panic() {
                        d.add(1);
                    }
                }
            });
            for i in 0..n {
                spec = spec.child(
                    ChildSpec::new(i.to_string(), || Crashy { panic: Arc::new(AtomicBool::new(true)) })
                        .restart(Restart::Temporary),
                );
            }
            let sup = spec.start().await;
            for (_, c) in sup.children::<Crashy>().await {
                let _ = c.tell(Msg::Tell(0)).await;
            }
            let _ = rx.await;
            Some(done.get())
        }
    }

    fn ring_documented(actors: u64, hops: u64) -> impl Future<Output = Option<u64>> + Send {
        async move { Some(super::documented::weft_actor::ring(actors, hops).await) }
    }

    fn skynet_documented(leaves: u64) -> impl Future<Output = Option<u64>> + Send {
        async move { Some(super::documented::weft_actor::skynet(leaves).await) }
    }

    fn panic_restarts(n: u64) -> impl Future<Output = Option<u64>> + Send {
        async move {
            let (done, rx) = Done::new(n);
            let d = done.clone();
            let mut spec = SupervisorSpec::new(Strategy::OneForOne)
                .intensity(u32::MAX, Duration::from_secs(1))
                .on_event(move |e| {
                    if let SupervisorEvent::ChildRestarted { .. } = e {
                        d.add(1);
                    }
                });
            for i in 0..n {
                let panic = Arc::new(AtomicBool::new(true));
                spec = spec.child(ChildSpec::new(i.to_string(), move || Crashy { panic: panic.clone() }));
            }
            let sup = spec.start().await;
            for (_, c) in sup.children::<Crashy>().await {
                let _ = c.tell(Msg::Tell(0)).await;
            }
            let _ = rx.await;
            let mut answers = 0;
            for (_, c) in sup.children::<Crashy>().await {
                answers += c.ask(|r| Msg::Ask(0, r)).await.unwrap_or(0);
            }
            Some(answers)
        }
    }
}
