//! A supervision tree with restarts:
//!
//! ```text
//! root (OneForOne, 3 restarts / 5 s)
//! ├── cache       permanent worker
//! └── pipeline    sub-supervisor (RestForOne)
//!     ├── reader  permanent
//!     └── parser  transient: crashes on bad input, is restarted along with nothing after it
//! ```
//!
//! Run with `cargo run -p weft-actor --example supervision`.

use std::time::Duration;

use weft_actor::{
    Actor, AskError, ChildSpec, Context, ExitReason, Reply, Restart, Strategy, SupervisorEvent, SupervisorSpec,
};

struct Parser {
    parsed: u64,
}

enum ParserMsg {
    Parse(String, Reply<u64>),
}

impl Actor for Parser {
    type Msg = ParserMsg;

    async fn started(&mut self, ctx: &mut Context<Self>) {
        println!("  parser {} started", ctx.id());
    }

    async fn handle(&mut self, msg: ParserMsg, _ctx: &mut Context<Self>) {
        let ParserMsg::Parse(text, reply) = msg;
        let n: u64 = text.parse().unwrap_or_else(|_| panic!("cannot parse {text:?}"));
        self.parsed += 1;
        let _ = reply.send(n * 2);
    }

    async fn stopped(&mut self, reason: ExitReason, ctx: &mut Context<Self>) {
        println!("  parser {} stopped after {} messages: {reason}", ctx.id(), self.parsed);
    }
}

/// A worker with nothing to do but exist (for the tree's shape).
struct Idle(&'static str);

impl Actor for Idle {
    type Msg = ();
    async fn started(&mut self, ctx: &mut Context<Self>) {
        println!("  {} {} started", self.0, ctx.id());
    }
    async fn handle(&mut self, _msg: (), _ctx: &mut Context<Self>) {}
    async fn stopped(&mut self, reason: ExitReason, ctx: &mut Context<Self>) {
        println!("  {} {} stopped: {reason}", self.0, ctx.id());
    }
}

#[weft::main]
async fn main() {
    // Silence the default panic message; the supervisor reports the panic below.
    std::panic::set_hook(Box::new(|_| {}));

    let pipeline = SupervisorSpec::new(Strategy::RestForOne)
        .child(ChildSpec::new("reader", || Idle("reader")))
        .child(ChildSpec::new("parser", || Parser { parsed: 0 }).restart(Restart::Transient))
        .on_event(|e| {
            if let SupervisorEvent::ChildExited { child, reason } = e {
                println!("pipeline: {child} exited: {reason}");
            } else {
                println!("pipeline: {e:?}");
            }
        });
    println!("starting the tree");
    let root = SupervisorSpec::new(Strategy::OneForOne)
        .intensity(3, Duration::from_secs(5))
        .child(ChildSpec::new("cache", || Idle("cache")))
        .child(ChildSpec::supervisor("pipeline", pipeline))
        .start()
        .await;

    let pipeline = root.child_supervisor("pipeline").await.expect("pipeline runs");
    for input in ["21", "oops", "50"] {
        // Look the parser up for each request: after a crash it is a new incarnation, and
        // until the supervisor has seen the crash the old (stopped) one may still be listed.
        let answer = loop {
            let Some(parser) = pipeline.child::<Parser>("parser").await else {
                weft::task::yield_now().await;
                continue;
            };
            match parser.ask_timeout(|r| ParserMsg::Parse(input.to_string(), r), Duration::from_secs(1)).await {
                Err(AskError::Closed) => weft::task::yield_now().await,
                other => break other,
            }
        };
        match answer {
            Ok(n) => println!("parse({input}) = {n}"),
            Err(e) => println!("parse({input}) failed: {e}"),
        }
    }
    // Wait until the restart has been recorded, then show the counters.
    loop {
        let children = pipeline.which_children().await;
        if children.iter().all(|c| c.actor.is_some()) {
            for c in children {
                println!("pipeline child {:<7} restarts: {}", c.id, c.restarts);
            }
            break;
        }
        weft::task::yield_now().await;
    }
    println!("stopping the tree (children stop in reverse start order)");
    root.stop();
    println!("root stopped: {}", root.wait_stopped().await);
}
