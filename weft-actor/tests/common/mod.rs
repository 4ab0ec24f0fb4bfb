//! Test helpers: an event log recorded at the source, a drop counter, a test actor whose
//! exit reason is chosen by message, and `wait_until` (waits for a condition, not a time).
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weft_actor::{Actor, Context, ExitReason, Reply};

#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
    pub fn snapshot(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
    pub fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

pub fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

pub fn rt1() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Polls `cond` until it holds; panics after a generous bound (minutes, for valgrind).
pub async fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    for _ in 0..600_000 {
        if cond() {
            return;
        }
        weft::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("condition never held: {what}");
}

pub enum Cmd {
    Panic,
    Stop,
    StopShutdown,
    Ping(Reply<&'static str>),
    /// Acknowledge, then never return (ignores shutdown until killed).
    Block(Reply<()>),
}

/// Logs `start NAME` in `started`, `stop NAME` in `stopped`, `drop NAME` when dropped.
pub struct Worker {
    pub name: &'static str,
    pub log: Log,
    pub drops: Arc<AtomicUsize>,
}

impl Worker {
    pub fn new(name: &'static str, log: &Log, drops: &Arc<AtomicUsize>) -> Worker {
        Worker { name, log: log.clone(), drops: drops.clone() }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        self.log.push(format!("drop {}", self.name));
    }
}

impl Actor for Worker {
    type Msg = Cmd;

    async fn started(&mut self, _ctx: &mut Context<Self>) {
        self.log.push(format!("start {}", self.name));
    }

    async fn handle(&mut self, msg: Cmd, ctx: &mut Context<Self>) {
        match msg {
            Cmd::Panic => panic!("boom {}", self.name),
            Cmd::Stop => ctx.stop(),
            Cmd::StopShutdown => ctx.stop_with(ExitReason::Shutdown),
            Cmd::Ping(r) => {
                let _ = r.send(self.name);
            }
            Cmd::Block(r) => {
                let _ = r.send(());
                std::future::pending::<()>().await;
            }
        }
    }

    async fn stopped(&mut self, _reason: ExitReason, _ctx: &mut Context<Self>) {
        self.log.push(format!("stop {}", self.name));
    }
}

/// Only the `start`/`stop` entries (drop entries interleave with them by thread timing).
pub fn lifecycle(log: &[String]) -> Vec<String> {
    log.iter().filter(|s| !s.starts_with("drop ")).cloned().collect()
}
