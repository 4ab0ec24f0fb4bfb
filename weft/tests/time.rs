//! Timers: never early, deadline order, cancellation, timeout, interval, reset.

mod support;

use std::time::Duration;

use weft::time::{self, Instant, MissedTickBehavior};

#[test]
fn sleep_never_fires_before_its_deadline() {
    for (name, rt) in support::flavors() {
        rt.block_on(async {
            let mut hs = Vec::new();
            for i in 0..200u64 {
                hs.push(weft::spawn(async move {
                    let d = Duration::from_micros(i * 137 % 25_000);
                    let start = Instant::now();
                    time::sleep(d).await;
                    let slept = start.elapsed();
                    assert!(slept >= d, "{name}: slept {slept:?} < {d:?}");
                }));
            }
            for h in hs {
                h.await.unwrap();
            }
        });
    }
}

/// Sub-millisecond sleeps (the wheel's tick is 1 µs and the I/O driver waits with
/// nanosecond timeouts): none completes before its deadline, on either flavor, with I/O on.
#[test]
fn sub_millisecond_sleeps_never_fire_early() {
    for (name, rt) in support::flavors() {
        rt.block_on(async {
            let mut hs = Vec::new();
            for i in 0..100u64 {
                hs.push(weft::spawn(async move {
                    for j in 0..5u64 {
                        let d = Duration::from_nanos(1 + (i * 7_919 + j * 104_729) % 900_000);
                        let deadline = Instant::now() + d;
                        time::sleep_until(deadline).await;
                        let now = Instant::now();
                        assert!(now >= deadline, "{name}: woke {:?} early", deadline - now);
                    }
                }));
            }
            for h in hs {
                h.await.unwrap();
            }
        });
    }
}

/// The wheel fires due timers in deadline order and wakes them in that order. The order is
/// observed at the source: one task drives all ten sleeps through a `FuturesUnordered`, whose
/// ready queue is filled in the order the wakers are called, so neither the worker that runs a
/// task nor the spacing between deadlines matters. The head start doubles until every timer is
/// registered before the first deadline (under valgrind registration alone can take 20 ms).
/// Run at millisecond spacing on both flavors and at 100 µs spacing (several deadlines share one
/// higher wheel slot) on the current-thread one: there a single thread fires and wakes every
/// timer, while two workers firing due timers at once could interleave their wake-ups.
#[test]
fn timers_fire_in_deadline_order() {
    use futures::stream::{FuturesUnordered, StreamExt};
    let mut runs: Vec<_> =
        support::flavors().into_iter().map(|(name, rt)| (name, rt, Duration::from_millis(3))).collect();
    runs.push(("current_thread", support::ct(), Duration::from_micros(100)));
    for (name, rt, spacing) in runs {
        let order = rt.block_on(async {
            let mut head_start = Duration::from_millis(20);
            loop {
                let base = Instant::now() + head_start;
                let mut sleeps: FuturesUnordered<_> = [7u64, 2, 9, 0, 5, 1, 8, 3, 6, 4]
                    .into_iter()
                    .map(|k| {
                        let deadline = base + spacing * k as u32;
                        async move {
                            time::sleep_until(deadline).await;
                            (k, deadline, Instant::now())
                        }
                    })
                    .collect();
                // The first poll registers every timer.
                let first = futures::poll!(sleeps.next());
                if first.is_ready() || Instant::now() >= base {
                    assert!(head_start < Duration::from_secs(60), "{name}: could not register 10 timers in time");
                    head_start *= 2;
                    continue;
                }
                let mut order = Vec::new();
                while let Some((k, deadline, woke)) = sleeps.next().await {
                    assert!(woke >= deadline, "{name}: timer {k} fired early");
                    order.push(k);
                }
                break order;
            }
        });
        assert_eq!(order, (0..10).collect::<Vec<_>>(), "{name}, {spacing:?} apart");
    }
}

#[test]
fn dropped_sleeps_are_cancelled_and_do_not_leak() {
    let rt = support::mt(2);
    rt.block_on(async {
        // Create, poll once, drop: many times (the wheel must end up empty).
        for _ in 0..100_000 {
            let mut s = std::pin::pin!(time::sleep(Duration::from_secs(10)));
            assert!(futures::poll!(s.as_mut()).is_pending());
        }
        // A later timer still fires promptly (nothing clogs the wheel).
        let start = Instant::now();
        time::sleep(Duration::from_millis(5)).await;
        // Well below the 10 s of the dropped sleeps, generous for valgrind.
        assert!(start.elapsed() < Duration::from_secs(9));
    });
}

#[test]
fn zero_and_past_deadlines_complete() {
    let rt = support::ct();
    rt.block_on(async {
        time::sleep(Duration::ZERO).await;
        time::sleep_until(Instant::now() - Duration::from_millis(10)).await;
    });
}

/// The timer slack (`time/driver.rs`, `MIN_DELAY_TICKS`): with the clock running, a sleep or
/// timeout shorter than 50 µs — zero and past deadlines included — takes 50 µs, so a loop that
/// backs off with zero timeouts (as zenoh's transmission loop does, tuned to tokio's 1 ms
/// rounding) waits instead of spinning; `interval`'s first tick stays ready at once, as tokio's.
#[test]
fn short_timeouts_wait_out_the_slack_and_interval_starts_at_once() {
    for (name, rt) in support::flavors() {
        rt.block_on(async {
            let start = Instant::now();
            time::sleep(Duration::ZERO).await;
            time::sleep_until(Instant::now() - Duration::from_millis(10)).await;
            let r = time::timeout(Duration::ZERO, std::future::pending::<()>()).await;
            assert!(r.is_err(), "{name}");
            let e = start.elapsed();
            assert!(e >= Duration::from_micros(150) && e < Duration::from_secs(5), "{name}: three slacks took {e:?}");
            // A ready future still passes through a zero timeout at once.
            assert_eq!(time::timeout(Duration::ZERO, async { 7 }).await, Ok(7), "{name}");

            // A back-off loop of zero timeouts: at most one round per 50 µs of wall time.
            let (start, mut rounds) = (Instant::now(), 0u32);
            while start.elapsed() < Duration::from_millis(20) {
                let _ = time::timeout(Duration::ZERO, std::future::pending::<()>()).await;
                rounds += 1;
            }
            let most = (start.elapsed().as_micros() / 50) as u32 + 1;
            assert!(rounds <= most, "{name}: {rounds} zero-timeout rounds in {:?}", start.elapsed());

            let mut ticks = time::interval(Duration::from_secs(3600));
            let first = std::pin::pin!(ticks.tick());
            assert!(futures::poll!(first).is_ready(), "{name}: interval's first tick not ready at once");
        });
    }
}

#[test]
fn timeout_elapses_and_passes_through() {
    for (name, rt) in support::flavors() {
        rt.block_on(async {
            let r = time::timeout(Duration::from_millis(10), std::future::pending::<()>()).await;
            let err = r.expect_err(name);
            assert_eq!(err.to_string(), "deadline has elapsed", "{name}");
            let r = time::timeout(Duration::from_secs(5), async { 3 }).await;
            assert_eq!(r, Ok(3), "{name}");
        });
    }
}

#[test]
fn sleep_reset_moves_the_deadline() {
    let rt = support::ct();
    rt.block_on(async {
        let start = Instant::now();
        let mut s = std::pin::pin!(time::sleep(Duration::from_secs(3600)));
        assert!(futures::poll!(s.as_mut()).is_pending());
        s.as_mut().reset(Instant::now() + Duration::from_millis(10));
        s.as_mut().await;
        assert!(s.is_elapsed());
        let e = start.elapsed();
        assert!(e >= Duration::from_millis(10) && e < Duration::from_secs(60), "{e:?}");
    });
}

#[test]
fn interval_ticks_and_missed_tick_behaviours() {
    let rt = support::ct();
    rt.block_on(async {
        let period = Duration::from_millis(10);
        let mut iv = time::interval(period);
        let t0 = iv.tick().await; // immediate
        let t1 = iv.tick().await;
        assert_eq!(t1 - t0, period);
        // Fall behind by ~3.5 periods.
        std::thread::sleep(Duration::from_millis(35));
        let burst = iv.tick().await;
        assert_eq!(burst - t1, period, "Burst keeps the schedule");

        let mut iv = time::interval(period);
        iv.set_missed_tick_behavior(MissedTickBehavior::Delay);
        iv.tick().await;
        std::thread::sleep(Duration::from_millis(35));
        let late = iv.tick().await;
        let next = iv.tick().await;
        assert!(next - late >= period, "Delay restarts one period after the late tick");

        let mut iv = time::interval(period);
        iv.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let s0 = iv.tick().await;
        std::thread::sleep(Duration::from_millis(35));
        let _late = iv.tick().await;
        let next = iv.tick().await;
        let offset = (next - s0).as_nanos() % period.as_nanos();
        assert_eq!(offset, 0, "Skip stays on the original grid");
    });
}

#[test]
#[should_panic(expected = "period must be non-zero")]
fn interval_rejects_zero_period() {
    let rt = support::ct();
    let _g = rt.enter();
    let _ = time::interval(Duration::ZERO);
}

#[test]
fn many_tasks_sleeping_all_wake() {
    for (name, rt) in support::flavors() {
        let n = rt.block_on(async {
            let hs: Vec<_> = (0..10_000).map(|_| weft::spawn(time::sleep(Duration::from_millis(1)))).collect();
            let mut n = 0;
            for h in hs {
                h.await.unwrap();
                n += 1;
            }
            n
        });
        assert_eq!(n, 10_000, "{name}");
    }
}
