//! `Cell`: the part of an actor that outlives its task and is shared by everyone who refers
//! to it — its id, its signal queue, and who is watching it (links, monitors, its parent).
//!
//! Signals (stop, exits, downs, supervisor commands) travel beside the mailbox, not through
//! it, so a full bounded mailbox never holds back a `Stop` and a signal never takes a slot of
//! mailbox capacity. The queue is a `VecDeque` under a mutex plus a `has_signal` flag that
//! the actor checks without locking before each message; the lock is taken only when a
//! signal is pending. A parked actor is woken for a signal through its task's handle
//! (`AbortHandle::wake`), so parking registers nothing here. The queue, links, monitors and
//! names are boxed on first use: most actors never have any, and the cell is in every actor.

use std::any::Any;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::task::Poll;

use weft::arena::ArenaArc;
use weft::sync::oneshot;
use weft::task::AbortHandle;

use crate::exit::{ActorId, Down, Exit, ExitReason};

/// Something delivered to an actor beside its mailbox.
pub(crate) enum Signal {
    /// Stop after the current message, with reason `Shutdown`.
    Stop,
    /// A linked actor stopped.
    Exit(Exit),
    /// A monitored actor stopped.
    Down(Down),
    /// A command for a supervisor (ignored by plain actors).
    Command(Box<dyn Any + Send>),
    /// To a parent only: the child's task was dropped without weft-actor aborting it, i.e. by
    /// its runtime's shutdown (reason `Killed`). A supervisor does not restart such a child:
    /// OTP never restarts a child while the system is going down.
    Dropped(Exit),
}

/// Who is told when the actor stops.
enum Watcher {
    /// Two-way link: the other side gets `Signal::Exit`.
    Link(CellRef),
    /// The other side monitors this actor and gets `Signal::Down`.
    Monitor(CellRef),
    /// The supervisor: gets `Signal::Exit` with the original panic payload.
    Parent(CellRef),
    /// `ActorRef::wait_stopped`.
    Waiter(oneshot::Sender<ExitReason>),
}

struct Inner {
    /// Set once, when the actor has stopped and its state has been dropped.
    exited: Option<ExitReason>,
    /// The supervisor, told first and given the original exit reason (`Watcher::Parent`).
    parent: Option<CellRef>,
    /// The actor's task: how `kill` aborts it, and how `signal` wakes it (`AbortHandle::wake`,
    /// so no `Waker` is registered or kept: a registration would take the lock at every
    /// actor's first park, a cost in every actor's life in `skynet_doc_1t`, and 16 bytes of
    /// the cell).
    /// Set right after the spawn; `set_abort` wakes the task if a signal came before it.
    abort: Option<AbortHandle>,
    /// Signals, links, monitors, waiters and names: boxed on first use, because most actors
    /// have none of them all their life and every byte of a cell is paid per actor (inline,
    /// they made a cell 64 bytes larger; `a_cell_is_small`).
    extra: Option<Box<Extra>>,
}

#[derive(Default)]
struct Extra {
    signals: VecDeque<Signal>,
    watchers: Vec<Watcher>,
    names: Vec<String>,
}

impl Inner {
    fn extra(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    fn has_signals(&self) -> bool {
        self.extra.as_ref().is_some_and(|e| !e.signals.is_empty())
    }

    /// Removes the link to `id` from the watchers.
    fn unlink(&mut self, id: ActorId) {
        if let Some(e) = &mut self.extra {
            e.watchers.retain(|w| !matches!(w, Watcher::Link(c) if c.id == id));
        }
    }
}

/// A shared reference to a cell. In the runtime's task arena when the actor is made on a
/// runtime (`weft::arena::ArenaArc`): with many actors alive, glibc serves each 96-byte
/// cell from its slow paths, a visible share of an actor's spawn (`weft-lab actors --filter
/// =spawn`; docs/notes/performance-figures.md, "Task arena").
pub(crate) type CellRef = ArenaArc<Cell>;

pub(crate) struct Cell {
    id: ActorId,
    /// A hint that `signals` is non-empty. Set (Release) after pushing under the lock, cleared
    /// under the lock when the queue drains; the unlocked read (Acquire) in `poll_next` only
    /// decides whether to take the lock, so a stale `false` costs one message of delay at most
    /// and a stale `true` one lock.
    has_signal: AtomicBool,
    /// Set before weft-actor itself aborts the task (`kill`, a brutal or timed-out shutdown,
    /// a supervisor's drop). A task that ends without a reason and without this flag was
    /// dropped by its runtime's shutdown (`exit_dropped`).
    killed: AtomicBool,
    inner: Mutex<Inner>,
}

impl Cell {
    pub(crate) fn new(parent: Option<CellRef>) -> CellRef {
        CellRef::new(Cell {
            id: ActorId::next(),
            has_signal: AtomicBool::new(false),
            killed: AtomicBool::new(false),
            inner: Mutex::new(Inner { exited: None, parent, abort: None, extra: None }),
        })
    }

    pub(crate) fn id(&self) -> ActorId {
        self.id
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic never happens while this lock is held (no user code runs under it), but be
        // robust anyway: the data stays consistent at every unlock.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the actor's task. A signal queued before this found nobody to wake (the task
    /// may have parked meanwhile, on another worker), so it is woken here.
    pub(crate) fn set_abort(&self, abort: AbortHandle) {
        let wake = {
            let mut g = self.lock();
            let wake = g.has_signals().then(|| abort.clone());
            g.abort = Some(abort);
            wake
        };
        if let Some(a) = wake {
            a.wake();
        }
    }

    /// Records that weft-actor is about to abort this actor's task (see `killed`). Relaxed:
    /// the abort that follows and the task's drop are ordered by weft's task state machine.
    pub(crate) fn mark_killed(&self) {
        self.killed.store(true, Ordering::Relaxed);
    }

    /// Aborts the actor's task (its state is dropped, reason `Killed`).
    pub(crate) fn kill(&self) {
        self.mark_killed();
        let abort = self.lock().abort.clone();
        if let Some(a) = abort {
            a.abort();
        }
    }

    pub(crate) fn is_alive(&self) -> bool {
        self.lock().exited.is_none()
    }

    /// Queues a signal and wakes the actor. Returns `false` (dropping the signal) when the
    /// actor has already stopped.
    pub(crate) fn signal(&self, signal: Signal) -> bool {
        let abort = {
            let mut g = self.lock();
            if g.exited.is_some() {
                return false;
            }
            g.extra().signals.push_back(signal);
            self.has_signal.store(true, Ordering::Release);
            // Cloned (a task reference), and woken once the lock is released, as every wake
            // in weft is. Without the handle yet, `set_abort` wakes instead.
            g.abort.clone()
        };
        if let Some(a) = abort {
            a.wake();
        }
        true
    }

    fn pop_locked(&self, g: &mut Inner) -> Option<Signal> {
        let s = g.extra.as_mut().and_then(|e| e.signals.pop_front());
        if !g.has_signals() {
            self.has_signal.store(false, Ordering::Relaxed);
        }
        s
    }

    /// Takes a pending signal without registering for a wake-up.
    ///
    /// The flag check inline, the rest out of line: the actor loop calls this before every
    /// message (out of line as a whole, it costs every call with no signal, `ping_pong`).
    #[inline]
    pub(crate) fn try_signal(&self) -> Option<Signal> {
        if !self.has_signal.load(Ordering::Acquire) {
            return None;
        }
        self.take_signal()
    }

    #[inline(never)]
    fn take_signal(&self) -> Option<Signal> {
        let mut g = self.lock();
        self.pop_locked(&mut g)
    }

    /// The next signal; with none pending, `signal` wakes the task when one comes (through its
    /// handle, see `Inner::abort`), so nothing is registered.
    pub(crate) async fn recv_signal(&self) -> Signal {
        poll_fn(|_| self.try_signal().map_or(Poll::Pending, Poll::Ready)).await
    }

    /// Adds `watcher` to `target`'s watchers; if `target` has already stopped, delivers the
    /// notice now instead (monitors and links of a dead actor fire at once, as in Erlang).
    fn watch(target: &Cell, watcher: Watcher) {
        let dead = {
            let mut g = target.lock();
            match &g.exited {
                None => {
                    g.extra().watchers.push(watcher);
                    return;
                }
                Some(r) => (r.duplicate(), watcher),
            }
        };
        notify(target.id, dead.1, dead.0);
    }

    /// `me` monitors `target`.
    pub(crate) fn monitor(me: &CellRef, target: &CellRef) {
        Cell::watch(target, Watcher::Monitor(me.clone()));
    }

    /// Two-way link between `a` and `b`.
    pub(crate) fn link(a: &CellRef, b: &CellRef) {
        if a.id == b.id {
            return;
        }
        Cell::watch(b, Watcher::Link(a.clone()));
        Cell::watch(a, Watcher::Link(b.clone()));
    }

    /// Removes the link between `a` and `b` (both directions) and monitors of `a` by `b`'s id.
    pub(crate) fn unlink(a: &CellRef, b: &CellRef) {
        a.lock().unlink(b.id);
        b.lock().unlink(a.id);
    }

    /// A future resolving to a copy of the exit reason (the original when no parent claims it).
    pub(crate) fn wait_stopped(&self) -> oneshot::Receiver<ExitReason> {
        let (tx, rx) = oneshot::channel();
        Cell::watch(self, Watcher::Waiter(tx));
        rx
    }

    pub(crate) fn add_name(&self, name: String) -> bool {
        let mut g = self.lock();
        if g.exited.is_some() {
            return false;
        }
        g.extra().names.push(name);
        true
    }

    /// `exit` for a task that ended without a reason of its own: `Killed`, and when nobody in
    /// weft-actor aborted it (its runtime dropped it while shutting down) the parent is told
    /// with `Signal::Dropped`, so it does not restart the child.
    pub(crate) fn exit_dropped(&self) {
        let by_runtime = !self.killed.load(Ordering::Relaxed);
        self.exit_inner(ExitReason::Killed, by_runtime);
    }

    /// Records that the actor has stopped and tells every watcher. Called exactly once, after
    /// the actor's state has been dropped (by `run::Incarnation::drop` or the supervisor's).
    pub(crate) fn exit(&self, reason: ExitReason) {
        self.exit_inner(reason, false);
    }

    fn exit_inner(&self, reason: ExitReason, by_runtime: bool) {
        let (parent, extra) = {
            let mut g = self.lock();
            debug_assert!(g.exited.is_none(), "an actor exits once");
            g.exited = Some(reason.duplicate());
            g.abort = None;
            self.has_signal.store(false, Ordering::Relaxed);
            (g.parent.take(), g.extra.take())
        };
        // Most actors exit with no pending signal, no name and no watcher but their parent:
        // nothing else to take or drop (dropping empty collections out of line costs every
        // exit, `spawn`).
        let watchers = match extra {
            Some(e) => {
                let Extra { signals, watchers, names } = *e;
                // Undelivered signals (e.g. supervisor commands carrying reply senders) are
                // dropped outside the lock: their destructors may wake other tasks.
                drop(signals);
                crate::names::remove_names(self.id, names);
                watchers
            }
            None => Vec::new(),
        };
        let count = usize::from(parent.is_some()) + watchers.len();
        if count == 0 {
            return;
        }
        // The original payload goes to the parent if there is one, else to the first waiter.
        // Copies for the other watchers are made only when there are other watchers (a
        // panic's copy allocates its message).
        let spare = (count > 1).then(|| reason.duplicate());
        let mut original = match parent {
            Some(p) if by_runtime => {
                p.signal(Signal::Dropped(Exit { id: self.id, reason }));
                None
            }
            Some(p) => {
                notify(self.id, Watcher::Parent(p), reason);
                None
            }
            None => Some(reason),
        };
        let owner =
            if original.is_some() { watchers.iter().position(|w| matches!(w, Watcher::Waiter(_))) } else { None };
        for (i, w) in watchers.into_iter().enumerate() {
            let r = match (original.take_if(|_| Some(i) == owner), &spare) {
                (Some(r), _) => r,
                (None, Some(s)) => s.duplicate(),
                (None, None) => original.as_ref().map_or(ExitReason::Killed, ExitReason::duplicate),
            };
            if let Watcher::Link(other) = &w {
                other.lock().unlink(self.id);
            }
            notify(self.id, w, r);
        }
    }
}

fn notify(id: ActorId, watcher: Watcher, reason: ExitReason) {
    match watcher {
        Watcher::Link(c) | Watcher::Parent(c) => {
            c.signal(Signal::Exit(Exit { id, reason }));
        }
        Watcher::Monitor(c) => {
            c.signal(Signal::Down(Down { id, reason }));
        }
        Watcher::Waiter(tx) => {
            let _ = tx.send(reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell is in every actor: 152 bytes with its signal queue, watchers and names inline,
    /// 88 with them boxed on first use (`Inner::extra`), 72 without a registered waker.
    #[test]
    fn a_cell_is_small() {
        let size = std::mem::size_of::<Cell>();
        eprintln!("cell: {size} bytes");
        assert!(size <= 72, "the actor cell grew to {size} bytes");
    }
}
