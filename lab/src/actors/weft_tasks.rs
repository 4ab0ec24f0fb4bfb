//! A diagnostic peer, `weft-tasks`: `tokio_tasks.rs` on weft — plain weft tasks and
//! `weft::sync::mpsc` channels (bounded, 64), replies over `weft::sync::oneshot`, supervision
//! by awaiting `JoinHandle`s. Not in the default peer list: it separates what weft-actor adds
//! from what the runtime itself costs (`--runtimes weft-actor,weft-tasks,tokio`).

use std::future::Future;

use weft::sync::{mpsc, oneshot};

use super::adapter::{ActorPeer, Behavior, Flow};

pub struct WeftTasks;

pub enum Msg {
    Tell(u64),
    Ask(u64, oneshot::Sender<u64>),
}

impl ActorPeer for WeftTasks {
    const NAME: &'static str = "weft-tasks";
    type Addr = mpsc::Sender<Msg>;

    fn block_on<F>(threads: usize, f: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let rt = if threads == 1 {
            weft::runtime::Builder::new_current_thread().enable_all().build()
        } else {
            weft::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build()
        };
        rt.expect("weft runtime").block_on(f)
    }

    fn spawn(mut behavior: Behavior) -> Self::Addr {
        let (tx, mut rx) = mpsc::channel::<Msg>(64);
        weft::spawn(async move {
            while let Some(m) = rx.recv().await {
                let flow = match m {
                    Msg::Tell(v) => behavior(v).1,
                    Msg::Ask(v, r) => {
                        let (out, flow) = behavior(v);
                        let _ = r.send(out);
                        flow
                    }
                };
                if flow == Flow::Stop {
                    break;
                }
            }
        });
        tx
    }

    fn tell(addr: &Self::Addr, msg: u64) -> impl Future<Output = ()> + Send {
        async move { addr.send(Msg::Tell(msg)).await.map_err(|_| ()).expect("task alive") }
    }

    fn tell_now(addr: &Self::Addr, msg: u64) {
        if addr.try_send(Msg::Tell(msg)).is_err() {
            panic!("tell_now: channel full or closed");
        }
    }

    fn ask(addr: &Self::Addr, msg: u64) -> impl Future<Output = u64> + Send {
        async move {
            let (tx, rx) = oneshot::channel();
            addr.send(Msg::Ask(msg, tx)).await.map_err(|_| ()).expect("task alive");
            rx.await.expect("answered")
        }
    }

    fn spawn_task<F: Future<Output = ()> + Send + 'static>(f: F) {
        weft::spawn(f);
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        weft::task::yield_now()
    }

    fn sleep(d: std::time::Duration) -> impl Future<Output = ()> + Send {
        weft::time::sleep(d)
    }

    fn panic_signals(n: u64) -> impl Future<Output = Option<u64>> + Send {
        async move {
            let handles: Vec<_> = (0..n).map(|_| weft::spawn(async { panic!("crashy") })).collect();
            let mut panics = 0;
            for h in handles {
                if h.await.err().is_some_and(|e| e.is_panic()) {
                    panics += 1;
                }
            }
            Some(panics)
        }
    }

    fn panic_restarts(n: u64) -> impl Future<Output = Option<u64>> + Send {
        async move {
            // Each "actor" panics; its supervisor (here: the awaiting loop) sees the JoinError
            // and spawns the replacement, which answers over a channel like an ask.
            let handles: Vec<_> = (0..n).map(|_| weft::spawn(async { panic!("crashy") })).collect();
            let mut replacements = Vec::with_capacity(n as usize);
            for h in handles {
                if h.await.err().is_some_and(|e| e.is_panic()) {
                    replacements.push(Self::spawn(Box::new(|_| (1, Flow::Continue))));
                }
            }
            let mut answers = 0;
            for r in &replacements {
                answers += Self::ask(r, 0).await;
            }
            Some(answers)
        }
    }
}
