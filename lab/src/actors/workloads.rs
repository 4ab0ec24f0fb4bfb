//! The actor workloads, written once against `ActorPeer`. Each returns `Ok(elapsed)` after
//! checking its own output, or `Err(why)`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::adapter::{ActorPeer, Done, Flow};

/// One workload: a name, what `n` means, its measured size and its smoke size.
#[derive(Clone, Copy, Debug)]
pub struct ActorWorkload {
    pub name: &'static str,
    pub unit: &'static str,
    pub scale: u64,
    pub smoke: u64,
}

pub const WORKLOADS: &[ActorWorkload] = &[
    ActorWorkload { name: "spawn", unit: "actors (spawn + 1 message + stop)", scale: 10_000, smoke: 100 },
    ActorWorkload { name: "tell_1t", unit: "tells, one thread", scale: 100_000, smoke: 1_000 },
    ActorWorkload { name: "tell_mt", unit: "tells, multi-thread", scale: 100_000, smoke: 1_000 },
    ActorWorkload { name: "ask_1t", unit: "asks awaited one by one, one thread", scale: 100_000, smoke: 1_000 },
    ActorWorkload { name: "ask_mt", unit: "asks awaited one by one, multi-thread", scale: 100_000, smoke: 1_000 },
    ActorWorkload { name: "ring", unit: "hops (1,000 actors x laps)", scale: 1_000_000, smoke: 10_000 },
    ActorWorkload { name: "skynet", unit: "actors (sum of 0..n)", scale: 1_000_000, smoke: 1_000 },
    ActorWorkload {
        name: "ring_doc_1t",
        unit: "hops (1,000 actors x laps), written the documented way, one thread",
        scale: 1_000_000,
        smoke: 10_000,
    },
    ActorWorkload {
        name: "skynet_doc_1t",
        unit: "leaves (n leaves: 1.11 n actors), written the documented way, one thread",
        scale: 100_000,
        smoke: 1_000,
    },
    ActorWorkload {
        name: "panic_signal",
        unit: "panicking supervised actors (smarm's catch_unwind_panics)",
        scale: 10_000,
        smoke: 100,
    },
    ActorWorkload {
        name: "panic_restart",
        unit: "panic + restart + ask (catch_unwind_panics, restart variant)",
        scale: 10_000,
        smoke: 100,
    },
    ActorWorkload {
        name: "unwind",
        unit: "panic!(\"crashy\") caught by catch_unwind in one task (the unwinding each panic row pays)",
        scale: 10_000,
        smoke: 100,
    },
    // smarm's suite (report 004, *smarm — Benchmarks & Tuning Recommendations*,
    // docs/notes/reference-reports.md), expressed with actors where it applies.
    ActorWorkload { name: "chained_spawn", unit: "actors, each spawned by the previous one", scale: 1_000, smoke: 50 },
    ActorWorkload { name: "ping_pong", unit: "messages bounced between two actors", scale: 100_000, smoke: 1_000 },
    ActorWorkload {
        name: "spawn_storm_busy",
        unit: "actors (spawn + 1 message + stop) beside 8 busy actors",
        scale: 10_000,
        smoke: 100,
    },
    ActorWorkload { name: "yield_many", unit: "yields (100 plain tasks)", scale: 100_000, smoke: 1_000 },
    ActorWorkload { name: "many_timers", unit: "1 ms sleeps (plain tasks)", scale: 10_000, smoke: 100 },
    ActorWorkload {
        name: "fan_out_compute",
        unit: "actors computing 10k LCG steps each, results to a collector",
        scale: 1_000,
        smoke: 20,
    },
    ActorWorkload { name: "deep_recursion", unit: "levels (an actor per level)", scale: 500, smoke: 20 },
    ActorWorkload {
        name: "mpsc_contention",
        unit: "tells from 8 producer tasks to 1 actor",
        scale: 100_000,
        smoke: 1_000,
    },
    ActorWorkload {
        name: "uncontended_channel",
        unit: "tells from 1 producer task to 1 actor",
        scale: 100_000,
        smoke: 1_000,
    },
];

/// Runs workload `w` at size `n` on peer `P`. `Ok(None)`: the peer cannot run it.
pub fn run<P: ActorPeer>(w: &str, n: u64, workers: usize) -> Result<Option<Duration>, String> {
    let threads = if w.ends_with("_1t") { 1 } else { workers };
    let w = w.to_string();
    P::block_on(threads, async move {
        let t0 = Instant::now();
        let (got, want) = match w.as_str() {
            "spawn" => (spawn::<P>(n).await, n),
            "tell_1t" | "tell_mt" => (tells::<P>(n).await, n * (n - 1) / 2),
            "ask_1t" | "ask_mt" => (asks::<P>(n).await, n * (n + 1) / 2),
            "ring" => (ring::<P>(1000.min(n), n).await, n),
            "skynet" => (skynet::<P>(n).await, n * (n - 1) / 2),
            "ring_doc_1t" => match P::ring_documented(1000.min(n), n).await {
                Some(v) => (v, super::documented::ring_want(n)),
                None => return Ok(None),
            },
            "skynet_doc_1t" => match P::skynet_documented(n).await {
                Some(v) => (v, super::documented::skynet_want(n)),
                None => return Ok(None),
            },
            "panic_signal" => match P::panic_signals(n).await {
                Some(v) => (v, n),
                None => return Ok(None),
            },
            "panic_restart" => match P::panic_restarts(n).await {
                Some(v) => (v, n),
                None => return Ok(None),
            },
            "unwind" => (unwind(n), n),
            "chained_spawn" => (chained_spawn::<P>(n).await, n),
            "ping_pong" => (ring::<P>(2, n).await, n),
            "spawn_storm_busy" if !P::FAIR_TO_SELF_SENDERS => return Ok(None),
            "spawn_storm_busy" => (spawn_storm_busy::<P>(n).await, n),
            "yield_many" => yield_many::<P>(n).await,
            "many_timers" => (many_timers::<P>(n).await, n),
            "fan_out_compute" => (fan_out_compute::<P>(n).await, (0..n).map(lcg_work).fold(0, u64::wrapping_add)),
            "deep_recursion" => (deep_recursion::<P>(n).await, n * (n - 1) / 2),
            "mpsc_contention" => producers::<P>(8, n).await,
            "uncontended_channel" => producers::<P>(1, n).await,
            other => return Err(format!("unknown actor workload {other}")),
        };
        let elapsed = t0.elapsed();
        if got != want {
            return Err(format!("{w} {n} on {}: got {got}, want {want}", P::NAME));
        }
        Ok(Some(elapsed))
    })
}

/// `n` panics with the panic rows' payload, each caught on the spot: the unwinding part of a
/// panic row's cost, with no actor, task or notification around it. Returns the panics caught.
fn unwind(n: u64) -> u64 {
    (0..n)
        .map(|i| {
            std::panic::catch_unwind(|| {
                if std::hint::black_box(i) < n {
                    panic!("crashy")
                }
            })
            .is_err() as u64
        })
        .sum()
}

/// `n` actors, each handles one message and stops.
async fn spawn<P: ActorPeer>(n: u64) -> u64 {
    let (done, rx) = Done::new(n);
    let mut addrs = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let done = done.clone();
        addrs.push(P::spawn(Box::new(move |_| {
            done.add(1);
            (0, Flow::Stop)
        })));
    }
    for a in &addrs {
        P::tell(a, 1).await;
    }
    let _ = rx.await;
    done.get()
}

/// One actor sums `n` tells; an ask reads the sum.
async fn tells<P: ActorPeer>(n: u64) -> u64 {
    let mut sum = 0u64;
    let a = P::spawn(Box::new(move |m| {
        if m == u64::MAX {
            return (sum, Flow::Stop);
        }
        sum += m;
        (0, Flow::Continue)
    }));
    for i in 0..n {
        P::tell(&a, i).await;
    }
    P::ask(&a, u64::MAX).await
}

/// `n` asks awaited one by one; the actor answers `m + 1`.
async fn asks<P: ActorPeer>(n: u64) -> u64 {
    let a = P::spawn(Box::new(|m| (m + 1, Flow::Continue)));
    let mut sum = 0;
    for i in 0..n {
        sum += P::ask(&a, i).await;
    }
    sum
}

/// `actors` in a ring pass one token `hops` times; returns the hops counted.
async fn ring<P: ActorPeer>(actors: u64, hops: u64) -> u64 {
    let (done, rx) = Done::new(hops);
    let slots: Vec<Arc<OnceLock<P::Addr>>> = (0..actors).map(|_| Arc::new(OnceLock::new())).collect();
    let mut addrs = Vec::new();
    for i in 0..actors as usize {
        let next = slots[(i + 1) % actors as usize].clone();
        let done = done.clone();
        addrs.push(P::spawn(Box::new(move |left| {
            done.add(1);
            if left > 1 {
                P::tell_now(next.get().expect("ring wired"), left - 1);
            }
            (0, Flow::Continue)
        })));
    }
    for (slot, a) in slots.iter().zip(&addrs) {
        let _ = slot.set(a.clone());
    }
    P::tell(&addrs[0], hops).await;
    let _ = rx.await;
    done.get()
}

const GO: u64 = u64::MAX;

/// Skynet: a tree of actors, 10 children each, leaves send their number, parents the sum.
async fn skynet<P: ActorPeer>(n: u64) -> u64 {
    answer_of_tree::<P>(|sink| skynet_node::<P>(0, n, sink)).await
}

/// Builds a tree whose root reports to a sink actor (`build` gets the sink's address), starts
/// it with `GO`, and returns the one number the sink receives.
async fn answer_of_tree<P: ActorPeer>(build: impl FnOnce(P::Addr) -> P::Addr) -> u64 {
    let (tx, rx) = futures_channel::oneshot::channel::<u64>();
    let mut tx = Some(tx);
    let sink = P::spawn(Box::new(move |sum| {
        if let Some(tx) = tx.take() {
            let _ = tx.send(sum);
        }
        (0, Flow::Stop)
    }));
    let root = build(sink);
    P::tell(&root, GO).await;
    rx.await.unwrap_or(0)
}

fn skynet_node<P: ActorPeer>(num: u64, size: u64, parent: P::Addr) -> P::Addr {
    let me: Arc<OnceLock<P::Addr>> = Arc::new(OnceLock::new());
    let me2 = me.clone();
    let (mut sum, mut pending) = (0u64, 0u64);
    let a = P::spawn(Box::new(move |m| {
        if m == GO {
            if size <= 1 {
                P::tell_now(&parent, num);
                return (0, Flow::Stop);
            }
            let step = size / 10;
            pending = 10;
            for i in 0..10 {
                let child = skynet_node::<P>(num + i * step, step, me2.get().expect("wired").clone());
                P::tell_now(&child, GO);
            }
            return (0, Flow::Continue);
        }
        sum += m;
        pending -= 1;
        if pending == 0 {
            P::tell_now(&parent, sum);
            return (0, Flow::Stop);
        }
        (0, Flow::Continue)
    }));
    let _ = me.set(a.clone());
    a
}

/// Each actor, on its message, spawns the next and passes the message on; the last one ends.
async fn chained_spawn<P: ActorPeer>(n: u64) -> u64 {
    let (done, rx) = Done::new(n);
    let first = chain_link::<P>(n - 1, done.clone());
    P::tell(&first, 0).await;
    let _ = rx.await;
    done.get()
}

fn chain_link<P: ActorPeer>(left: u64, done: Done) -> P::Addr {
    P::spawn(Box::new(move |_| {
        done.add(1);
        if left > 0 {
            let next = chain_link::<P>(left - 1, done.clone());
            P::tell_now(&next, 0);
        }
        (0, Flow::Stop)
    }))
}

/// `n` one-message actors spawned while 8 actors keep the workers busy (each re-sends itself
/// a message until the storm is over).
async fn spawn_storm_busy<P: ActorPeer>(n: u64) -> u64 {
    const BUSY: u64 = 8;
    let over = Arc::new(AtomicBool::new(false));
    let (stopped, stopped_rx) = Done::new(BUSY);
    let mut busy = Vec::new();
    for _ in 0..BUSY {
        let me: Arc<OnceLock<P::Addr>> = Arc::new(OnceLock::new());
        let (me2, over, stopped) = (me.clone(), over.clone(), stopped.clone());
        let a = P::spawn(Box::new(move |_| {
            if over.load(Ordering::Acquire) {
                stopped.add(1);
                return (0, Flow::Stop);
            }
            P::tell_now(me2.get().expect("wired"), 0);
            (0, Flow::Continue)
        }));
        let _ = me.set(a.clone());
        busy.push(a);
    }
    for b in &busy {
        P::tell(b, 0).await;
    }
    let got = spawn::<P>(n).await;
    over.store(true, Ordering::Release);
    let _ = stopped_rx.await;
    if stopped.get() != BUSY {
        return 0;
    }
    got
}

/// 100 plain tasks yield `n / 100` times each; returns (yields counted, yields wanted).
async fn yield_many<P: ActorPeer>(n: u64) -> (u64, u64) {
    let tasks = 100.min(n);
    let each = n / tasks;
    let (done, rx) = Done::new(tasks * each);
    for _ in 0..tasks {
        let done = done.clone();
        P::spawn_task(async move {
            for _ in 0..each {
                P::yield_now().await;
            }
            done.add(each);
        });
    }
    let _ = rx.await;
    (done.get(), tasks * each)
}

/// `n` plain tasks each sleep 1 ms.
async fn many_timers<P: ActorPeer>(n: u64) -> u64 {
    let (done, rx) = Done::new(n);
    for _ in 0..n {
        let done = done.clone();
        P::spawn_task(async move {
            P::sleep(Duration::from_millis(1)).await;
            done.add(1);
        });
    }
    let _ = rx.await;
    done.get()
}

/// CPU work of one fan-out actor: 10,000 LCG steps seeded by its index.
fn lcg_work(i: u64) -> u64 {
    (0..10_000u64).fold(i, |a, k| a.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(k | 1))
}

/// `n` actors each compute `lcg_work(i)` and add it to a shared sum. (Not a collector actor:
/// `n` concurrent `tell_now`s into one bounded mailbox would overflow it.)
async fn fan_out_compute<P: ActorPeer>(n: u64) -> u64 {
    let (done, rx) = Done::new(n);
    let sum = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (done, sum) = (done.clone(), sum.clone());
        workers.push(P::spawn(Box::new(move |i| {
            sum.fetch_add(lcg_work(i), Ordering::AcqRel);
            done.add(1);
            (0, Flow::Stop)
        })));
    }
    for (i, w) in workers.iter().enumerate() {
        P::tell(w, i as u64).await;
    }
    let _ = rx.await;
    sum.load(Ordering::Acquire)
}

/// A chain of `depth` actors, each spawned by the one above; the deepest sends its level up
/// and every level adds its own: the root's answer is the sum of `0..depth`.
async fn deep_recursion<P: ActorPeer>(depth: u64) -> u64 {
    answer_of_tree::<P>(|sink| level::<P>(0, depth, sink)).await
}

fn level<P: ActorPeer>(level_no: u64, depth: u64, parent: P::Addr) -> P::Addr {
    let me: Arc<OnceLock<P::Addr>> = Arc::new(OnceLock::new());
    let me2 = me.clone();
    let a = P::spawn(Box::new(move |m| {
        if m == GO {
            if level_no + 1 == depth {
                P::tell_now(&parent, level_no);
                return (0, Flow::Stop);
            }
            let child = level::<P>(level_no + 1, depth, me2.get().expect("wired").clone());
            P::tell_now(&child, GO);
            return (0, Flow::Continue);
        }
        P::tell_now(&parent, m + level_no);
        (0, Flow::Stop)
    }));
    let _ = me.set(a.clone());
    a
}

/// `k` producer tasks tell `n / k` values each to one actor, which sums them; returns
/// (the actor's sum, the sum sent).
async fn producers<P: ActorPeer>(k: u64, n: u64) -> (u64, u64) {
    let each = n / k;
    let total = k * each;
    let (tx, rx) = futures_channel::oneshot::channel::<u64>();
    let mut tx = Some(tx);
    let (mut sum, mut left) = (0u64, total);
    let consumer = P::spawn(Box::new(move |v| {
        sum += v;
        left -= 1;
        if left == 0 {
            if let Some(tx) = tx.take() {
                let _ = tx.send(sum);
            }
            return (0, Flow::Stop);
        }
        (0, Flow::Continue)
    }));
    for j in 0..k {
        let c = consumer.clone();
        P::spawn_task(async move {
            for v in j * each..(j + 1) * each {
                P::tell(&c, v).await;
            }
        });
    }
    drop(consumer);
    (rx.await.unwrap_or(0), total * (total - 1) / 2)
}
