//! Loom model of the coalesced driver wake: however wakes interleave with the driver's
//! "poll returns → clear → look for work" cycle, no wake is lost (the eventfd is modelled as
//! a counter of edges; a lost wake would leave the driver spinning in "poll" forever).

use super::WakeCoalescer;
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use crate::loom::sync::Arc;
use crate::loom::thread;

struct Model {
    pending: WakeCoalescer,
    /// eventfd edges written.
    edges: AtomicUsize,
    /// Work published by each waker before it wakes the driver.
    work: [AtomicBool; 2],
}

fn wake(m: &Model, i: usize) {
    m.work[i].store(true, Relaxed);
    if m.pending.should_signal() {
        m.edges.fetch_add(1, Release);
    }
}

#[test]
fn loom_coalesced_wake_is_never_lost() {
    loom::model(|| {
        let m = Arc::new(Model {
            pending: WakeCoalescer::new(),
            edges: AtomicUsize::new(0),
            work: [AtomicBool::new(false), AtomicBool::new(false)],
        });
        let wakers: Vec<_> = (0..2)
            .map(|i| {
                let m = m.clone();
                thread::spawn(move || wake(&m, i))
            })
            .collect();
        // The driver: look for work; if some is missing, "poll" (wait for a new edge), clear.
        let mut seen_edges = 0;
        loop {
            if m.work[0].load(Relaxed) && m.work[1].load(Relaxed) {
                break;
            }
            loop {
                let e = m.edges.load(Acquire);
                if e != seen_edges {
                    seen_edges = e;
                    break;
                }
                thread::yield_now();
            }
            m.pending.clear();
        }
        for w in wakers {
            w.join().unwrap();
        }
    });
}
