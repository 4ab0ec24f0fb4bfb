//! Plain tasks as actors, written once for runtimes with tokio's API shape: a bounded `mpsc`
//! channel (64) per actor, replies over `oneshot`, supervision by awaiting `JoinHandle`s
//! (`JoinError::is_panic`). `tokio_tasks.rs` instantiates it on tokio (the baseline peer) and
//! `weft_tasks.rs` on weft (a diagnostic peer that separates what weft-actor adds from what
//! the runtime itself costs).

/// Defines the peer `$Peer` (an `ActorPeer` named `$name`) and its message type `$Msg` on the
/// crate `$rt`; `$doc` names its module in `documented.rs`; `$block_on` builds the runtime and
/// runs a sample (`ActorPeer::block_on`).
macro_rules! plain_tasks_peer {
    (crate: $rt:ident, peer: $Peer:ident, msg: $Msg:ident, name: $name:literal, documented: $doc:ident, block_on: $block_on:path $(,)?) => {
        pub struct $Peer;

        pub enum $Msg {
            Tell(u64),
            Ask(u64, $rt::sync::oneshot::Sender<u64>),
        }

        impl $crate::actors::adapter::ActorPeer for $Peer {
            const NAME: &'static str = $name;
            type Addr = $rt::sync::mpsc::Sender<$Msg>;

            fn block_on<F>(threads: usize, f: F) -> F::Output
            where
                F: std::future::Future + Send + 'static,
                F::Output: Send + 'static,
            {
                $block_on(threads, f)
            }

            fn spawn(mut behavior: $crate::actors::adapter::Behavior) -> Self::Addr {
                let (tx, mut rx) = $rt::sync::mpsc::channel::<$Msg>(64);
                $rt::spawn(async move {
                    while let Some(m) = rx.recv().await {
                        let flow = match m {
                            $Msg::Tell(v) => behavior(v).1,
                            $Msg::Ask(v, r) => {
                                let (out, flow) = behavior(v);
                                let _ = r.send(out);
                                flow
                            }
                        };
                        if flow == $crate::actors::adapter::Flow::Stop {
                            break;
                        }
                    }
                });
                tx
            }

            fn tell(addr: &Self::Addr, msg: u64) -> impl std::future::Future<Output = ()> + Send {
                async move { addr.send($Msg::Tell(msg)).await.map_err(|_| ()).expect("task alive") }
            }

            fn tell_now(addr: &Self::Addr, msg: u64) {
                if addr.try_send($Msg::Tell(msg)).is_err() {
                    panic!("tell_now: channel full or closed");
                }
            }

            fn ask(addr: &Self::Addr, msg: u64) -> impl std::future::Future<Output = u64> + Send {
                async move {
                    let (tx, rx) = $rt::sync::oneshot::channel();
                    addr.send($Msg::Ask(msg, tx)).await.map_err(|_| ()).expect("task alive");
                    rx.await.expect("answered")
                }
            }

            fn spawn_task<F: std::future::Future<Output = ()> + Send + 'static>(f: F) {
                $rt::spawn(f);
            }

            fn yield_now() -> impl std::future::Future<Output = ()> + Send {
                $rt::task::yield_now()
            }

            fn sleep(d: std::time::Duration) -> impl std::future::Future<Output = ()> + Send {
                $rt::time::sleep(d)
            }

            fn panic_signals(n: u64) -> impl std::future::Future<Output = Option<u64>> + Send {
                async move {
                    let handles: Vec<_> = (0..n).map(|_| $rt::spawn(async { panic!("crashy") })).collect();
                    let mut panics = 0;
                    for h in handles {
                        if h.await.err().is_some_and(|e| e.is_panic()) {
                            panics += 1;
                        }
                    }
                    Some(panics)
                }
            }

            fn panic_restarts(n: u64) -> impl std::future::Future<Output = Option<u64>> + Send {
                async move {
                    // Each "actor" panics; its supervisor (here: the awaiting loop) sees the JoinError
                    // and spawns the replacement, which answers over a channel like an ask.
                    let handles: Vec<_> = (0..n).map(|_| $rt::spawn(async { panic!("crashy") })).collect();
                    let mut replacements = Vec::with_capacity(n as usize);
                    for h in handles {
                        if h.await.err().is_some_and(|e| e.is_panic()) {
                            replacements.push(Self::spawn(Box::new(|_| (1, $crate::actors::adapter::Flow::Continue))));
                        }
                    }
                    let mut answers = 0;
                    for r in &replacements {
                        answers += Self::ask(r, 0).await;
                    }
                    Some(answers)
                }
            }

            fn ring_documented(actors: u64, hops: u64) -> impl std::future::Future<Output = Option<u64>> + Send {
                async move { Some($crate::actors::documented::$doc::ring(actors, hops).await) }
            }

            fn skynet_documented(leaves: u64) -> impl std::future::Future<Output = Option<u64>> + Send {
                async move { Some($crate::actors::documented::$doc::skynet(leaves).await) }
            }
        }
    };
}

pub(crate) use plain_tasks_peer;
