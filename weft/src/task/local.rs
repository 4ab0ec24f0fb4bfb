//! `LocalSet` and `spawn_local`: run `!Send` futures on the thread that owns the set.
//!
//! Tasks of a `LocalSet` are polled only while the set is driven (`run_until`, `block_on`, or
//! awaiting the set itself) on its owner thread. A wake from the owner thread while the set
//! is being driven pushes to a plain `VecDeque`; a wake from anywhere else goes to a mutex
//! queue and wakes the future driving the set. Dropping the set cancels every task on the
//! owner thread, so `!Send` futures are never dropped elsewhere.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::{Id, JoinHandle, OwnedTasks, Runnable, Schedule, Task, TaskRef};
use crate::loom::lock;
use crate::loom::sync::{Arc, Mutex};

/// Tasks run per poll of the driving future before it yields to its own scheduler.
const MAX_TASKS_PER_TICK: usize = 61;

type LocalTask = Runnable<Arc<Shared>>;

/// A set of `!Send` tasks run on the current thread.
pub struct LocalSet {
    cx: Rc<LocalContext>,
    _not_send: PhantomData<*const ()>,
}

struct LocalContext {
    shared: Arc<Shared>,
    queue: RefCell<VecDeque<LocalTask>>,
}

pub(crate) struct Shared {
    owned: OwnedTasks<Arc<Shared>>,
    /// `None` once the set is dropped.
    remote: Mutex<Option<VecDeque<LocalTask>>>,
    waker: Mutex<Option<Waker>>,
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<LocalContext>>> = const { RefCell::new(None) };
    /// True while the current set is entered only through a `LocalEnterGuard`, not run: a task
    /// woken then (by a timer the runtime's driver fires on this thread, say) is queued and the
    /// set's driver woken, since nothing on this thread is about to tick the set.
    static WAKE_ON_SCHEDULE: Cell<bool> = const { Cell::new(false) };
}

/// True while this thread runs a `LocalSet` (its tasks or the `run_until` future).
pub(crate) fn is_active() -> bool {
    CURRENT.try_with(|c| c.borrow().is_some()).unwrap_or(false)
}

/// Spawns a `!Send` future on the current `LocalSet`.
///
/// Panics outside a `LocalSet` (`LocalSet::run_until`, `LocalSet::block_on`, or awaiting it).
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let cx = CURRENT.with(|c| c.borrow().clone());
    match cx {
        Some(cx) => cx.spawn(future),
        None if entered_local_runtime_elsewhere() => panic!(
            "Local tasks can only be spawned on a LocalRuntime from the thread the runtime was created on \
             (tokio's text): this thread entered a LocalRuntime's handle, but the runtime's local \
             tasks live on its own thread; spawn with `tokio::spawn` here, or send the work to that thread"
        ),
        None => panic!(
            "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime` \
             (tokio's text). Wrap the code in `local_set.run_until(async {{ ... }}).await` or \
             `local_set.block_on(&rt, ...)`, use `local_set.spawn_local(...)`, or run it on a \
             `LocalRuntime`"
        ),
    }
}

/// This thread entered the handle of a `LocalRuntime` (one created on another thread: on its
/// own thread, entering it also enters its local set).
fn entered_local_runtime_elsewhere() -> bool {
    match crate::runtime::context::try_current() {
        Some(crate::runtime::scheduler::Handle::CurrentThread(h)) => {
            h.is_local_runtime.load(std::sync::atomic::Ordering::Relaxed)
        }
        _ => false,
    }
}

impl LocalContext {
    #[track_caller]
    fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let (runnable, join) = super::new_task(future, self.shared.clone(), Id::next());
        if lock(&self.shared.remote).is_none() {
            // The set is being dropped (a task's destructor spawned): cancel right here.
            runnable.shutdown();
            return join;
        }
        self.queue.borrow_mut().push_back(runnable);
        self.shared.wake_driver();
        join
    }

    /// Runs up to `MAX_TASKS_PER_TICK` tasks; true if more are waiting.
    fn tick(&self) -> bool {
        let remote: Vec<LocalTask> = match lock(&self.shared.remote).as_mut() {
            Some(q) => q.drain(..).collect(),
            None => Vec::new(),
        };
        self.queue.borrow_mut().extend(remote);
        for _ in 0..MAX_TASKS_PER_TICK {
            let next = self.queue.borrow_mut().pop_front();
            match next {
                Some(task) => task.run(),
                None => return false,
            }
        }
        !self.queue.borrow().is_empty()
    }
}

impl Shared {
    fn wake_driver(&self) {
        let waker = lock(&self.waker).take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// Makes a LocalSet current on this thread while alive (and restores the previous one).
struct Enter(Option<Rc<LocalContext>>, bool);

impl Enter {
    /// Entered to run the set (its tasks or the `run_until` future).
    fn new(cx: &Rc<LocalContext>) -> Enter {
        Enter(CURRENT.with(|c| c.replace(Some(cx.clone()))), WAKE_ON_SCHEDULE.replace(false))
    }

    /// Entered by `LocalSet::enter`: spawns go to the set, which runs later.
    fn guard(cx: &Rc<LocalContext>) -> Enter {
        Enter(CURRENT.with(|c| c.replace(Some(cx.clone()))), WAKE_ON_SCHEDULE.replace(true))
    }

    /// As `new`, or `None` when this thread's local context is already destroyed (a
    /// `LocalSet` kept in a `thread_local!` is dropped while the thread exits).
    fn try_new(cx: &Rc<LocalContext>) -> Option<Enter> {
        let prev = CURRENT.try_with(|c| c.replace(Some(cx.clone()))).ok()?;
        Some(Enter(prev, WAKE_ON_SCHEDULE.try_with(|w| w.replace(false)).unwrap_or(false)))
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        let prev = self.0.take();
        let _ = CURRENT.try_with(|c| *c.borrow_mut() = prev);
        let _ = WAKE_ON_SCHEDULE.try_with(|w| w.set(self.1));
    }
}

/// Returned by [`LocalSet::enter`]: while it lives, `spawn_local` on this thread spawns onto
/// that `LocalSet` (the tasks run when the set is next driven). Dropping it restores the
/// previous local context.
#[must_use = "the LocalSet is only entered while the guard is alive"]
pub struct LocalEnterGuard {
    _enter: Enter,
}

impl std::fmt::Debug for LocalEnterGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEnterGuard").finish_non_exhaustive()
    }
}

impl LocalSet {
    /// Makes this set the target of `spawn_local` on this thread until the guard is dropped.
    pub fn enter(&self) -> LocalEnterGuard {
        LocalEnterGuard { _enter: Enter::guard(&self.cx) }
    }

    pub fn new() -> LocalSet {
        let shared = Arc::new(Shared {
            owned: OwnedTasks::new(1),
            remote: Mutex::new(Some(VecDeque::new())),
            waker: Mutex::new(None),
        });
        LocalSet { cx: Rc::new(LocalContext { shared, queue: RefCell::new(VecDeque::new()) }), _not_send: PhantomData }
    }

    /// The id of this set, as a runtime id (tokio's `LocalSet::id`): unique among the runtimes
    /// and sets alive together, derived from the address of the set's shared state.
    pub fn id(&self) -> crate::runtime::Id {
        crate::runtime::Id::from_addr(&*self.cx.shared as *const Shared as usize)
    }

    /// Spawns a `!Send` task on this set (it runs when the set is driven).
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        self.cx.spawn(future)
    }

    /// Runs `future` (which may `spawn_local`) until it completes, running the set's tasks
    /// meanwhile.
    pub async fn run_until<F: Future>(&self, future: F) -> F::Output {
        RunUntil { set: self, future }.await
    }

    /// `rt.block_on(self.run_until(future))`.
    #[track_caller]
    pub fn block_on<F: Future>(&self, rt: &crate::runtime::Runtime, future: F) -> F::Output {
        rt.block_on(self.run_until(future))
    }

    fn poll_tasks(&self, cx: &mut Context<'_>) -> bool {
        *lock(&self.cx.shared.waker) = Some(cx.waker().clone());
        let _enter = Enter::new(&self.cx);
        let more = self.cx.tick();
        if more {
            cx.waker().wake_by_ref();
        }
        more
    }
}

pin_project_lite::pin_project! {
    struct RunUntil<'a, F> {
        set: &'a LocalSet,
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for RunUntil<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        {
            let _enter = Enter::new(&this.set.cx);
            if let Poll::Ready(v) = this.future.poll(cx) {
                return Poll::Ready(v);
            }
        }
        this.set.poll_tasks(cx);
        Poll::Pending
    }
}

/// Awaiting a `LocalSet` runs it until all of its tasks have completed.
impl Future for LocalSet {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_tasks(cx);
        let queued =
            !self.cx.queue.borrow().is_empty() || lock(&self.cx.shared.remote).as_ref().is_some_and(|q| !q.is_empty());
        if !queued && self.cx.shared.owned.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Default for LocalSet {
    fn default() -> Self {
        LocalSet::new()
    }
}

impl Drop for LocalSet {
    fn drop(&mut self) {
        // Entered so that the tasks' destructors see their set; at thread exit the context
        // may be gone, and the tasks are cancelled without it.
        let _enter = Enter::try_new(&self.cx);
        // Cancel every task here, on the owner thread: their futures may be !Send.
        self.cx.shared.owned.close_and_shutdown_all();
        let remote = lock(&self.cx.shared.remote).take();
        let local: Vec<LocalTask> = self.cx.queue.borrow_mut().drain(..).collect();
        for task in local.into_iter().chain(remote.into_iter().flatten()) {
            task.shutdown();
        }
        lock(&self.cx.shared.waker).take();
    }
}

impl fmt::Debug for LocalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalSet").finish()
    }
}

impl Schedule for Arc<Shared> {
    fn schedule(&self, task: Runnable<Self>) {
        let task = CURRENT
            .try_with(|c| match c.borrow().as_ref() {
                Some(cx) if Arc::ptr_eq(&cx.shared, self) => {
                    cx.queue.borrow_mut().push_back(task);
                    if WAKE_ON_SCHEDULE.with(Cell::get) {
                        self.wake_driver();
                    }
                    None
                }
                _ => Some(task),
            })
            .unwrap_or_else(|_| None);
        let Some(task) = task else { return };
        let mut remote = lock(&self.remote);
        match remote.as_mut() {
            Some(q) => {
                q.push_back(task);
                drop(remote);
                self.wake_driver();
            }
            None => {
                drop(remote);
                task.refuse();
            }
        }
    }

    fn release(&self, task: TaskRef<'_>) -> Option<Task<Self>> {
        self.owned.remove(task)
    }

    fn bind(&self, task: Task<Self>) -> bool {
        self.owned.bind(task, 0)
    }
}
