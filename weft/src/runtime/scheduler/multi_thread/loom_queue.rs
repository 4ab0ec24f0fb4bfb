//! Loom models of the local run queue: owner push/pop racing a stealer, and overflow to the
//! injection queue. Every task must come out exactly once.

use std::collections::VecDeque;

use super::inject::Inject;
use super::queue;
use crate::loom::sync::{Arc, Mutex};
use crate::loom::{lock, thread};
use crate::task::{new_task, Id, OwnedTasks, Runnable, Schedule, Task, TaskRef};

pub(super) struct Sched {
    pub(super) owned: OwnedTasks<Arc<Sched>>,
}

impl Schedule for Arc<Sched> {
    fn schedule(&self, _task: Runnable<Self>) {
        unreachable!("tasks in this model are never woken");
    }
    fn release(&self, task: TaskRef<'_>) -> Option<Task<Self>> {
        self.owned.remove(task)
    }
    fn bind(&self, task: Task<Self>) -> bool {
        self.owned.bind(task, 0)
    }
}

pub(super) fn make(sched: &Arc<Sched>) -> (Runnable<Arc<Sched>>, Id) {
    let id = Id::next();
    let (runnable, join) = new_task(async {}, sched.clone(), id);
    drop(join);
    (runnable, id)
}

pub(super) fn sched() -> Arc<Sched> {
    Arc::new(Sched { owned: OwnedTasks::new(1) })
}

#[test]
fn push_pop_steal_each_task_once() {
    loom::model(|| {
        let s = sched();
        let inject = Inject::new();
        let (steal, mut local) = queue::local::<Arc<Sched>>();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut ids = Vec::new();
        for _ in 0..3 {
            let (n, id) = make(&s);
            ids.push(id);
            local.push_back_or_overflow(n, &inject);
        }
        let seen2 = seen.clone();
        let th = thread::spawn(move || {
            let (_s2, mut mine) = queue::local::<Arc<Sched>>();
            if let Some(t) = steal.steal_into(&mut mine) {
                lock(&seen2).push(t.header().id());
                t.run();
            }
            while let Some(t) = mine.pop() {
                lock(&seen2).push(t.header().id());
                t.run();
            }
        });
        while let Some(t) = local.pop() {
            lock(&seen).push(t.header().id());
            t.run();
        }
        th.join().unwrap();
        let mut got = lock(&seen).clone();
        got.sort();
        ids.sort();
        assert_eq!(got, ids);
        assert!(s.owned.is_empty());
    });
}

#[test]
fn overflow_moves_half_to_inject_racing_a_stealer() {
    loom::model(|| {
        let s = sched();
        let inject = Arc::new(Inject::new());
        let (steal, mut local) = queue::local::<Arc<Sched>>();
        let mut ids = Vec::new();
        // Fill to capacity.
        for _ in 0..queue::CAPACITY {
            let (n, id) = make(&s);
            ids.push(id);
            local.push_back_or_overflow(n, &inject);
        }
        let th = thread::spawn(move || {
            let (_s2, mut mine) = queue::local::<Arc<Sched>>();
            let mut got = VecDeque::new();
            if let Some(t) = steal.steal_into(&mut mine) {
                got.push_back(t.header().id());
                t.run();
            }
            while let Some(t) = mine.pop() {
                got.push_back(t.header().id());
                t.run();
            }
            got
        });
        // One more push overflows (or finds room freed by the stealer).
        let (n, id) = make(&s);
        ids.push(id);
        local.push_back_or_overflow(n, &inject);
        let mut got: Vec<Id> = Vec::new();
        while let Some(t) = local.pop() {
            got.push(t.header().id());
            t.run();
        }
        got.extend(th.join().unwrap());
        while let Some(t) = inject.pop() {
            got.push(t.header().id());
            t.run();
        }
        got.sort();
        ids.sort();
        assert_eq!(got, ids);
    });
}
