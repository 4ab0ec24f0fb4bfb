//! Compensation for a blocked worker (the design and rejected alternatives are in the
//! scheduler essay, `scheduler/mod.rs`, "Blocked workers").
//!
//! Called by the monitor for the workers it found stuck past the threshold:
//! 1. the stuck workers' queued tasks are stolen (the ordinary steal-half protocol, the
//!    monitor acting as a thief), with the task in each one's LIFO slot (`lifo.rs`), and
//!    pushed on the injection queue, waking a sleeper;
//! 2. if that leaves runnable work with no worker asleep to take it, or every worker is
//!    stuck (then nobody drives timers and I/O), a *compensating thread* starts for one stuck
//!    worker: it runs injected tasks and, when there are none, drives the driver in 1 ms
//!    slices; it exits as soon as the worker it stands in for finishes its poll, or at
//!    shutdown. At most one per stuck worker, so never more than `worker_threads` extra.
//!
//! A compensating thread has no core: it needs no local queue, LIFO slot or idle-accounting
//! slot, so the workers' hot paths are unchanged. Tasks it polls wake and spawn through the
//! injection queue (as from any non-worker thread); their polls and poll time are counted in
//! the metrics of the worker stood in for (`stand_in_polls`, summed in when read).

use std::time::Duration;

use super::queue::{self, Local};
use super::Handle;
use crate::loom::sync::atomic::Ordering::*;
use crate::loom::sync::Arc;

/// How long a compensating thread with nothing to run sleeps (in the driver if it is free)
/// before looking at the injection queue again.
const IDLE_SLICE: Duration = Duration::from_millis(1);

/// The monitor's own state for compensation: its queue (the destination of its steals) and,
/// per worker, the poll sequence a stand-in was started for.
pub(crate) struct Scratch {
    queue: Local<Arc<Handle>>,
    covered: Vec<u64>,
}

impl Scratch {
    pub(crate) fn new(num_workers: usize) -> Scratch {
        Scratch { queue: queue::local().1, covered: vec![0; num_workers] }
    }
}

/// `stuck`: (worker, poll sequence) of each worker stuck past the threshold.
pub(crate) fn compensate(handle: &Arc<Handle>, stuck: &[(usize, u64)], scratch: &mut Scratch) {
    let shared = &handle.shared;
    let mut moved = false;
    for &(w, seq) in stuck {
        // The task the stuck poll woke last, most likely the one waiting longest for it.
        let still_stuck = || handle.monitor.slots[w].seq() == seq;
        if let Some(task) = shared.remotes[w].lifo.steal(still_stuck) {
            shared.inject.push(task);
            moved = true;
        }
        while let Some(first) = shared.remotes[w].steal.steal_into(&mut scratch.queue) {
            let rest = std::iter::from_fn(|| scratch.queue.pop());
            shared.inject.push_batch(std::iter::once(first).chain(rest));
            moved = true;
        }
    }
    if moved {
        handle.notify_parked();
    }
    let monitor = &handle.monitor;
    let running = monitor.temps.load(Acquire);
    if running >= stuck.len() || handle.is_shutdown() {
        return;
    }
    let everyone_stuck = stuck.len() == handle.num_workers();
    let work_waits = !shared.inject.is_empty() && shared.idle.num_sleeping() == 0;
    if !(everyone_stuck || work_waits) {
        return;
    }
    // One stand-in per stuck poll: it exits when that poll ends.
    let Some(&(w, seq)) = stuck.iter().find(|&&(w, seq)| scratch.covered[w] != seq) else { return };
    scratch.covered[w] = seq;
    monitor.temps.fetch_add(1, AcqRel);
    let h = handle.clone();
    let started = handle.threads.spawn_tracked(move || {
        stand_in(&h, w, seq);
        h.monitor.temps.fetch_sub(1, AcqRel);
        // If it held the driver, a sleeping worker must take it over (see the parking essay).
        h.notify_parked();
    });
    match started {
        Ok(()) => {
            monitor.temps_started.fetch_add(1, Relaxed);
        }
        Err(_) => {
            monitor.temps.fetch_sub(1, AcqRel);
        }
    }
}

/// A compensating thread: runs while worker `w` is still inside poll `seq`.
fn stand_in(handle: &Arc<Handle>, w: usize, seq: u64) {
    let _runtime = crate::runtime::context::enter_runtime("weft compensating thread");
    let _enter = crate::runtime::context::enter(crate::runtime::scheduler::Handle::MultiThread(handle.clone()));
    let slot = &handle.monitor.slots[w];
    while !handle.is_shutdown() && slot.seq() == seq {
        if let Some(task) = handle.shared.inject.pop() {
            let started = std::time::Instant::now();
            task.run();
            let m = &handle.common.metrics.workers[w];
            m.stand_in_polls.fetch_add(1, Relaxed);
            m.stand_in_busy_ns.fetch_add(started.elapsed().as_nanos() as u64, Relaxed);
            continue;
        }
        let drove = handle.shared.driver.try_with(|d| d.park_timeout(&handle.common.driver, Some(IDLE_SLICE)));
        if drove.is_none() {
            std::thread::sleep(IDLE_SLICE);
        }
    }
}
