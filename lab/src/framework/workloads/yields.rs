//! Yield workloads: the cost of `yield_now` — a task going back to its run queue and being
//! polled again — alone and with other runnable tasks around.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// How long `yield_in_hot_loop`'s hot task keeps yielding after its counted yields while the
/// other tasks have not yet made their share; past this the runtime is starving them.
pub const HOT_LOOP_FAIRNESS_DEADLINE: Duration = Duration::from_secs(5);

/// `yield_in_hot_loop`: one task yields `n` times while two other tasks keep yielding too; the
/// others must get at least n/10 yields between them (no starvation).
///
/// A runtime that re-polls a yielding task at once would finish fast by starving the others, so
/// the hot task does not stop them until they have made n/10 yields: if they are short when its
/// `n` counted yields are done, it goes on yielding (uncounted, and inside the timed sample) until
/// they catch up, and fails after [`HOT_LOOP_FAIRNESS_DEADLINE`]. On a multi-thread runtime the
/// others can sit on a worker thread that the OS has descheduled for the whole hot loop (a loaded
/// two-core machine does this for far longer than 1,000 yields take); that is not the runtime's
/// starvation, and waiting for them tells the two apart. Round robin on one thread gives the
/// others about n yields, so an honest single-thread runtime never waits.
pub async fn yield_in_hot_loop<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let stop = Arc::new(AtomicBool::new(false));
        let counts: Vec<Arc<AtomicU64>> = (0..HOT_LOOP_OTHERS).map(|_| Arc::default()).collect();
        let others: Vec<_> = counts
            .iter()
            .map(|count| {
                let (stop, count) = (stop.clone(), count.clone());
                R::spawn(async move {
                    let mut yields = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        R::yield_now().await;
                        yields += 1;
                        count.store(yields, Ordering::Relaxed);
                    }
                    yields
                })
            })
            .collect();
        let others_so_far = || counts.iter().map(|c| c.load(Ordering::Relaxed)).sum::<u64>();
        let mut done = 0u64;
        for _ in 0..n {
            R::yield_now().await;
            done += 1;
        }
        let share = n / 10;
        let waited_since = Instant::now();
        while others_so_far() < share && waited_since.elapsed() < HOT_LOOP_FAIRNESS_DEADLINE {
            R::yield_now().await;
        }
        stop.store(true, Ordering::Relaxed);
        expect_eq("hot yields", done, n)?;
        let others_yields = join_sum::<R>(others).await?;
        if others_yields < share {
            return Err(format!(
                "validation failed: the other tasks yielded only {others_yields} times during {n} hot yields \
                 and {HOT_LOOP_FAIRNESS_DEADLINE:?} more of the hot task's yielding (starved)"
            ));
        }
        Ok(())
    })
    .await
}
