//! Idle-worker accounting: how many workers are searching, how many are awake, who sleeps.
//!
//! State word (`AtomicUsize`):
//! ```text
//!  63 ................ 16 15 ............ 0
//! [  num_unparked       |  num_searching   ]
//! ```
//! * `num_searching` — workers currently stealing; at most half of the workers (so a burst
//!   does not turn every worker into a thief).
//! * `num_unparked` — workers not registered as sleepers.
//!
//! `sleepers` (behind a mutex) lists the parked workers' indices. Notifying takes the lock
//! only when the word says a wake-up is useful: nobody searching and somebody asleep.
//!
//! No lost wake-up: a producer publishes its task, then reads the word with a SeqCst RMW; a
//! worker going to sleep updates the word with a SeqCst RMW and *then* looks at the queues
//! one last time (`Context::park` in `worker.rs`). Whichever RMW comes second in the total order sees the
//! other's effect: either the producer sees the sleeper and wakes it, or the sleeper sees
//! the task and stays awake.

use crate::loom::lock;
use crate::loom::sync::atomic::{
    AtomicUsize,
    Ordering::{Relaxed, SeqCst},
};
use crate::loom::sync::Mutex;

const UNPARK_SHIFT: usize = 16;
const SEARCH_MASK: usize = (1 << UNPARK_SHIFT) - 1;
const UNPARK_ONE: usize = 1 << UNPARK_SHIFT;

pub(crate) struct Idle {
    state: AtomicUsize,
    num_workers: usize,
    sleepers: Mutex<Vec<usize>>,
}

#[derive(Clone, Copy)]
struct State(usize);

impl State {
    fn num_searching(self) -> usize {
        self.0 & SEARCH_MASK
    }
    fn num_unparked(self) -> usize {
        self.0 >> UNPARK_SHIFT
    }
}

impl Idle {
    pub(crate) fn new(num_workers: usize) -> Idle {
        assert!(num_workers < SEARCH_MASK, "too many workers");
        Idle {
            state: AtomicUsize::new(num_workers << UNPARK_SHIFT),
            num_workers,
            sleepers: Mutex::new(Vec::with_capacity(num_workers)),
        }
    }

    fn load_seqcst(&self) -> State {
        // An RMW, not a load: it orders our earlier queue push before this read in the single
        // total order of SeqCst operations (see the module comment).
        State(self.state.fetch_add(0, SeqCst))
    }

    fn should_wake(&self, s: State) -> bool {
        s.num_searching() == 0 && s.num_unparked() < self.num_workers
    }

    /// Picks a sleeper to wake if one should be woken, counting it as unparked *and*
    /// searching (so concurrent notifiers don't wake a second one for the same work).
    pub(crate) fn worker_to_notify(&self) -> Option<usize> {
        if !self.should_wake(self.load_seqcst()) {
            return None;
        }
        let mut sleepers = lock(&self.sleepers);
        if !self.should_wake(State(self.state.load(SeqCst))) {
            return None;
        }
        let worker = sleepers.pop()?;
        self.state.fetch_add(UNPARK_ONE + 1, SeqCst);
        Some(worker)
    }

    /// A cheap, possibly stale guess of whether some worker is registered as a sleeper.
    pub(crate) fn has_sleepers(&self) -> bool {
        State(self.state.load(Relaxed)).num_unparked() < self.num_workers
    }

    /// A cheap, possibly stale guess of whether `worker_to_notify` would wake anybody. Only for
    /// work queued on an awake worker, which runs it itself if nobody comes (so a stale "no"
    /// costs parallelism, never a lost wake-up). Keeps the spawn path free of shared RMWs.
    pub(crate) fn may_want_wakeup(&self) -> bool {
        self.should_wake(State(self.state.load(Relaxed)))
    }

    /// Registers `worker` as a sleeper (no longer searching, if it was). The caller then takes
    /// a final look at the queues (`Context::park`), which is what covers work published by a
    /// producer that saw it awake; so unlike tokio this returns nothing to act on.
    pub(crate) fn transition_worker_to_parked(&self, worker: usize, is_searching: bool) {
        let mut sleepers = lock(&self.sleepers);
        let dec = UNPARK_ONE + usize::from(is_searching);
        self.state.fetch_sub(dec, SeqCst);
        sleepers.push(worker);
    }

    /// Starts searching unless half the workers already are. A CAS loop, so that two workers
    /// deciding at once cannot both pass the check and push the count past half.
    pub(crate) fn transition_worker_to_searching(&self) -> bool {
        let mut cur = self.state.load(SeqCst);
        loop {
            if 2 * State(cur).num_searching() >= self.num_workers {
                return false;
            }
            match self.state.compare_exchange_weak(cur, cur + 1, SeqCst, SeqCst) {
                Ok(_) => return true,
                Err(actual) => cur = actual,
            }
        }
    }

    /// Stops searching. Returns true if this was the last searching worker (which must then
    /// wake another worker if work remains, to keep the search chain going).
    pub(crate) fn transition_worker_from_searching(&self) -> bool {
        let prev = State(self.state.fetch_sub(1, SeqCst));
        debug_assert!(prev.num_searching() > 0);
        prev.num_searching() == 1
    }

    /// Removes `worker` from the sleepers if it is there (it woke up on its own: a timer, or
    /// it found work). Returns true if it was removed.
    pub(crate) fn unpark_worker_by_id(&self, worker: usize) -> bool {
        let mut sleepers = lock(&self.sleepers);
        if let Some(i) = sleepers.iter().position(|&w| w == worker) {
            sleepers.swap_remove(i);
            self.state.fetch_add(UNPARK_ONE, SeqCst);
            return true;
        }
        false
    }

    /// True while `worker` is registered as a sleeper (no one has picked it to wake).
    pub(crate) fn is_parked(&self, worker: usize) -> bool {
        lock(&self.sleepers).contains(&worker)
    }

    /// Workers registered as sleepers (a stale-tolerant read for the blocked-worker monitor).
    pub(crate) fn num_sleeping(&self) -> usize {
        self.num_workers - State(self.state.load(SeqCst)).num_unparked()
    }

    /// Workers currently searching (a stale-tolerant read for `Handle::has_pending_work`).
    pub(crate) fn num_searching(&self) -> usize {
        State(self.state.load(SeqCst)).num_searching()
    }
}
