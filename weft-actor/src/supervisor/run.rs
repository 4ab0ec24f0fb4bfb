//! The supervisor task: start the children in order, then react to one signal at a time —
//! a child's exit (restart per strategy, counting intensity), a command from a
//! `SupervisorRef`, or `Stop` (stop all children in reverse start order, then itself).
//!
//! Every wait for a child to stop is a wait on the child's `JoinHandle`: the task completes
//! only after its `Incarnation` guard has dropped the state and reported the exit, so "the
//! old incarnation has fully stopped" is exactly "its join handle is ready". A child that
//! stops by itself has already dropped its state when its `Exit` signal arrives.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use weft::sync::oneshot;
use weft::task::JoinHandle;

use super::spec::{ChildSpec, Restart, Shutdown, Started, Strategy, SupervisorEvent, SupervisorSpec};
use super::{ChildInfo, SupervisorError, SupervisorRef};
use crate::cell::{Cell, CellRef, Signal};
use crate::exit::{ActorId, ExitReason, IdMap};

/// A request from a `SupervisorRef`, carried in `Signal::Command`.
pub(crate) enum Command {
    WhichChildren(oneshot::Sender<Vec<ChildInfo>>),
    Child(String, oneshot::Sender<Option<Arc<dyn Any + Send + Sync>>>),
    Children(oneshot::Sender<Vec<(String, Arc<dyn Any + Send + Sync>)>>),
    StartChild(ChildSpec, oneshot::Sender<Result<(), SupervisorError>>),
    TerminateChild(String, oneshot::Sender<bool>),
}

struct Running {
    cell: CellRef,
    join: JoinHandle<()>,
    handle: Arc<dyn Any + Send + Sync>,
}

struct Child {
    spec: ChildSpec,
    running: Option<Running>,
    restarts: u64,
    /// Consecutive restarts for the backoff exponent; reset after a quiet `period`.
    attempt: u32,
    last_restart: Option<Instant>,
    /// A child that will not run again (temporary, or a dynamic child that stopped); its slot
    /// is reclaimed by `compact`. Removing from the middle of `children` at once would move
    /// the whole tail: 10,000 temporary children exiting in start order cost O(n²) moves.
    removed: bool,
}

struct Supervisor {
    spec: SupervisorSpec,
    cell: CellRef,
    children: Vec<Child>,
    /// How many `children` are `removed`.
    tombstones: usize,
    /// Running incarnation → its child's index in `children`: finds the child an `Exit` is
    /// about in O(1). Indices move only in `compact`, which rebuilds the map. (Before: a key
    /// per child, a SipHash map to it and a binary search over `children`, which with 10,000
    /// children missed the cache at every step.)
    by_actor: IdMap<usize>,
    /// Times of the restarts within the last `period` (restart intensity).
    restarts: VecDeque<Instant>,
    rng: u64,
    reason: Option<ExitReason>,
}

impl Drop for Supervisor {
    /// Reached with `reason == None` only when the supervisor's task is aborted or dropped by
    /// runtime shutdown: then its children are aborted too (they cannot outlive it).
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            if let Some(r) = c.running.take() {
                r.cell.mark_killed();
                r.join.abort();
            }
        }
        match self.reason.take() {
            Some(r) => self.cell.exit(r),
            None => self.cell.exit_dropped(),
        }
    }
}

impl SupervisorSpec {
    /// Starts the supervisor and its children (each child's `started` hook completes before
    /// the next child starts); returns once all have started.
    pub async fn start(self) -> SupervisorRef {
        let (tx, rx) = oneshot::channel();
        let (sup, _join) = spawn_supervisor(self, None, Some(tx));
        let _ = rx.await;
        sup
    }
}

pub(crate) fn spawn_supervisor(
    spec: SupervisorSpec,
    parent: Option<CellRef>,
    ready: Option<oneshot::Sender<()>>,
) -> (SupervisorRef, JoinHandle<()>) {
    let cell = Cell::new(parent);
    let seed = cell.id().as_u64()
        ^ std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
        ^ 0x9E37_79B9_7F4A_7C15;
    let sup = Supervisor {
        spec,
        cell: cell.clone(),
        children: Vec::new(),
        tombstones: 0,
        by_actor: IdMap::default(),
        restarts: VecDeque::new(),
        rng: seed | 1,
        reason: None,
    };
    let join = weft::spawn(run(sup, ready));
    cell.set_abort(join.abort_handle());
    (SupervisorRef { cell }, join)
}

async fn run(mut sup: Supervisor, ready: Option<oneshot::Sender<()>>) {
    let specs = std::mem::take(&mut sup.spec.children);
    for spec in specs {
        let i = sup.push(spec);
        sup.start(i).await;
    }
    if let Some(tx) = ready {
        let _ = tx.send(());
    }
    let reason = sup.serve().await;
    sup.reason = Some(reason);
}

impl Supervisor {
    fn emit(&self, event: SupervisorEvent<'_>) {
        if let Some(f) = &self.spec.on_event {
            f(&event);
        }
    }

    fn index_of(&self, id: ActorId) -> Option<usize> {
        self.by_actor.get(&id).copied()
    }

    /// Appends a child (not started); returns its index.
    fn push(&mut self, spec: ChildSpec) -> usize {
        self.children.push(Child { spec, running: None, restarts: 0, attempt: 0, last_restart: None, removed: false });
        self.children.len() - 1
    }

    /// Marks child `i` as gone for good; its slot is reclaimed later by `compact`.
    fn remove(&mut self, i: usize) {
        if !self.children[i].removed {
            self.children[i].removed = true;
            self.tombstones += 1;
        }
    }

    /// Drops the slots of removed children once they are at least half of all slots
    /// (amortised O(1) per removal). Call only where no child index is held.
    fn compact(&mut self) {
        if self.tombstones * 2 >= self.children.len() && self.tombstones > 0 {
            self.children.retain(|c| !c.removed);
            self.tombstones = 0;
            for (i, c) in self.children.iter().enumerate() {
                if let Some(r) = &c.running {
                    self.by_actor.insert(r.cell.id(), i);
                }
            }
        }
    }

    /// The children that are still part of the supervisor, in start order.
    fn live(&self) -> impl Iterator<Item = &Child> {
        self.children.iter().filter(|c| !c.removed)
    }

    fn take_running(&mut self, i: usize) -> Option<Running> {
        let r = self.children[i].running.take()?;
        self.by_actor.remove(&r.cell.id());
        Some(r)
    }

    async fn serve(&mut self) -> ExitReason {
        loop {
            // One unit of the task's cooperative budget per signal: a storm of exits (10,000
            // children panicking at once) is otherwise handled in one poll and holds a worker
            // for tens of milliseconds (the runtime's blocking detector reported 30–57 ms in
            // `weft-lab actors --filter panic`); with the budget it yields every 128 signals.
            weft::task::consume_budget().await;
            match self.cell.recv_signal().await {
                Signal::Stop => {
                    self.stop_all().await;
                    return ExitReason::Shutdown;
                }
                Signal::Exit(e) => {
                    // An exit from an incarnation we no longer run (one we stopped) is stale.
                    if let Some(i) = self.index_of(e.id) {
                        if !self.child_exited(i, e.reason).await {
                            return ExitReason::Shutdown;
                        }
                        self.compact();
                    }
                }
                Signal::Dropped(e) => {
                    // The runtime dropped the child's task while shutting down: nothing to
                    // restart into (OTP restarts nothing while going down), and the siblings
                    // are being dropped too. Record the exit, restart nothing.
                    if let Some(i) = self.index_of(e.id) {
                        self.take_running(i);
                        self.emit(SupervisorEvent::ChildExited { child: &self.children[i].spec.id, reason: &e.reason });
                    }
                }
                Signal::Down(_) => {}
                Signal::Command(c) => {
                    if let Ok(c) = c.downcast::<Command>() {
                        self.command(*c).await;
                    }
                }
            }
        }
    }

    /// Starts child `i` and waits until its `started` hook has returned.
    async fn start(&mut self, i: usize) {
        // Starting runs the child's `started` here (see `spawn_supervised`): a budget unit per
        // start, so starting or restarting thousands of children yields like `serve` does.
        weft::task::consume_budget().await;
        let Started { cell, join, handle, ready } = (self.children[i].spec.start)(self.cell.clone()).await;
        self.by_actor.insert(cell.id(), i);
        self.children[i].running = Some(Running { cell, join, handle });
        if let Some(ready) = ready {
            let _ = ready.await;
        }
    }

    /// Stops child `i` per its `Shutdown` and waits until it has fully stopped.
    async fn stop(&mut self, i: usize) {
        let Some(Running { cell, mut join, .. }) = self.take_running(i) else { return };
        match self.children[i].spec.shutdown {
            Shutdown::BrutalKill => {
                cell.mark_killed();
                join.abort();
            }
            Shutdown::Timeout(d) => {
                cell.signal(Signal::Stop);
                if weft::time::timeout(d, &mut join).await.is_ok() {
                    return;
                }
                cell.mark_killed();
                join.abort();
            }
            Shutdown::Infinity => {
                cell.signal(Signal::Stop);
            }
        }
        let _ = join.await;
    }

    async fn stop_all(&mut self) {
        for i in (0..self.children.len()).rev() {
            self.stop(i).await;
        }
    }

    fn next_random(&mut self) -> f64 {
        // xorshift64: enough for jitter, no dependency.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Restarts child `i`; `now` is the time its exit was counted against the intensity.
    async fn restart(&mut self, i: usize, now: Instant) {
        let period = self.spec.period;
        let c = &mut self.children[i];
        if c.last_restart.is_some_and(|t| now.duration_since(t) > period) {
            c.attempt = 0;
        }
        let attempt = c.attempt;
        c.attempt = c.attempt.saturating_add(1);
        c.last_restart = Some(now);
        c.restarts += 1;
        if let Some(b) = self.spec.backoff {
            let r = self.next_random();
            weft::time::sleep(b.delay(attempt, r)).await;
        }
        self.start(i).await;
        let c = &self.children[i];
        self.emit(SupervisorEvent::ChildRestarted { child: &c.spec.id, restarts: c.restarts });
    }

    /// Handles child `i`'s own exit. Returns `false` when restart intensity was exceeded and
    /// the supervisor has stopped all its children and must stop itself.
    async fn child_exited(&mut self, i: usize, reason: ExitReason) -> bool {
        self.take_running(i);
        self.emit(SupervisorEvent::ChildExited { child: &self.children[i].spec.id, reason: &reason });
        let restart = match self.children[i].spec.restart {
            Restart::Permanent => true,
            Restart::Transient => !reason.is_normal(),
            Restart::Temporary => false,
        };
        drop(reason);
        if !restart {
            if self.children[i].spec.restart == Restart::Temporary || self.spec.strategy == Strategy::Dynamic {
                self.remove(i);
            }
            return true;
        }
        let now = Instant::now();
        self.restarts.push_back(now);
        while self.restarts.front().is_some_and(|t| now.duration_since(*t) > self.spec.period) {
            self.restarts.pop_front();
        }
        if self.restarts.len() > self.spec.max_restarts as usize {
            self.emit(SupervisorEvent::IntensityExceeded);
            self.stop_all().await;
            return false;
        }
        if matches!(self.spec.strategy, Strategy::OneForOne | Strategy::Dynamic) {
            // Only the failed child is restarted (it is not `Temporary`: that returned above),
            // so no group is gathered: the two `Vec`s below cost an allocation each per exit.
            self.restart(i, now).await;
            return true;
        }
        let n = self.children.len();
        // One-for-all restarts every child, rest-for-one the failed one and those after it.
        let first = if self.spec.strategy == Strategy::OneForAll { 0 } else { i };
        let group: Vec<usize> = (first..n).filter(|&j| !self.children[j].removed).collect();
        // Only the failed child and the siblings this restart stops are started again.
        let restart: Vec<usize> =
            group.iter().copied().filter(|&j| j == i || self.children[j].running.is_some()).collect();
        for &j in group.iter().rev() {
            if j != i {
                self.stop(j).await;
            }
        }
        for &j in &restart {
            if self.children[j].spec.restart != Restart::Temporary {
                // Timed after the siblings' stops, which may take their shutdown timeouts.
                self.restart(j, Instant::now()).await;
            }
        }
        // Temporary siblings stopped by the restart are not started again: remove them.
        for &j in &restart {
            if self.children[j].spec.restart == Restart::Temporary && self.children[j].running.is_none() {
                self.remove(j);
            }
        }
        true
    }

    async fn command(&mut self, c: Command) {
        match c {
            Command::WhichChildren(tx) => {
                let info = self
                    .live()
                    .map(|c| ChildInfo {
                        id: c.spec.id.to_string(),
                        actor: c.running.as_ref().map(|r| r.cell.id()),
                        restarts: c.restarts,
                    })
                    .collect();
                let _ = tx.send(info);
            }
            Command::Child(id, tx) => {
                let h =
                    self.live().find(|c| c.spec.id == id).and_then(|c| c.running.as_ref()).map(|r| r.handle.clone());
                let _ = tx.send(h);
            }
            Command::Children(tx) => {
                let all = self
                    .live()
                    .filter_map(|c| c.running.as_ref().map(|r| (c.spec.id.to_string(), r.handle.clone())))
                    .collect();
                let _ = tx.send(all);
            }
            Command::StartChild(spec, tx) => {
                if self.live().any(|c| c.spec.id == spec.id) {
                    let _ = tx.send(Err(SupervisorError::AlreadyPresent(spec.id.into_owned())));
                    return;
                }
                let i = self.push(spec);
                self.start(i).await;
                let _ = tx.send(Ok(()));
            }
            Command::TerminateChild(id, tx) => {
                let found = self.children.iter().position(|c| !c.removed && c.spec.id == id);
                if let Some(i) = found {
                    self.stop(i).await;
                    self.remove(i);
                    self.compact();
                }
                let _ = tx.send(found.is_some());
            }
        }
    }
}
