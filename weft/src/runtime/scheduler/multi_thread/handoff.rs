//! Runtime threads and the core hand-off behind `block_in_place`.
//!
//! A worker thread that calls `block_in_place` parks its core (local queue, LIFO slot,
//! parker) in that worker's hand-off slot and asks for a thread to run it: an idle *spare*
//! thread if one waits, else a new one. The blocking closure then runs on the original
//! thread, which afterwards takes the core back if nobody picked it up yet (a short closure
//! costs two uncontended lock operations and no thread wake), or else finishes its task's poll
//! without a core and becomes a spare itself. So the number of threads running cores is
//! always the number of workers, and the number of runtime threads is that plus the threads
//! inside `block_in_place`, reused rather than spawned once the process has warmed up.
//!
//! Every runtime thread (original workers, spares, the monitor and compensating threads) is
//! started by `ThreadSpawn` (the monitor, which runs no user code, without the user's name and
//! start/stop hooks), which counts it in the runtime's `AliveCount` and keeps
//! its `JoinHandle`, so `Runtime::drop` waits for, and joins, every one of them. Spares wait
//! `keep_alive` (the blocking pool's) for a core and then exit.
//!
//! Invariant: a core is in exactly one place — a thread's worker context, its worker's
//! hand-off slot, or the local variables of the thread moving it between the two (under the
//! slot's lock). `reclaim` and a spare both `take()` the slot under its lock, so exactly one
//! of them gets a parked core.

use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use super::{Core, Handle};
use crate::loom::lock;
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::loom::thread::JoinHandle;
use crate::runtime::builder::Callback;
use crate::runtime::AliveCount;

pub(crate) type NameFn = std::sync::Arc<dyn Fn() -> String + Send + Sync>;

/// How the runtime starts its threads (the builder's name, stack size and hooks), and the
/// count `Runtime::drop` waits on.
pub(crate) struct ThreadSpawn {
    pub(crate) name: NameFn,
    pub(crate) stack_size: Option<usize>,
    pub(crate) on_start: Option<Callback>,
    pub(crate) on_stop: Option<Callback>,
    pub(crate) alive: AliveCount,
    /// Handles of every thread started after `build` (spares, monitor, compensation).
    pub(crate) threads: Mutex<Vec<JoinHandle<()>>>,
}

// The user's name function and hooks are only ever called, never inspected, so a panic
// caught across a `&Handle` cannot observe them half-updated (the same reasoning as
// `runtime::ThreadHook`); the rest is facade types, already unwind-safe.
impl std::panic::RefUnwindSafe for ThreadSpawn {}
impl std::panic::UnwindSafe for ThreadSpawn {}

impl ThreadSpawn {
    /// Starts a runtime thread running `f` between the start and stop hooks, counted alive
    /// until it exits (even by panic).
    pub(crate) fn spawn(&self, f: impl FnOnce() + Send + 'static) -> io::Result<JoinHandle<()>> {
        self.spawn_with(f, true)
    }

    /// `hooks == false`: a thread that never runs user code (the monitor) gets its own name
    /// and no start/stop hooks, which users count as "threads that run tasks".
    fn spawn_with(&self, f: impl FnOnce() + Send + 'static, hooks: bool) -> io::Result<JoinHandle<()>> {
        let name = if hooks { (self.name)() } else { "weft-monitor".to_string() };
        let mut b = crate::loom::thread::Builder::new().name(name);
        if let Some(size) = self.stack_size {
            b = b.stack_size(size);
        }
        *lock(&self.alive.0) += 1;
        let exit = ThreadExit(self.alive.clone());
        let (start, stop) = if hooks { (self.on_start.clone(), self.on_stop.clone()) } else { (None, None) };
        b.spawn(move || {
            let _exit = exit;
            if let Some(f) = start {
                f();
            }
            f();
            if let Some(f) = stop {
                f();
            }
        })
    }

    /// Starts a thread and keeps its handle for `Runtime::drop` to join.
    pub(crate) fn spawn_tracked(&self, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
        self.spawn_tracked_with(f, true)
    }

    /// The monitor thread: tracked, without the user's hooks or thread name.
    pub(crate) fn spawn_monitor(&self, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
        self.spawn_tracked_with(f, false)
    }

    fn spawn_tracked_with(&self, f: impl FnOnce() + Send + 'static, hooks: bool) -> io::Result<()> {
        let handle = self.spawn_with(f, hooks)?;
        let mut threads = lock(&self.threads);
        // Join the ones that already finished, so the list stays short (loom's handles cannot
        // tell; models start few threads).
        #[cfg(not(loom))]
        {
            let mut i = 0;
            while i < threads.len() {
                if threads[i].is_finished() {
                    let _ = threads.swap_remove(i).join();
                } else {
                    i += 1;
                }
            }
        }
        threads.push(handle);
        Ok(())
    }

    /// Joins every tracked thread (after all of them were counted out).
    pub(crate) fn join_all(&self) {
        let threads = std::mem::take(&mut *lock(&self.threads));
        for t in threads {
            let _ = t.join();
        }
    }
}

/// Counts a runtime thread out when it exits (even by panic), waking a waiting `Runtime` drop.
pub(crate) struct ThreadExit(pub(crate) AliveCount);

impl Drop for ThreadExit {
    fn drop(&mut self) {
        let (lock_, cvar) = &*self.0;
        *lock(lock_) -= 1;
        cvar.notify_all();
    }
}

/// The hand-off slots (one per worker) and the spare threads waiting to run a parked core.
pub(crate) struct Spares {
    slots: Box<[Mutex<Option<Box<Core>>>]>,
    state: Mutex<SpareState>,
    cond: Condvar,
    keep_alive: Duration,
}

struct SpareState {
    /// Workers whose core was parked in its slot and not yet claimed by a spare.
    pending: VecDeque<usize>,
    idle: usize,
    shutdown: bool,
}

impl Spares {
    pub(crate) fn new(num_workers: usize, keep_alive: Duration) -> Spares {
        Spares {
            slots: (0..num_workers).map(|_| Mutex::new(None)).collect(),
            state: Mutex::new(SpareState { pending: VecDeque::new(), idle: 0, shutdown: false }),
            cond: Condvar::new(),
            keep_alive,
        }
    }

    /// Parks `core` in worker `index`'s slot and gets a thread to run it. On failure to start
    /// a thread the core is given back (the caller keeps running it).
    pub(crate) fn hand_off(&self, handle: &Arc<Handle>, index: usize, core: Box<Core>) -> Result<(), Box<Core>> {
        *lock(&self.slots[index]) = Some(core);
        let mut st = lock(&self.state);
        st.pending.push_back(index);
        if st.idle > 0 {
            drop(st);
            self.cond.notify_one();
            return Ok(());
        }
        drop(st);
        let h = handle.clone();
        match handle.threads.spawn_tracked(move || Spares::spare_loop(&h)) {
            Ok(()) => Ok(()),
            Err(_) => {
                let mut st = lock(&self.state);
                st.pending.retain(|&i| i != index);
                drop(st);
                Err(self.reclaim(index).expect("a parked core vanished while no thread could run it"))
            }
        }
    }

    /// Takes worker `index`'s core back if no spare has claimed it yet.
    pub(crate) fn reclaim(&self, index: usize) -> Option<Box<Core>> {
        lock(&self.slots[index]).take()
    }

    /// Wakes idle spares so that they exit (runtime shutdown).
    pub(crate) fn shutdown(&self) {
        lock(&self.state).shutdown = true;
        self.cond.notify_all();
    }

    /// A thread without a core: waits for a parked core and runs its worker loop, until the
    /// runtime shuts down or no core comes within `keep_alive`.
    pub(crate) fn spare_loop(handle: &Arc<Handle>) {
        let spares = &handle.spares;
        loop {
            let index = {
                let mut st = lock(&spares.state);
                loop {
                    if let Some(i) = st.pending.pop_front() {
                        break i;
                    }
                    if st.shutdown {
                        return;
                    }
                    st.idle += 1;
                    let (guard, timeout) =
                        spares.cond.wait_timeout(st, spares.keep_alive).unwrap_or_else(|p| p.into_inner());
                    st = guard;
                    st.idle -= 1;
                    if timeout.timed_out() && st.pending.is_empty() {
                        return;
                    }
                }
            };
            // `None`: the worker took its core back before we got here.
            let Some(core) = spares.reclaim(index) else { continue };
            super::worker::run(handle.clone(), index, core);
        }
    }
}
