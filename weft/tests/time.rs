//! Timers: never early, deadline order, cancellation, timeout, interval, reset.

mod support;

use std::sync::{Arc, Mutex};
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

#[test]
fn timers_fire_in_deadline_order() {
    for (name, rt) in support::flavors() {
        let order = Arc::new(Mutex::new(Vec::new()));
        rt.block_on(async {
            let base = Instant::now() + Duration::from_millis(20);
            let mut hs = Vec::new();
            // Deadlines 3 ms apart (well above the 1 ms tick), spawned in scrambled order.
            for k in [7u64, 2, 9, 0, 5, 1, 8, 3, 6, 4] {
                let order = order.clone();
                hs.push(weft::spawn(async move {
                    time::sleep_until(base + Duration::from_millis(3 * k)).await;
                    order.lock().unwrap().push(k);
                }));
            }
            for h in hs {
                h.await.unwrap();
            }
        });
        assert_eq!(*order.lock().unwrap(), (0..10).collect::<Vec<_>>(), "{name}");
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
        assert!(start.elapsed() < Duration::from_secs(5));
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
