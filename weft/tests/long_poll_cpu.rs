//! A long poll is reported by how long it blocked its worker, not by wall time: a short poll
//! whose thread was only preempted (waiting for a CPU) is not reported, while a spin and a
//! sleep of the same length are. The preemption is made deterministic by pinning the worker
//! and nine busy threads to one CPU, so the worker gets about a tenth of it.
#![cfg(target_os = "linux")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const THRESHOLD: Duration = Duration::from_millis(20);

fn first_allowed_cpu() -> usize {
    // SAFETY: `set` is a zeroed, writable cpu_set_t of the size passed.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set), 0);
        (0..libc::CPU_SETSIZE as usize).find(|&c| libc::CPU_ISSET(c, &set)).expect("some CPU is allowed")
    }
}

fn pin_this_thread(cpu: usize) {
    // SAFETY: `set` is a zeroed cpu_set_t with one bit set, passed with its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set), 0);
    }
}

fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a live, writable timespec; CLOCK_THREAD_CPUTIME_ID always exists on Linux.
    assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) }, 0);
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Spins until this thread has used `cpu` of CPU time.
fn spin_for_cpu(cpu: Duration) {
    let start = thread_cpu_time();
    while thread_cpu_time() - start < cpu {
        std::hint::spin_loop();
    }
}

fn runtime() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .long_poll_threshold(THRESHOLD)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `body` as one task's single poll on a fresh one-worker runtime; the poll's wall time and
/// the runtime's long-poll count once the monitor has had time to see it end (up to 2 s for a
/// report to appear: a slow machine delays the monitor, and a late report must still be seen).
fn one_poll(body: impl FnOnce() + Send + 'static) -> (Duration, u64) {
    let rt = runtime();
    let wall = rt.block_on(async {
        weft::spawn(async move {
            let start = Instant::now();
            body();
            start.elapsed()
        })
        .await
        .unwrap()
    });
    let deadline = Instant::now() + Duration::from_secs(2);
    while rt.metrics().long_poll_count() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    (wall, rt.metrics().long_poll_count())
}

#[test]
fn preempted_is_not_reported_spinning_and_sleeping_are() {
    let cpu = first_allowed_cpu();
    let stop = Arc::new(AtomicBool::new(false));
    let hogs: Vec<_> = (0..9)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                pin_this_thread(cpu);
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(20));
    let (wall, count) = one_poll(move || {
        pin_this_thread(cpu);
        spin_for_cpu(Duration::from_millis(5));
    });
    stop.store(true, Ordering::Relaxed);
    for h in hogs {
        h.join().unwrap();
    }
    // The scenario must really have stretched the poll well past the threshold, or this test
    // could not tell the two rules apart.
    assert!(wall >= THRESHOLD * 2, "5 ms of CPU took only {wall:?} of wall time: not preempted enough");
    assert_eq!(count, 0, "a {wall:?} poll that used 5 ms of CPU and otherwise waited for one was reported");

    let (wall, count) = one_poll(|| spin_for_cpu(Duration::from_millis(50)));
    assert_eq!(count, 1, "a 50 ms spin ({wall:?} wall) is a long poll");

    let (wall, count) = one_poll(|| std::thread::sleep(Duration::from_millis(50)));
    assert_eq!(count, 1, "a 50 ms sleep in a syscall ({wall:?} wall) is a long poll");
}
