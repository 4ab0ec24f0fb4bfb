//! Spawn-cost workloads: how fast a runtime creates, runs and joins short tasks.
//!
//! `spawn_outside` and `spawn_inside` share one body ([`spawn_and_join`]); the only difference is
//! where it runs. Outside = on the `block_on` thread, which in a multi-thread runtime is not a
//! worker, so every spawn goes through the runtime's shared injection queue (the method of report
//! 001, *Dtact vs Tokio Performance Benchmark Analysis Report*, docs/notes/reference-reports.md).
//! Inside = in a spawned task on a worker, where a runtime can use its local queue; that is how
//! real servers spawn, and the fair comparison.
//!
//! `deep_recursion` boxes each level's future (`Box::pin`) because a recursive async fn must;
//! the box is the same for every runtime.

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{expect_eq, inside, join_sum, Countdown};
use crate::framework::adapter::Adapter;

/// Spawns `n` trivial tasks from wherever it runs and joins them all.
async fn spawn_and_join<R: Adapter>(n: u64) -> Result<(), String> {
    let mut handles = Vec::with_capacity(n as usize);
    for i in 0..n {
        handles.push(R::spawn(async move { i }));
    }
    expect_eq("sum of task outputs", join_sum::<R>(handles).await?, n * n.saturating_sub(1) / 2)
}

/// `spawn_outside`: N spawns from the `block_on` future (outside the workers).
pub async fn spawn_outside<R: Adapter>(n: u64) -> Result<(), String> {
    spawn_and_join::<R>(n).await
}

/// `spawn_inside`: the same N spawns from inside a spawned task (on a worker).
pub async fn spawn_inside<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(spawn_and_join::<R>(n)).await
}

/// The "hot core" of report 001: one task spawns N tasks that each sum 100 numbers.
pub async fn deflect<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let mut handles = Vec::with_capacity(n as usize);
        for i in 0..n {
            handles.push(R::spawn(async move { (0..100u64).map(|k| black_box(i + k)).sum::<u64>() }));
        }
        let want = 100 * (n * n.saturating_sub(1) / 2) + 4950 * n;
        expect_eq("sum of sums", join_sum::<R>(handles).await?, want)
    })
    .await
}

/// tokio's `spawn_many`: N detached spawns from `block_on`, the last to finish signals.
pub async fn spawn_many<R: Adapter>(n: u64) -> Result<(), String> {
    let (countdown, done) = Countdown::new(n);
    for _ in 0..n {
        let countdown = countdown.clone();
        R::detach(R::spawn(async move { countdown.tick() }));
    }
    done.await.map_err(|_| "countdown never reached zero".to_string())
}

/// Number of tasks that keep the workers busy in `spawn_storm_busy` (as in report 004, *smarm —
/// Benchmarks & Tuning Recommendations*, docs/notes/reference-reports.md).
pub const STORM_BUSY_TASKS: u64 = 8;

/// `spawn_storm_busy`: N short tasks spawned and joined while yielding tasks keep workers busy.
pub async fn spawn_storm_busy<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let stop = Arc::new(AtomicU64::new(0));
        let busy: Vec<_> = (0..STORM_BUSY_TASKS)
            .map(|_| {
                let stop = stop.clone();
                R::spawn(async move {
                    while stop.load(Ordering::Relaxed) == 0 {
                        R::yield_now().await;
                    }
                    1
                })
            })
            .collect();
        let result = spawn_and_join::<R>(n).await;
        stop.store(1, Ordering::Relaxed);
        expect_eq("busy tasks stopped", join_sum::<R>(busy).await?, STORM_BUSY_TASKS)?;
        result
    })
    .await
}

/// Each level spawns the next and returns; the last level reports the hop count.
fn chain<R: Adapter>(remaining: u64, hops: u64, done: futures_channel::oneshot::Sender<u64>) {
    if remaining == 0 {
        let _ = done.send(hops);
    } else {
        R::detach(R::spawn(async move { chain::<R>(remaining - 1, hops + 1, done) }));
    }
}

/// tokio's `chained_spawn`: a chain of N tasks, each spawning the next.
pub async fn chained_spawn<R: Adapter>(n: u64) -> Result<(), String> {
    let (tx, rx) = futures_channel::oneshot::channel();
    R::detach(R::spawn(async move { chain::<R>(n, 0, tx) }));
    let hops = rx.await.map_err(|_| "chain broke".to_string())?;
    expect_eq("hops", hops, n)
}

type Level = Pin<Box<dyn Future<Output = Result<u64, String>> + Send>>;

/// One task per level: each spawns the level below and awaits it.
fn level<R: Adapter>(depth: u64) -> Level {
    Box::pin(async move {
        if depth == 0 {
            return Ok(0);
        }
        let below = R::join(R::spawn(level::<R>(depth - 1))).await.map_err(|_| "level panicked".to_string())??;
        Ok(below + 1)
    })
}

/// `deep_recursion`: recursion of the given depth with one task per level.
pub async fn deep_recursion<R: Adapter>(depth: u64) -> Result<(), String> {
    let got = R::join(R::spawn(level::<R>(depth))).await.map_err(|_| "root panicked".to_string())??;
    expect_eq("depth reached", got, depth)
}

/// tokio's `ping_pong`: N pairs of tasks, each pair trading one message each way over oneshots.
pub async fn ping_pong<R: Adapter>(n: u64) -> Result<(), String> {
    use futures_channel::oneshot;
    let (countdown, done) = Countdown::new(n);
    R::detach(R::spawn(async move {
        for i in 0..n {
            let countdown = countdown.clone();
            R::detach(R::spawn(async move {
                let (ping_tx, ping_rx) = oneshot::channel::<u64>();
                let (pong_tx, pong_rx) = oneshot::channel::<u64>();
                R::detach(R::spawn(async move {
                    if let Ok(v) = ping_rx.await {
                        let _ = pong_tx.send(v + 1);
                    }
                }));
                let _ = ping_tx.send(i);
                if pong_rx.await == Ok(i + 1) {
                    countdown.tick();
                }
            }));
        }
    }));
    done.await.map_err(|_| "a pong went missing".to_string())
}
