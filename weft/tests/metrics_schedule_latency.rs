//! The schedule-latency histogram (wake → poll, opt-in): exactly one sample per wake-up or
//! yield, none for the first poll after `spawn`, none when it is off, exported when on.
//! Counts only; no latency value is asserted.

mod support;

use std::time::{Duration, Instant};

use weft::runtime::{Builder, Runtime, TaskState};

fn samples(rt: &Runtime) -> u64 {
    let m = rt.handle().metrics();
    (0..m.num_workers())
        .flat_map(|w| (0..m.poll_time_histogram_num_buckets()).map(move |b| (w, b)))
        .map(|(w, b)| m.schedule_latency_histogram_bucket_count(w, b))
        .sum()
}

/// Five yields, then three wake-ups from outside the runtime (each sent once the task is idle).
fn run_workload(rt: &Runtime) {
    let (tx, mut rx) = weft::sync::mpsc::unbounded_channel::<()>();
    let task = rt.spawn(async move {
        for _ in 0..5 {
            weft::task::yield_now().await;
        }
        for _ in 0..3 {
            rx.recv().await.unwrap();
        }
    });
    for _ in 0..3 {
        let deadline = Instant::now() + Duration::from_secs(60);
        // The current-thread flavor runs tasks only inside `block_on`.
        rt.block_on(async {
            loop {
                let d = rt.handle().dump_tasks();
                if d.len() == 1 && d[0].state == TaskState::Idle {
                    break;
                }
                assert!(Instant::now() < deadline, "the task never went idle");
                weft::time::sleep(Duration::from_millis(1)).await;
            }
        });
        tx.send(()).unwrap();
    }
    rt.block_on(task).unwrap();
}

#[test]
fn one_sample_per_wake_and_yield_and_none_when_off() {
    for flavor in ["current_thread", "multi_thread"] {
        let mut b =
            if flavor == "current_thread" { Builder::new_current_thread() } else { Builder::new_multi_thread() };
        if flavor == "multi_thread" {
            b.worker_threads(2);
        }
        let on = b.enable_all().enable_metrics_schedule_latency_histogram().build().unwrap();
        assert!(on.handle().metrics().schedule_latency_histogram_enabled());
        run_workload(&on);
        assert_eq!(samples(&on), 8, "{flavor}: 5 yields + 3 wake-ups, not the first poll");
        let text = weft::metrics::text::render(&on.handle().metrics());
        assert!(text.contains("# TYPE weft_schedule_latency_seconds histogram"), "{text}");
    }
    let off = support::mt(2);
    assert!(!off.handle().metrics().schedule_latency_histogram_enabled());
    run_workload(&off);
    assert_eq!(samples(&off), 0);
    assert!(!weft::metrics::text::render(&off.handle().metrics()).contains("weft_schedule_latency"));
}
