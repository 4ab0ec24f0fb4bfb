//! Loom models of the task state machine: polls racing wakes, aborts, JoinHandle drops and
//! shutdown. Each model checks that the future is dropped exactly once, the output at most
//! once, and the cell is freed (every reference released).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use super::{new_task, Id, JoinHandle, OwnedTasks, Runnable, Schedule, Task, TaskRef};
use crate::loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use crate::loom::sync::{Arc, Mutex};
use crate::loom::{lock, thread};

struct Sched {
    queue: Mutex<VecDeque<Runnable<Arc<Sched>>>>,
    owned: OwnedTasks<Arc<Sched>>,
}

impl Schedule for Arc<Sched> {
    fn schedule(&self, task: Runnable<Self>) {
        lock(&self.queue).push_back(task);
    }
    fn release(&self, task: TaskRef<'_>) -> Option<Task<Self>> {
        self.owned.remove(task)
    }
    fn bind(&self, task: Task<Self>) -> bool {
        self.owned.bind(task, 0)
    }
}

impl Sched {
    fn new() -> Arc<Sched> {
        Arc::new(Sched { queue: Mutex::new(VecDeque::new()), owned: OwnedTasks::new(1) })
    }
    fn run_all(&self) {
        loop {
            let next = lock(&self.queue).pop_front();
            match next {
                Some(t) => t.run(),
                None => return,
            }
        }
    }
}

/// Pending on the first poll (stashing its waker), ready on the second; counts drops.
struct TwoPolls {
    polled: bool,
    waker: Arc<Mutex<Option<Waker>>>,
    drops: Arc<AtomicUsize>,
}

impl Future for TwoPolls {
    type Output = Arc<AtomicUsize>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.polled {
            return Poll::Ready(self.drops.clone());
        }
        self.polled = true;
        *lock(&self.waker) = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for TwoPolls {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
    }
}

fn spawn(sched: &Arc<Sched>) -> (JoinHandle<Arc<AtomicUsize>>, Arc<Mutex<Option<Waker>>>, Arc<AtomicUsize>) {
    let waker = Arc::new(Mutex::new(None));
    let drops = Arc::new(AtomicUsize::new(0));
    let fut = TwoPolls { polled: false, waker: waker.clone(), drops: drops.clone() };
    let (runnable, join) = new_task(fut, sched.clone(), Id::next());
    sched.schedule(runnable);
    (join, waker, drops)
}

fn poll_join<T>(join: &mut JoinHandle<T>) -> Poll<Result<T, super::JoinError>> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(join).poll(&mut cx)
}

#[test]
fn wake_from_another_thread_while_polling() {
    loom::model(|| {
        let sched = Sched::new();
        let (mut join, waker, drops) = spawn(&sched);
        let w = waker.clone();
        let th = thread::spawn(move || {
            // Wake exactly once, as soon as the waker is published (possibly mid-poll).
            loop {
                if let Some(w) = lock(&w).take() {
                    w.wake();
                    return;
                }
                thread::yield_now();
            }
        });
        sched.run_all();
        th.join().unwrap();
        // That single wake must not be lost, whatever the interleaving.
        sched.run_all();
        assert!(matches!(poll_join(&mut join), Poll::Ready(Ok(_))));
        assert_eq!(drops.load(SeqCst), 1);
        drop(join);
        assert!(sched.owned.is_empty());
    });
}

#[test]
fn abort_races_poll() {
    loom::model(|| {
        let sched = Sched::new();
        let (mut join, waker, drops) = spawn(&sched);
        let abort = join.abort_handle();
        let th = thread::spawn(move || abort.abort());
        sched.run_all();
        th.join().unwrap();
        if let Some(w) = lock(&waker).take() {
            w.wake();
        }
        sched.run_all();
        match poll_join(&mut join) {
            Poll::Ready(Ok(_)) => {}
            Poll::Ready(Err(e)) => assert!(e.is_cancelled()),
            Poll::Pending => panic!("task neither completed nor cancelled"),
        }
        assert_eq!(drops.load(SeqCst), 1);
    });
}

#[test]
fn join_handle_drop_races_completion() {
    loom::model(|| {
        let sched = Sched::new();
        let (join, waker, drops) = spawn(&sched);
        sched.run_all(); // first poll: pending, waker stashed
        let w = lock(&waker).take().unwrap();
        let th = thread::spawn(move || drop(join));
        w.wake();
        sched.run_all(); // completes, racing the JoinHandle drop
        th.join().unwrap();
        // Future dropped once; the output (a clone of `drops`) dropped too: only our ref left.
        assert_eq!(drops.load(SeqCst), 1);
        assert_eq!(Arc::strong_count(&drops), 1);
    });
}

#[test]
fn shutdown_races_wake() {
    loom::model(|| {
        let sched = Sched::new();
        let (mut join, waker, drops) = spawn(&sched);
        sched.run_all();
        let w = lock(&waker).take().unwrap();
        let th = thread::spawn(move || w.wake());
        sched.owned.close_and_shutdown_all();
        th.join().unwrap();
        sched.run_all(); // a Runnable submitted by the wake finds the task complete
        match poll_join(&mut join) {
            Poll::Ready(Err(e)) => assert!(e.is_cancelled()),
            other => panic!("expected cancellation, got ready={}", other.is_ready()),
        }
        assert_eq!(drops.load(SeqCst), 1);
    });
}

#[test]
fn join_handle_reads_output_racing_completion() {
    loom::model(|| {
        let sched = Sched::new();
        let (mut join, waker, drops) = spawn(&sched);
        sched.run_all(); // pending; waker stashed
        let w = lock(&waker).take().unwrap();
        let th = thread::spawn(move || {
            // Poll until ready (each Pending poll may register or replace the join waker,
            // which decides between the fast and the slow completion path), then drop.
            loop {
                if let Poll::Ready(out) = poll_join(&mut join) {
                    drop(out.unwrap());
                    break;
                }
                thread::yield_now();
            }
            drop(join);
        });
        w.wake();
        sched.run_all();
        th.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1);
        // Output (an Arc clone) consumed and the cell freed: only our Arc remains.
        assert_eq!(Arc::strong_count(&drops), 1);
    });
}
