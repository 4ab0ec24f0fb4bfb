//! Shared helpers for the integration tests (included with `mod support;`).
#![allow(dead_code)]

use std::future::Future;
use std::ops::DerefMut;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

pub fn mt(workers: usize) -> weft::runtime::Runtime {
    weft::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().unwrap()
}

pub fn ct() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Both flavors, for tests that must hold for each.
pub fn flavors() -> Vec<(&'static str, weft::runtime::Runtime)> {
    vec![("current_thread", ct()), ("multi_thread", mt(2))]
}

/// Only turns a hang into a failure; never reached when the code works.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// Polls `cond` every millisecond until it holds, failing after `DEADLINE`.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A two-worker multi-thread builder whose long-poll monitor counts every poll over 10 ms,
/// without the stderr warning (the tests read the metrics instead).
pub fn long_poll_builder() -> weft::runtime::Builder {
    let mut b = weft::runtime::Builder::new_multi_thread();
    b.worker_threads(2).enable_all().long_poll_threshold(Duration::from_millis(10)).warn_on_long_polls(false);
    b
}

/// Runs on `rt` a task that blocks its worker for at least 50 ms and until the long-poll
/// monitor has counted it, so that a slow machine cannot make the monitor miss the poll;
/// returns the task's id. Through `#[track_caller]` the task's spawn location is the caller's.
#[track_caller]
pub fn run_one_long_poll(rt: &weft::runtime::Runtime) -> weft::task::Id {
    let m = rt.handle().metrics();
    let task = rt.spawn(async move {
        std::thread::sleep(Duration::from_millis(50));
        wait_until("long poll noticed", || m.long_poll_count() >= 1);
    });
    let id = task.id();
    rt.block_on(task).unwrap();
    id
}

/// Two fields for mapped lock guards to project into.
pub struct Pair {
    pub a: u32,
    pub b: Vec<u32>,
}

/// Moves `guard` into a spawned task that writes 9 through it, and waits for that task: it
/// compiles only for a `Send` guard, and the write lands through the guard's mapping.
pub async fn write_nine_in_a_task<G: DerefMut<Target = u32> + Send + 'static>(mut guard: G) {
    weft::spawn(async move { *guard = 9 }).await.unwrap();
}

/// Counts its drops.
#[derive(Clone, Default)]
pub struct DropCounter(pub Arc<AtomicUsize>);

impl DropCounter {
    pub fn new() -> DropCounter {
        DropCounter::default()
    }
    pub fn token(&self) -> DropToken {
        DropToken(self.0.clone())
    }
    pub fn count(&self) -> usize {
        self.0.load(SeqCst)
    }
}

pub struct DropToken(Arc<AtomicUsize>);

impl Drop for DropToken {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A future that is never ready and counts its polls; holds a drop token.
pub struct PendingForever {
    pub polls: Arc<AtomicUsize>,
    pub _token: DropToken,
}

impl Future for PendingForever {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, SeqCst);
        Poll::Pending
    }
}
