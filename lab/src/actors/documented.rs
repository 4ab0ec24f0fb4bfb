//! The documented-way rows, `ring_doc_1t` and `skynet_doc_1t`: the ring and skynet written the
//! way each peer's own docs show, not through the boxed `u64` behaviours of `adapter.rs`.
//!
//! The adapter's rows measure the framework under identical code: every actor is the same
//! closure and sends with a non-waiting `tell_now`. A user writes neither: they write an
//! actor type with its own message enum and send with the peer's ordinary send from its
//! handler. These rows do that, so a cost the adapter's shape hides (an awaited send inside
//! `handle`, a parent keeping its children's addresses, an actor kept alive by references
//! rather than by itself) shows up. Each peer's version is written once here:
//! * **weft-actor** (README and `examples/`): `ActorRef::tell(..).await` inside `handle`; a
//!   parent keeps its children's `ActorRef`s in a `Vec` (an actor stops once no reference is
//!   left), a child holds its parent's `ActorRef` to report; the root stops itself when done,
//!   and the tree then stops from the top.
//! * **plain tasks** (tokio's tutorial, and its twin on weft): one task per node, a bounded
//!   `mpsc` channel per node, `send(..).await`; a parent sums what its children send on its
//!   own channel.
//! * **actix** (its book): `Handler` impls, `Addr::do_send` from a handler (actix handlers are
//!   synchronous), children's `Addr`s kept by the parent.
//!
//! kameo and ractor are not written here (`None`: the rows show "-").
//!
//! Both rows run on one thread (`_1t`), where the gap between the adapter's shape and the
//! documented one shows without scheduling noise.

use super::adapter::Done;

/// The number of hops a ring of `actors` must count for `hops` hops: checked by the caller.
pub fn ring_want(hops: u64) -> u64 {
    hops
}

/// Skynet over `leaves` leaves numbered `0..leaves` (a power of 10): the sum of their numbers.
pub fn skynet_want(leaves: u64) -> u64 {
    leaves * (leaves - 1) / 2
}

pub mod weft_actor {
    //! weft-actor, the way its README and example write actors.
    use super::Done;
    use weft_actor::{spawn, Actor, ActorRef, Context};

    pub struct RingNode {
        next: Option<ActorRef<RingNode>>,
        done: Done,
    }

    pub enum RingMsg {
        /// The next actor in the ring.
        Next(ActorRef<RingNode>),
        /// The token, with the hops left.
        Token(u64),
    }

    impl Actor for RingNode {
        type Msg = RingMsg;
        async fn handle(&mut self, msg: RingMsg, _ctx: &mut Context<Self>) {
            match msg {
                RingMsg::Next(next) => self.next = Some(next),
                RingMsg::Token(left) => {
                    self.done.add(1);
                    if left > 1 {
                        let next = self.next.as_ref().expect("ring wired");
                        next.tell(RingMsg::Token(left - 1)).await.map_err(|_| ()).expect("ring node alive");
                    }
                }
            }
        }
    }

    pub async fn ring(actors: u64, hops: u64) -> u64 {
        let (done, rx) = Done::new(hops);
        let nodes: Vec<_> = (0..actors).map(|_| spawn(RingNode { next: None, done: done.clone() })).collect();
        for (i, n) in nodes.iter().enumerate() {
            let next = nodes[(i + 1) % nodes.len()].clone();
            n.tell(RingMsg::Next(next)).await.map_err(|_| ()).expect("ring node alive");
        }
        nodes[0].tell(RingMsg::Token(hops)).await.map_err(|_| ()).expect("ring node alive");
        let _ = rx.await;
        done.get()
    }

    pub struct SkyNode {
        num: u64,
        size: u64,
        parent: Option<ActorRef<SkyNode>>,
        root_reply: Option<futures_channel::oneshot::Sender<u64>>,
        children: Vec<ActorRef<SkyNode>>,
        pending: u64,
        sum: u64,
    }

    pub enum SkyMsg {
        Go,
        Sum(u64),
    }

    impl SkyNode {
        async fn report(&mut self, value: u64, ctx: &mut Context<Self>) {
            match &self.parent {
                Some(p) => p.tell(SkyMsg::Sum(value)).await.map_err(|_| ()).expect("parent alive"),
                None => {
                    if let Some(tx) = self.root_reply.take() {
                        let _ = tx.send(value);
                    }
                    ctx.stop();
                }
            }
        }
    }

    impl Actor for SkyNode {
        type Msg = SkyMsg;
        async fn handle(&mut self, msg: SkyMsg, ctx: &mut Context<Self>) {
            match msg {
                SkyMsg::Go if self.size <= 1 => self.report(self.num, ctx).await,
                SkyMsg::Go => {
                    let me = ctx.actor_ref().expect("a running actor has a reference");
                    let step = self.size / 10;
                    self.pending = 10;
                    for i in 0..10 {
                        let child = spawn(SkyNode {
                            num: self.num + i * step,
                            size: step,
                            parent: Some(me.clone()),
                            root_reply: None,
                            children: Vec::new(),
                            pending: 0,
                            sum: 0,
                        });
                        child.tell(SkyMsg::Go).await.map_err(|_| ()).expect("child alive");
                        self.children.push(child);
                    }
                }
                SkyMsg::Sum(v) => {
                    self.sum += v;
                    self.pending -= 1;
                    if self.pending == 0 {
                        self.report(self.sum, ctx).await;
                    }
                }
            }
        }
    }

    pub async fn skynet(leaves: u64) -> u64 {
        let (tx, rx) = futures_channel::oneshot::channel();
        let root = spawn(SkyNode {
            num: 0,
            size: leaves,
            parent: None,
            root_reply: Some(tx),
            children: Vec::new(),
            pending: 0,
            sum: 0,
        });
        root.tell(SkyMsg::Go).await.map_err(|_| ()).expect("root alive");
        rx.await.unwrap_or(0)
    }
}

/// Plain tasks and channels on a runtime with tokio's API (`$rt`): defines `$name::ring` and
/// `$name::skynet`.
macro_rules! plain_tasks_documented {
    ($name:ident, $rt:ident) => {
        pub mod $name {
            //! Plain tasks and bounded channels, the way tokio's tutorial writes them.
            use super::Done;
            use $rt::sync::mpsc;

            pub async fn ring(actors: u64, hops: u64) -> u64 {
                let (done, rx) = Done::new(hops);
                let (txs, rxs): (Vec<_>, Vec<_>) = (0..actors).map(|_| mpsc::channel::<u64>(64)).unzip();
                for (i, mut inbox) in rxs.into_iter().enumerate() {
                    let next = txs[(i + 1) % txs.len()].clone();
                    let done = done.clone();
                    $rt::spawn(async move {
                        while let Some(left) = inbox.recv().await {
                            done.add(1);
                            if left > 1 {
                                next.send(left - 1).await.expect("ring task alive");
                            }
                        }
                    });
                }
                txs[0].send(hops).await.expect("ring task alive");
                let _ = rx.await;
                done.get()
            }

            fn node(num: u64, size: u64, parent: mpsc::Sender<u64>) {
                $rt::spawn(async move {
                    if size <= 1 {
                        let _ = parent.send(num).await;
                        return;
                    }
                    let step = size / 10;
                    let (tx, mut inbox) = mpsc::channel(10);
                    for i in 0..10 {
                        node(num + i * step, step, tx.clone());
                    }
                    let mut sum = 0;
                    for _ in 0..10 {
                        sum += inbox.recv().await.expect("children report");
                    }
                    let _ = parent.send(sum).await;
                });
            }

            pub async fn skynet(leaves: u64) -> u64 {
                let (tx, mut rx) = mpsc::channel(1);
                node(0, leaves, tx);
                rx.recv().await.unwrap_or(0)
            }
        }
    };
}

plain_tasks_documented!(tokio_tasks, tokio);
plain_tasks_documented!(weft_tasks, weft);

pub mod actix {
    //! actix, the way its book writes actors: `Handler`s, `do_send` from a handler.
    use super::Done;
    use actix::prelude::{Actor, Addr, AsyncContext, Context, Handler, Message};
    use actix::ActorContext;

    pub struct RingNode {
        next: Option<Addr<RingNode>>,
        done: Done,
    }

    impl Actor for RingNode {
        type Context = Context<Self>;
    }

    pub struct Next(Addr<RingNode>);
    pub struct Token(u64);

    impl Message for Next {
        type Result = ();
    }

    impl Message for Token {
        type Result = ();
    }

    impl Handler<Next> for RingNode {
        type Result = ();
        fn handle(&mut self, msg: Next, _ctx: &mut Context<Self>) {
            self.next = Some(msg.0);
        }
    }

    impl Handler<Token> for RingNode {
        type Result = ();
        fn handle(&mut self, msg: Token, _ctx: &mut Context<Self>) {
            self.done.add(1);
            if msg.0 > 1 {
                self.next.as_ref().expect("ring wired").do_send(Token(msg.0 - 1));
            }
        }
    }

    pub async fn ring(actors: u64, hops: u64) -> u64 {
        let (done, rx) = Done::new(hops);
        let nodes: Vec<_> = (0..actors).map(|_| RingNode { next: None, done: done.clone() }.start()).collect();
        for (i, n) in nodes.iter().enumerate() {
            n.do_send(Next(nodes[(i + 1) % nodes.len()].clone()));
        }
        nodes[0].do_send(Token(hops));
        let _ = rx.await;
        done.get()
    }

    pub struct SkyNode {
        num: u64,
        size: u64,
        parent: Option<Addr<SkyNode>>,
        root_reply: Option<futures_channel::oneshot::Sender<u64>>,
        children: Vec<Addr<SkyNode>>,
        pending: u64,
        sum: u64,
    }

    impl Actor for SkyNode {
        type Context = Context<Self>;
    }

    pub struct Go;
    pub struct Sum(u64);

    impl Message for Go {
        type Result = ();
    }

    impl Message for Sum {
        type Result = ();
    }

    impl SkyNode {
        fn new(num: u64, size: u64, parent: Option<Addr<SkyNode>>) -> SkyNode {
            SkyNode { num, size, parent, root_reply: None, children: Vec::new(), pending: 0, sum: 0 }
        }

        fn report(&mut self, value: u64, ctx: &mut Context<Self>) {
            match &self.parent {
                Some(p) => p.do_send(Sum(value)),
                None => {
                    if let Some(tx) = self.root_reply.take() {
                        let _ = tx.send(value);
                    }
                    ctx.stop();
                }
            }
        }
    }

    impl Handler<Go> for SkyNode {
        type Result = ();
        fn handle(&mut self, _: Go, ctx: &mut Context<Self>) {
            if self.size <= 1 {
                return self.report(self.num, ctx);
            }
            let step = self.size / 10;
            self.pending = 10;
            for i in 0..10 {
                let child = SkyNode::new(self.num + i * step, step, Some(ctx.address())).start();
                child.do_send(Go);
                self.children.push(child);
            }
        }
    }

    impl Handler<Sum> for SkyNode {
        type Result = ();
        fn handle(&mut self, msg: Sum, ctx: &mut Context<Self>) {
            self.sum += msg.0;
            self.pending -= 1;
            if self.pending == 0 {
                let sum = self.sum;
                self.report(sum, ctx);
            }
        }
    }

    pub async fn skynet(leaves: u64) -> u64 {
        let (tx, rx) = futures_channel::oneshot::channel();
        let mut root = SkyNode::new(0, leaves, None);
        root.root_reply = Some(tx);
        root.start().do_send(Go);
        rx.await.unwrap_or(0)
    }
}
