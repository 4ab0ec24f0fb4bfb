//! Async lock workloads on the runtime's own (or its ecosystem's) `Semaphore` and `Mutex`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{expect_eq, inside, join_sum};
use crate::framework::adapter::{Adapter, Channels};

/// Tasks contending in both lock workloads.
pub const LOCK_TASKS: u64 = 16;
/// Permits of the semaphore in `semaphore_contended` (fewer than the tasks, so they queue).
pub const SEMAPHORE_PERMITS: usize = 4;

type Kit<R> = <R as Adapter>::Channels;

/// `semaphore_contended`: 16 tasks share N acquisitions of a 4-permit semaphore, each holding
/// its permit across a yield (so waiters really queue); counts the acquisitions.
pub async fn semaphore_contended<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let sem = Arc::new(Kit::<R>::semaphore(SEMAPHORE_PERMITS));
        let inside_now = Arc::new(AtomicU64::new(0));
        let total = Arc::new(AtomicU64::new(0));
        let per = n / LOCK_TASKS;
        let handles: Vec<_> = (0..LOCK_TASKS)
            .map(|_| {
                let (sem, inside_now, total) = (sem.clone(), inside_now.clone(), total.clone());
                R::spawn(async move {
                    let mut over = 0u64;
                    for _ in 0..per {
                        Kit::<R>::with_permit(&*sem, async {
                            if inside_now.fetch_add(1, Ordering::SeqCst) >= SEMAPHORE_PERMITS as u64 {
                                over += 1;
                            }
                            total.fetch_add(1, Ordering::Relaxed);
                            R::yield_now().await;
                            inside_now.fetch_sub(1, Ordering::SeqCst);
                        })
                        .await;
                    }
                    over
                })
            })
            .collect();
        expect_eq("times more than 4 tasks held a permit", join_sum::<R>(handles).await?, 0)?;
        expect_eq("acquisitions", total.load(Ordering::SeqCst), per * LOCK_TASKS)
    })
    .await
}

/// `mutex_contended`: 16 tasks share N increments of one counter behind an async mutex.
pub async fn mutex_contended<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let m = Arc::new(Kit::<R>::mutex(0u64));
        let per = n / LOCK_TASKS;
        let handles: Vec<_> = (0..LOCK_TASKS)
            .map(|_| {
                let m = m.clone();
                R::spawn(async move {
                    for _ in 0..per {
                        Kit::<R>::with_lock(&*m, |v| *v += 1).await;
                    }
                    per
                })
            })
            .collect();
        expect_eq("increments made", join_sum::<R>(handles).await?, per * LOCK_TASKS)?;
        let final_value = Kit::<R>::with_lock(&*m, |v| *v).await;
        expect_eq("counter", final_value, per * LOCK_TASKS)
    })
    .await
}
