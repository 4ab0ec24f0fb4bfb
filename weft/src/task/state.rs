//! The task state word: one `AtomicUsize` holding lifecycle flags and the reference count.
//!
//! Every transition is a single CAS loop (or one `fetch_*`) on this word, so the questions
//! "may I poll it?", "must I schedule it?", "who drops the output?" and "who frees the memory?"
//! always have exactly one winner.
//!
//! ```text
//!  63 ........................... 6   5          4            3         2         1          0
//! [ reference count (REF_ONE = 64) | JOIN_WAKER | JOIN_INTEREST | CANCELLED | NOTIFIED | COMPLETE | RUNNING ]
//! ```
//!
//! * `RUNNING`  — some thread holds the right to touch the future (polling it, or cancelling
//!   it). Never set together with `COMPLETE`.
//! * `COMPLETE` — the future has been dropped and the stage holds the output (or a
//!   `JoinError`). Once set it is never cleared; `RUNNING` is never set again.
//! * `NOTIFIED` — a `Runnable` reference for this task sits (or is about to sit) in a run
//!   queue. While set, wakers do not submit the task again. May coexist with `RUNNING` (woken
//!   during its own poll: the poller re-submits it when it goes idle).
//! * `CANCELLED` — abort or shutdown asked for the future to be dropped; the next thread that
//!   gains `RUNNING` drops it instead of polling it.
//! * `JOIN_INTEREST` — a `JoinHandle` exists. When clear, nobody will read the output, so the
//!   completing thread drops it immediately.
//! * `JOIN_WAKER` — the trailer's join-waker slot is owned by the task side (may be read and
//!   woken by the completing thread). While clear, only the `JoinHandle` touches the slot.
//!   The `JoinHandle` may set it only before `COMPLETE`; it may clear it only before
//!   `COMPLETE`; after `COMPLETE` the completing thread clears it.
//!
//! A fresh task starts as `NOTIFIED | JOIN_INTEREST` with two references: one for the
//! `Runnable` handed to the scheduler, one for the `JoinHandle`. The owned-task list takes a
//! third (`ref_inc`) when the task first goes idle (see `list.rs`, lazy binding).

use crate::loom::sync::atomic::{AtomicUsize, Ordering::*};

const RUNNING: usize = 0b00_0001;
const COMPLETE: usize = 0b00_0010;
const NOTIFIED: usize = 0b00_0100;
const CANCELLED: usize = 0b00_1000;
const JOIN_INTEREST: usize = 0b01_0000;
const JOIN_WAKER: usize = 0b10_0000;

/// Bits that describe where the task is in its life.
const LIFECYCLE_MASK: usize = RUNNING | COMPLETE;
/// All flag bits; the rest of the word is the reference count.
const FLAGS_MASK: usize = (1 << REF_SHIFT) - 1;
const REF_SHIFT: usize = 6;
const REF_ONE: usize = 1 << REF_SHIFT;
const REF_MASK: usize = !FLAGS_MASK;

/// The state of a brand-new task (see the module comment).
const INITIAL_STATE: usize = (REF_ONE * 2) | JOIN_INTEREST | NOTIFIED;

pub(crate) struct State {
    val: AtomicUsize,
}

/// A copy of the state word, decoded.
#[derive(Copy, Clone)]
pub(crate) struct Snapshot(usize);

#[must_use]
pub(crate) enum TransitionToRunning {
    /// The caller now holds `RUNNING` and must poll the future.
    Success,
    /// The caller holds `RUNNING` but must cancel (drop) the future instead of polling it.
    Cancelled,
    /// Someone else runs it or it is complete; the caller's reference was released.
    Failed,
    /// As `Failed`, and the caller released the last reference: free the task.
    Dealloc,
}

#[must_use]
pub(crate) enum TransitionToIdle {
    /// Idle; the poller's reference was released (it was not the last).
    Ok,
    /// Woken during the poll: `NOTIFIED` stays set and the poller's reference now belongs to a
    /// new `Runnable` that the caller must submit to the scheduler.
    OkNotified,
    /// Idle and the poller held the last reference: free the task.
    OkDealloc,
    /// Cancelled during the poll: the caller still holds `RUNNING` and must cancel the future.
    Cancelled,
}

#[must_use]
pub(crate) enum TransitionToNotifiedByVal {
    /// Nothing to do; the caller's reference was released.
    DoNothing,
    /// The caller's reference now belongs to a `Runnable` that must be submitted.
    Submit,
    /// The caller released the last reference: free the task.
    Dealloc,
}

#[must_use]
pub(crate) enum TransitionToNotifiedByRef {
    DoNothing,
    /// A new reference was taken for a `Runnable` that must be submitted.
    Submit,
}

impl Snapshot {
    pub(crate) fn is_running(self) -> bool {
        self.0 & RUNNING == RUNNING
    }
    pub(crate) fn is_complete(self) -> bool {
        self.0 & COMPLETE == COMPLETE
    }
    pub(crate) fn is_notified(self) -> bool {
        self.0 & NOTIFIED == NOTIFIED
    }
    pub(crate) fn is_cancelled(self) -> bool {
        self.0 & CANCELLED == CANCELLED
    }
    pub(crate) fn is_idle(self) -> bool {
        self.0 & LIFECYCLE_MASK == 0
    }
    pub(crate) fn is_join_interested(self) -> bool {
        self.0 & JOIN_INTEREST == JOIN_INTEREST
    }
    pub(crate) fn is_join_waker_set(self) -> bool {
        self.0 & JOIN_WAKER == JOIN_WAKER
    }
    pub(crate) fn ref_count(self) -> usize {
        (self.0 & REF_MASK) >> REF_SHIFT
    }
    fn set(&mut self, bits: usize) {
        self.0 |= bits;
    }
    fn unset(&mut self, bits: usize) {
        self.0 &= !bits;
    }
    fn ref_inc(&mut self) {
        assert!(self.0 <= isize::MAX as usize, "task reference count overflow");
        self.0 += REF_ONE;
    }
    fn ref_dec(&mut self) {
        debug_assert!(self.ref_count() > 0, "task reference count underflow");
        self.0 -= REF_ONE;
    }
}

impl State {
    pub(crate) fn new() -> State {
        State { val: AtomicUsize::new(INITIAL_STATE) }
    }

    pub(crate) fn load(&self) -> Snapshot {
        Snapshot(self.val.load(Acquire))
    }

    /// Runs `f` on the current value until the CAS succeeds or `f` declines (`None`).
    /// AcqRel: a successful transition both publishes the caller's writes to the task (its
    /// stage, its join waker) and acquires those of the previous owner of `RUNNING`.
    fn fetch_update<T>(&self, mut f: impl FnMut(Snapshot) -> (T, Option<Snapshot>)) -> T {
        let mut curr = self.load();
        loop {
            let (out, next) = f(curr);
            let Some(next) = next else { return out };
            match self.val.compare_exchange_weak(curr.0, next.0, AcqRel, Acquire) {
                Ok(_) => return out,
                Err(actual) => curr = Snapshot(actual),
            }
        }
    }

    /// Consumes the caller's `Runnable` reference and tries to take `RUNNING`.
    pub(crate) fn transition_to_running(&self) -> TransitionToRunning {
        self.fetch_update(|mut s| {
            debug_assert!(s.is_notified(), "polling a task that was not notified");
            if !s.is_idle() {
                // Running elsewhere or complete: drop the reference the Runnable held.
                s.ref_dec();
                let out = if s.ref_count() == 0 { TransitionToRunning::Dealloc } else { TransitionToRunning::Failed };
                return (out, Some(s));
            }
            s.set(RUNNING);
            s.unset(NOTIFIED);
            let out = if s.is_cancelled() { TransitionToRunning::Cancelled } else { TransitionToRunning::Success };
            (out, Some(s))
        })
    }

    /// After a `Pending` poll: drop `RUNNING`; the poller's reference is released unless the
    /// task was woken meanwhile (then it is re-used for the new `Runnable`).
    pub(crate) fn transition_to_idle(&self) -> TransitionToIdle {
        self.fetch_update(|mut s| {
            debug_assert!(s.is_running());
            if s.is_cancelled() {
                return (TransitionToIdle::Cancelled, None);
            }
            s.unset(RUNNING);
            let out = if s.is_notified() {
                TransitionToIdle::OkNotified
            } else {
                s.ref_dec();
                if s.ref_count() == 0 {
                    TransitionToIdle::OkDealloc
                } else {
                    TransitionToIdle::Ok
                }
            };
            (out, Some(s))
        })
    }

    /// `RUNNING` → `COMPLETE`. Returns the previous snapshot (flags as they were).
    pub(crate) fn transition_to_complete(&self) -> Snapshot {
        const DELTA: usize = RUNNING | COMPLETE;
        // AcqRel: publishes the stored output to the JoinHandle (pairs with its Acquire load in
        // `can_read_output`) and acquires a join waker stored before JOIN_WAKER was set.
        let prev = Snapshot(self.val.fetch_xor(DELTA, AcqRel));
        debug_assert!(prev.is_running() && !prev.is_complete());
        prev
    }

    /// Fast completion for the common case (a `JoinHandle` waits, no join waker registered):
    /// `RUNNING → COMPLETE` and the poller's reference released in one CAS. Returns false
    /// (changing nothing) when the slow path is needed. The `JoinHandle` holds a reference,
    /// so this never releases the last one.
    pub(crate) fn try_complete_fast(&self) -> bool {
        self.fetch_update(|s| {
            debug_assert!(s.is_running() && !s.is_complete());
            if !s.is_join_interested() || s.is_join_waker_set() {
                return (false, None);
            }
            let mut next = s;
            next.unset(RUNNING);
            next.set(COMPLETE);
            next.ref_dec();
            debug_assert!(next.ref_count() > 0);
            (true, Some(next))
        })
    }

    /// Drops a `JoinHandle` that has read the output (so `COMPLETE` and `JOIN_INTEREST` are
    /// known to be set): clears `JOIN_INTEREST` and releases the handle's reference in one
    /// RMW. True when the caller must free the task. A join waker still registered (the
    /// completer may be waking it right now) is dropped by the completer, which sees
    /// `JOIN_INTEREST` gone, or by `dealloc`.
    pub(crate) fn drop_join_handle_after_output(&self) -> bool {
        // AcqRel: as `ref_dec`.
        let prev = Snapshot(self.val.fetch_sub(JOIN_INTEREST + REF_ONE, AcqRel));
        debug_assert!(prev.is_complete() && prev.is_join_interested());
        prev.ref_count() == 1
    }

    /// Releases `count` references after completion; true when the caller must free the task.
    pub(crate) fn transition_to_terminal(&self, count: usize) -> bool {
        let prev = Snapshot(self.val.fetch_sub(count * REF_ONE, AcqRel));
        assert!(prev.ref_count() >= count, "task reference count underflow");
        prev.ref_count() == count
    }

    /// A waker consuming its own reference (`wake`).
    pub(crate) fn transition_to_notified_by_val(&self) -> TransitionToNotifiedByVal {
        self.fetch_update(|mut s| {
            let out;
            if s.is_running() {
                // The poller will see NOTIFIED in transition_to_idle and re-submit.
                s.set(NOTIFIED);
                s.ref_dec();
                debug_assert!(s.ref_count() > 0, "a running task holds a reference");
                out = TransitionToNotifiedByVal::DoNothing;
            } else if s.is_complete() || s.is_notified() {
                s.ref_dec();
                out = if s.ref_count() == 0 {
                    TransitionToNotifiedByVal::Dealloc
                } else {
                    TransitionToNotifiedByVal::DoNothing
                };
            } else {
                // Idle: the waker's reference becomes the Runnable's.
                s.set(NOTIFIED);
                out = TransitionToNotifiedByVal::Submit;
            }
            (out, Some(s))
        })
    }

    /// A waker keeping its reference (`wake_by_ref`).
    pub(crate) fn transition_to_notified_by_ref(&self) -> TransitionToNotifiedByRef {
        self.fetch_update(|mut s| {
            if s.is_complete() || s.is_notified() {
                (TransitionToNotifiedByRef::DoNothing, None)
            } else if s.is_running() {
                s.set(NOTIFIED);
                (TransitionToNotifiedByRef::DoNothing, Some(s))
            } else {
                s.set(NOTIFIED);
                s.ref_inc();
                (TransitionToNotifiedByRef::Submit, Some(s))
            }
        })
    }

    /// Abort from a handle: sets `CANCELLED`; returns true when the caller took a new reference
    /// for a `Runnable` it must submit (so the scheduler polls, sees `CANCELLED`, and drops it).
    pub(crate) fn transition_to_notified_and_cancel(&self) -> bool {
        self.fetch_update(|mut s| {
            if s.is_cancelled() || s.is_complete() {
                (false, None)
            } else if s.is_running() || s.is_notified() {
                // The running poller, or the pending poll, will see CANCELLED.
                s.set(NOTIFIED | CANCELLED);
                (false, Some(s))
            } else {
                s.set(NOTIFIED | CANCELLED);
                s.ref_inc();
                (true, Some(s))
            }
        })
    }

    /// Shutdown: sets `CANCELLED`, and `RUNNING` if the task was idle. True when the caller
    /// obtained `RUNNING` and must cancel the future itself; otherwise whoever holds or will
    /// take `RUNNING` does it.
    pub(crate) fn transition_to_shutdown(&self) -> bool {
        self.fetch_update(|mut s| {
            let claimed = s.is_idle();
            if claimed {
                s.set(RUNNING);
            }
            s.set(CANCELLED);
            (claimed, Some(s))
        })
    }

    /// Fast path for dropping a `JoinHandle` of a task that is still in its initial state.
    pub(crate) fn drop_join_handle_fast(&self) -> Result<(), ()> {
        self.val
            .compare_exchange_weak(INITIAL_STATE, (INITIAL_STATE - REF_ONE) & !JOIN_INTEREST, Release, Relaxed)
            .map(|_| ())
            .map_err(|_| ())
    }

    /// Clears `JOIN_INTEREST` (and `JOIN_WAKER` if the task is not complete).
    /// Returns (previous snapshot's `is_complete`, whether the caller now owns the waker slot).
    pub(crate) fn transition_to_join_handle_dropped(&self) -> (bool, bool) {
        self.fetch_update(|mut s| {
            assert!(s.is_join_interested());
            let complete = s.is_complete();
            let mut owns_waker = false;
            s.unset(JOIN_INTEREST);
            if !complete {
                // Before completion the JoinHandle may reclaim its waker slot.
                owns_waker = true;
                s.unset(JOIN_WAKER);
            }
            ((complete, owns_waker), Some(s))
        })
    }

    /// The JoinHandle hands its (already written) waker slot to the task side.
    /// `Err` with the current snapshot if the task completed first.
    pub(crate) fn set_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.fetch_update(|mut s| {
            assert!(s.is_join_interested());
            assert!(!s.is_join_waker_set());
            if s.is_complete() {
                return (Err(s), None);
            }
            s.set(JOIN_WAKER);
            (Ok(s), Some(s))
        })
    }

    /// The JoinHandle takes its waker slot back (to replace the waker). `Err` if complete.
    ///
    /// Completion is checked before `JOIN_WAKER`: once `COMPLETE` is set the task side owns the
    /// slot and may already have woken and cleared it (`unset_waker_after_complete`), so a
    /// JoinHandle that raced completion must see `Err` and read the output, not trip the
    /// assertion (found by the loom model `join_handle_reads_output_racing_completion` with
    /// debug assertions on).
    pub(crate) fn unset_join_waker(&self) -> Result<Snapshot, Snapshot> {
        self.fetch_update(|mut s| {
            assert!(s.is_join_interested());
            if s.is_complete() {
                return (Err(s), None);
            }
            assert!(s.is_join_waker_set());
            s.unset(JOIN_WAKER);
            (Ok(s), Some(s))
        })
    }

    /// After completion and waking the join waker, the task side gives the slot back.
    /// Returns the new snapshot; if `JOIN_INTEREST` is gone the caller drops the waker.
    pub(crate) fn unset_waker_after_complete(&self) -> Snapshot {
        let prev = Snapshot(self.val.fetch_and(!JOIN_WAKER, AcqRel));
        debug_assert!(prev.is_complete() && prev.is_join_waker_set());
        let mut next = prev;
        next.unset(JOIN_WAKER);
        next
    }

    pub(crate) fn ref_inc(&self) {
        // Relaxed: a new reference is only ever made from an existing one, which already
        // orders everything the new holder may touch (same argument as `Arc::clone`).
        let prev = self.val.fetch_add(REF_ONE, Relaxed);
        assert!(prev <= isize::MAX as usize, "task reference count overflow");
    }

    /// Releases one reference; true when it was the last (caller frees the task).
    pub(crate) fn ref_dec(&self) -> bool {
        // AcqRel: the last holder must see every other holder's writes before freeing
        // (same argument as `Arc::drop`).
        let prev = Snapshot(self.val.fetch_sub(REF_ONE, AcqRel));
        assert!(prev.ref_count() >= 1, "task reference count underflow");
        prev.ref_count() == 1
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn initial_state() {
        let s = State::new().load();
        assert!(s.is_notified() && s.is_join_interested() && s.is_idle());
        assert!(!s.is_cancelled() && !s.is_join_waker_set());
        assert_eq!(s.ref_count(), 2);
    }

    #[test]
    fn run_idle_wake_cycle() {
        let st = State::new();
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        // Woken during the poll: the poller must re-submit.
        assert!(matches!(st.transition_to_notified_by_ref(), TransitionToNotifiedByRef::DoNothing));
        assert!(matches!(st.transition_to_idle(), TransitionToIdle::OkNotified));
        assert_eq!(st.load().ref_count(), 2);
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(matches!(st.transition_to_idle(), TransitionToIdle::Ok));
        assert_eq!(st.load().ref_count(), 1);
        // Idle wake by ref takes a reference for the Runnable.
        assert!(matches!(st.transition_to_notified_by_ref(), TransitionToNotifiedByRef::Submit));
        assert_eq!(st.load().ref_count(), 2);
    }

    #[test]
    fn cancel_while_idle_and_running() {
        let st = State::new();
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(!st.transition_to_notified_and_cancel());
        assert!(matches!(st.transition_to_idle(), TransitionToIdle::Cancelled));
        let st = State::new();
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(matches!(st.transition_to_idle(), TransitionToIdle::Ok));
        assert!(st.transition_to_notified_and_cancel());
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Cancelled));
    }

    #[test]
    fn shutdown_claims_only_idle_tasks() {
        let st = State::new();
        assert!(st.transition_to_shutdown(), "idle (queued) task is claimed");
        let st = State::new();
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(!st.transition_to_shutdown(), "running task is left to its poller");
        assert!(matches!(st.transition_to_idle(), TransitionToIdle::Cancelled));
    }

    #[test]
    fn join_waker_handshake() {
        let st = State::new();
        assert!(st.set_join_waker().is_ok());
        assert!(st.unset_join_waker().is_ok());
        assert!(st.set_join_waker().is_ok());
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        let prev = st.transition_to_complete();
        assert!(prev.is_join_waker_set());
        assert!(st.unset_join_waker().is_err(), "after completion the slot is the task's");
        let next = st.unset_waker_after_complete();
        assert!(next.is_join_interested() && !next.is_join_waker_set());
        assert_eq!(st.transition_to_join_handle_dropped(), (true, false));
    }

    #[test]
    fn fast_join_handle_drop_only_in_initial_state() {
        let st = State::new();
        assert!(st.drop_join_handle_fast().is_ok());
        assert!(!st.load().is_join_interested());
        assert_eq!(st.load().ref_count(), 1);
        let st = State::new();
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(st.drop_join_handle_fast().is_err());
    }

    #[test]
    fn fast_completion_only_without_join_waker() {
        let st = State::new();
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(st.try_complete_fast());
        let s = st.load();
        assert!(s.is_complete() && !s.is_running() && s.is_join_interested());
        assert_eq!(s.ref_count(), 1);
        assert!(st.drop_join_handle_after_output(), "the handle held the last reference");

        let st = State::new();
        assert!(st.set_join_waker().is_ok());
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(!st.try_complete_fast(), "a registered join waker needs the slow path");
        assert!(st.load().is_running());

        let st = State::new();
        assert!(st.drop_join_handle_fast().is_ok());
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        assert!(!st.try_complete_fast(), "without a JoinHandle the output must be dropped first");
    }

    #[test]
    fn last_reference_reports_dealloc() {
        let st = State::new();
        st.ref_inc();
        assert!(!st.ref_dec());
        assert!(!st.ref_dec());
        assert!(matches!(st.transition_to_running(), TransitionToRunning::Success));
        let _ = st.transition_to_complete();
        assert!(st.transition_to_terminal(1));
    }
}
