//! Timer workloads: registering and cancelling timers (`timers_create_drop`), moving one
//! pending timer later again and again (`timer_reset`) and many tasks sleeping at once
//! (`many_timers`).

use std::pin::pin;
use std::time::{Duration, Instant};

use futures_lite::future::poll_once;

use super::{expect_eq, inside, join_sum};
use crate::framework::adapter::Adapter;

/// `timers_create_drop`: N one-second sleeps, each created, polled once (registered) and dropped.
pub async fn timers_create_drop<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let mut pending = 0u64;
        for _ in 0..n {
            let mut sleep = pin!(R::sleep(Duration::from_secs(1)));
            if poll_once(sleep.as_mut()).await.is_none() {
                pending += 1;
            }
        }
        expect_eq("sleeps still pending after one poll", pending, n)
    })
    .await
}

/// `timer_reset`: one timer, due in a second, moved 1 µs later and polled N times — what an
/// idle timeout does when a connection pushes it back on every read — and still pending after
/// each poll; then moved to now, and awaited (it must fire).
pub async fn timer_reset<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let base = Instant::now() + Duration::from_secs(1);
        let mut timer = pin!(R::timer_at(base));
        let mut pending = 0u64;
        for i in 1..=n {
            R::reset_timer(timer.as_mut(), base + Duration::from_micros(i));
            if poll_once(timer.as_mut()).await.is_none() {
                pending += 1;
            }
        }
        expect_eq("timeouts still pending after each move", pending, n)?;
        R::reset_timer(timer.as_mut(), Instant::now());
        timer.await;
        Ok(())
    })
    .await
}

/// How long each `many_timers` task sleeps.
pub const MANY_TIMERS_SLEEP: Duration = Duration::from_millis(1);

/// `many_timers`: N tasks each sleeping 1 ms, joined; none may wake early.
pub async fn many_timers<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                R::spawn(async move {
                    let start = Instant::now();
                    R::sleep(MANY_TIMERS_SLEEP).await;
                    u64::from(start.elapsed() >= MANY_TIMERS_SLEEP)
                })
            })
            .collect();
        expect_eq("tasks that slept the full 1 ms", join_sum::<R>(handles).await?, n)
    })
    .await
}
