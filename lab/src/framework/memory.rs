//! What a process holds in memory, and the idle-task shape the memory studies measure:
//! resident set size from `/proc/self/statm`, the heap handed back between in-process samples
//! (`release_free_heap`), and tasks parked on their own oneshot, spawned
//! until every one is known to be parked, then released and joined with each result checked.
//! `memory-per-task`, `memory-burst` and the actors' idle-bytes row stand on it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::framework::adapter::{Adapter, Channels};

/// Resident set size of this process in bytes.
pub fn rss_bytes() -> Result<u64, String> {
    let statm = std::fs::read_to_string("/proc/self/statm").map_err(|e| format!("reading /proc/self/statm: {e}"))?;
    let resident: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("unexpected /proc/self/statm: {statm:?}"))?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Ok(resident * page.max(1) as u64)
}

/// Hands the heap's free pages back to the system (glibc's `malloc_trim(0)`; a no-op on other
/// C libraries), so that a sample run in this process after another runtime's starts from a
/// trimmed heap instead of inheriting that runtime's leftovers.
///
/// Every sample run in a shared process calls it first: the micro suite's (`sample_in_process`),
/// the actors study's and tcp-echo's rounds. Without it,
/// `weft-lab actors --filter =skynet --runtimes weft-actor,tokio --reps 3 --idle-actors 0
/// --workers 2` counted 6–10 weft polls over 10 ms in each of 5 runs, one actor task held for
/// 77–82 ms about once per sample, and 0 with weft-actor alone: weft's new worker threads are
/// given the glibc arenas that tokio's exited workers left holding a million freed cells
/// (`MALLOC_ARENA_MAX=1` also made it 0). With the trim: 0 in 2 runs. A runtime that runs
/// after another one would otherwise also find its pages warm, which favours whoever runs second.
pub fn release_free_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: `malloc_trim` only releases free heap pages; it touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `tasks` live tasks, each parked on its own oneshot (`spawn_parked`), to release and join
/// (`release_and_join`).
pub struct Parked<R: Adapter> {
    senders: Vec<<R::Channels as Channels>::OneshotSender<u64>>,
    handles: Vec<R::Handle<Result<u64, &'static str>>>,
}

/// Spawns `tasks` tasks, each awaiting its own oneshot receiver, and returns once every one
/// has been polled and parked (each bumps a counter first: checked, not assumed).
pub async fn spawn_parked<R: Adapter>(tasks: u64) -> Parked<R> {
    let parked = Arc::new(AtomicU64::new(0));
    let mut senders = Vec::with_capacity(tasks as usize);
    let mut handles = Vec::with_capacity(tasks as usize);
    for i in 0..tasks {
        let (tx, rx) = <R::Channels as Channels>::oneshot::<u64>();
        let parked = parked.clone();
        handles.push(R::spawn(async move {
            parked.fetch_add(1, Relaxed);
            let v = <R::Channels as Channels>::recv_once(rx).await.map_err(|_| "oneshot closed")?;
            Ok::<u64, &'static str>(v ^ i)
        }));
        senders.push(tx);
    }
    // A yield lets the workers run.
    while parked.load(Relaxed) < tasks {
        R::yield_now().await;
    }
    Parked { senders, handles }
}

/// Sends on every oneshot and joins every task, checking that each returns its own value (so
/// every task really was alive and really completed).
pub async fn release_and_join<R: Adapter>(parked: Parked<R>) -> Result<(), String> {
    for (i, tx) in parked.senders.into_iter().enumerate() {
        <R::Channels as Channels>::send_once(tx, i as u64 ^ 0x5A5A).map_err(|_| "a task dropped its receiver")?;
    }
    for h in parked.handles {
        let v = R::join(h).await.map_err(|_| "an idle task panicked".to_string())??;
        if v != 0x5A5A {
            return Err(format!("a task returned {v:#x}, expected 0x5a5a"));
        }
    }
    Ok(())
}
