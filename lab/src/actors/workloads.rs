//! The actor workloads, written once against `ActorPeer`. Each returns `Ok(elapsed)` after
//! checking its own output, or `Err(why)`.

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
    ActorWorkload { name: "panic_signal", unit: "panicking supervised actors", scale: 10_000, smoke: 100 },
    ActorWorkload { name: "panic_restart", unit: "panic + restart + ask", scale: 10_000, smoke: 100 },
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
            "panic_signal" => match P::panic_signals(n).await {
                Some(v) => (v, n),
                None => return Ok(None),
            },
            "panic_restart" => match P::panic_restarts(n).await {
                Some(v) => (v, n),
                None => return Ok(None),
            },
            other => return Err(format!("unknown actor workload {other}")),
        };
        let elapsed = t0.elapsed();
        if got != want {
            return Err(format!("{w} {n} on {}: got {got}, want {want}", P::NAME));
        }
        Ok(Some(elapsed))
    })
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
    let (tx, rx) = futures_channel::oneshot::channel::<u64>();
    let mut tx = Some(tx);
    let sink = P::spawn(Box::new(move |sum| {
        if let Some(tx) = tx.take() {
            let _ = tx.send(sum);
        }
        (0, Flow::Stop)
    }));
    let root = skynet_node::<P>(0, n, sink);
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
