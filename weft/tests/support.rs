//! Shared helpers for the integration tests (included with `mod support;`).
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};

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
