//! The actor the README's three-terminal example, the tests and `weft-lab actors-remote` use:
//! a counter that checks the order its numbered additions arrive in, and can be told to stop
//! or to panic (so monitors have something to report).

use serde::{Deserialize, Serialize};
use weft_actor::{Actor, Context, Reply};

use crate::RemoteActor;

/// What the counter is told.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Cmd {
    /// Adds `n`; `seq` numbers one sender's additions from 0 (FIFO is checked against it).
    Add { seq: u64, n: u64 },
    /// Stops (reason `Normal`).
    Stop,
    /// Panics with this message.
    Panic(String),
    /// Carries bytes and does nothing else (throughput runs). Bytes as one string, not a
    /// sequence of `u8` (serde's default: one call per byte).
    Blob(#[serde(with = "serde_bytes")] Vec<u8>),
}

/// What it is asked.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Query {
    Get,
    Echo(#[serde(with = "serde_bytes")] Vec<u8>),
    /// Never answers (drops the reply).
    Ignore,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Answer {
    State { total: u64, count: u64, in_order: bool, blobs: u64 },
    Echo(#[serde(with = "serde_bytes")] Vec<u8>),
}

pub enum Msg {
    Cmd(Cmd),
    Ask(Query, Reply<Answer>),
}

#[derive(Debug, Default)]
pub struct Counter {
    total: u64,
    count: u64,
    next_seq: u64,
    in_order: bool,
    blobs: u64,
}

impl Counter {
    pub fn new() -> Counter {
        Counter { in_order: true, ..Counter::default() }
    }
}

impl Actor for Counter {
    type Msg = Msg;

    async fn handle(&mut self, msg: Msg, ctx: &mut Context<Self>) {
        match msg {
            Msg::Cmd(Cmd::Add { seq, n }) => {
                self.in_order &= seq == self.next_seq;
                self.next_seq = seq + 1;
                self.total += n;
                self.count += 1;
            }
            Msg::Cmd(Cmd::Stop) => ctx.stop(),
            Msg::Cmd(Cmd::Panic(m)) => panic!("{m}"),
            Msg::Cmd(Cmd::Blob(_)) => self.blobs += 1,
            Msg::Ask(Query::Get, r) => {
                let _ = r.send(Answer::State {
                    total: self.total,
                    count: self.count,
                    in_order: self.in_order,
                    blobs: self.blobs,
                });
            }
            Msg::Ask(Query::Echo(b), r) => {
                let _ = r.send(Answer::Echo(b));
            }
            Msg::Ask(Query::Ignore, r) => drop(r),
        }
    }
}

impl RemoteActor for Counter {
    type Tell = Cmd;
    type Ask = Query;
    type Answer = Answer;

    fn from_tell(msg: Cmd) -> Msg {
        Msg::Cmd(msg)
    }

    fn from_ask(req: Query, reply: Reply<Answer>) -> Msg {
        Msg::Ask(req, reply)
    }
}
