//! Yield workloads: the cost of `yield_now` — a task going back to its run queue and being
//! polled again — alone and with other runnable tasks around.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{expect_eq, inside, join_sum};
use crate::framework::adapter::Adapter;

/// Yields per task in `yield_many` (tokio's benchmark: 200 tasks × 1,000 yields).
pub const YIELD_MANY_YIELDS: u64 = 1_000;
/// Yields per task in `yield_10x100` (report 001, *Dtact vs Tokio Performance Benchmark Analysis
/// Report*, docs/notes/reference-reports.md: 10 tasks × 100 yields).
pub const YIELD_10X100_YIELDS: u64 = 100;
/// Other yielding tasks present during `yield_in_hot_loop`.
pub const HOT_LOOP_OTHERS: u64 = 2;

/// `tasks` tasks, each yielding `yields` times, all joined.
async fn yield_tasks<R: Adapter>(tasks: u64, yields: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                R::spawn(async move {
                    let mut done = 0u64;
                    for _ in 0..yields {
                        R::yield_now().await;
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        expect_eq("yields done", join_sum::<R>(handles).await?, tasks * yields)
    })
    .await
}

/// `yield_many`: `tasks` tasks × 1,000 yields.
pub async fn yield_many<R: Adapter>(tasks: u64) -> Result<(), String> {
    yield_tasks::<R>(tasks, YIELD_MANY_YIELDS).await
}

/// `yield_10x100`: `tasks` tasks × 100 yields.
pub async fn yield_10x100<R: Adapter>(tasks: u64) -> Result<(), String> {
    yield_tasks::<R>(tasks, YIELD_10X100_YIELDS).await
}

/// `yield_in_hot_loop`: one task yields `n` times while two other tasks keep yielding too; the
/// others must get at least n/10 yields between them (no starvation).
pub async fn yield_in_hot_loop<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let stop = Arc::new(AtomicU64::new(0));
        let others: Vec<_> = (0..HOT_LOOP_OTHERS)
            .map(|_| {
                let stop = stop.clone();
                R::spawn(async move {
                    let mut yields = 0u64;
                    while stop.load(Ordering::Relaxed) == 0 {
                        R::yield_now().await;
                        yields += 1;
                    }
                    yields
                })
            })
            .collect();
        let mut done = 0u64;
        for _ in 0..n {
            R::yield_now().await;
            done += 1;
        }
        stop.store(1, Ordering::Relaxed);
        expect_eq("hot yields", done, n)?;
        // A yield must let the others run: a runtime that re-polls the yielding task at once
        // would finish fast by starving them. Round robin gives them about n yields in total.
        let others_yields = join_sum::<R>(others).await?;
        if others_yields < n / 10 {
            return Err(format!(
                "validation failed: the other tasks yielded only {others_yields} times during {n} hot yields (starved)"
            ));
        }
        Ok(())
    })
    .await
}
