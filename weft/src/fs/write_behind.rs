//! Write-behind for `File`: the caller's bytes are copied into a shared buffer and
//! `poll_write` returns at once; one blocking-pool closure (the *drain*) writes batches until
//! the buffer is empty, taking whatever the caller added while it wrote the previous batch.
//!
//! So a stream of small writes (a `BufWriter` flushing 8 KiB at a time) costs one hop per
//! burst rather than one per write, and the bytes reach the OS even if the `File` is dropped
//! without `flush` (the drain owns its own `Arc` of the file). Two buffers ping-pong between
//! the caller and the drain, so steady writing allocates nothing.
//!
//! Invariant: `active` is true exactly while a drain closure has been spawned and has not yet
//! observed an empty buffer; only the drain clears it (or the owner, when the drain's
//! `JoinHandle` reports it never ran). The `Shared` lock is a leaf, held only to move
//! buffers and flags, never across a syscall.

use std::fs::File as StdFile;
use std::future::Future;
use std::io::{self, Seek, SeekFrom, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};

use super::background_failed;
use crate::loom::lock;
use crate::loom::sync::{Arc, Mutex};
use crate::task::JoinHandle;

struct Shared {
    state: Mutex<State>,
}

struct State {
    /// Accepted bytes the drain has not taken yet.
    pending: Vec<u8>,
    /// A drain closure is running (or queued) and will take `pending`.
    active: bool,
    /// Unread read-ahead to give back (seek backwards) before the next batch is written.
    rewind: u64,
    /// The first write error; reported by the next `poll_write` or `poll_flush`.
    error: Option<io::Error>,
    /// A writer waiting for room in a full `pending`.
    waker: Option<Waker>,
}

/// The write-behind half of a `File` (owned by its state, polled with `&mut`).
pub(super) struct Writer {
    shared: Arc<Shared>,
    /// The drain spawned last, until its completion has been observed.
    drain: Option<JoinHandle<()>>,
}

impl Writer {
    pub(super) fn new() -> Writer {
        let state = State { pending: Vec::new(), active: false, rewind: 0, error: None, waker: None };
        Writer { shared: Arc::new(Shared { state: Mutex::new(state) }), drain: None }
    }

    /// True when no drain has been started since the last one was seen to finish, so there is
    /// nothing to wait for (and no lock needs taking to know it).
    pub(super) fn is_settled(&self) -> bool {
        self.drain.is_none()
    }

    /// Accepts up to `cap - pending` bytes of `data`. `rewind` (unread read-ahead) is taken,
    /// and zeroed, only when the bytes are accepted; it is applied before they are written.
    pub(super) fn poll_write(
        &mut self,
        cx: &mut Context<'_>,
        file: &Arc<StdFile>,
        data: &[u8],
        cap: usize,
        rewind: &mut u64,
    ) -> Poll<io::Result<usize>> {
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        loop {
            let mut st = lock(&self.shared.state);
            if let Some(e) = st.error.take() {
                return Poll::Ready(Err(e));
            }
            if st.active && st.pending.len() >= cap {
                st.waker = Some(cx.waker().clone());
                drop(st);
                // Also watch the drain itself: if the runtime cancelled it before it ran,
                // nobody else would ever make room.
                ready!(self.poll_drain_done(cx));
                continue;
            }
            let n = data.len().min(cap.max(1).saturating_sub(st.pending.len()).max(1));
            st.pending.extend_from_slice(&data[..n]);
            st.rewind += std::mem::take(rewind);
            if !st.active {
                st.active = true;
                drop(st);
                let (shared, file) = (self.shared.clone(), file.clone());
                self.drain = Some(crate::task::spawn_blocking(move || drain(&shared, &file)));
            }
            return Poll::Ready(Ok(n));
        }
    }

    /// Waits until every accepted byte has been handed to the OS; reports the first error.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_drain_done(cx));
        match lock(&self.shared.state).error.take() {
            Some(e) => Poll::Ready(Err(e)),
            None => Poll::Ready(Ok(())),
        }
    }

    /// Waits for the last drain's closure to have returned (or to have been cancelled).
    fn poll_drain_done(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(handle) = &mut self.drain {
            let res = ready!(Pin::new(handle).poll(cx));
            self.drain = None;
            if res.is_err() {
                let mut st = lock(&self.shared.state);
                st.active = false;
                st.pending.clear();
                st.error.get_or_insert_with(background_failed);
            }
        }
        Poll::Ready(())
    }
}

/// The drain: runs on the blocking pool until `pending` is empty or a write fails.
fn drain(shared: &Shared, mut file: &StdFile) {
    let mut batch = Vec::new();
    loop {
        let (rewind, waker) = {
            let mut st = lock(&shared.state);
            if st.pending.is_empty() {
                st.active = false;
                (0, st.waker.take())
            } else {
                std::mem::swap(&mut st.pending, &mut batch);
                (std::mem::take(&mut st.rewind), st.waker.take())
            }
        };
        // Room was made (or the drain is over): let a waiting writer continue.
        if let Some(w) = waker {
            w.wake();
        }
        if batch.is_empty() {
            return;
        }
        let mut res = Ok(());
        if rewind > 0 {
            res = file.seek(SeekFrom::Current(-(rewind as i64))).map(drop);
        }
        if res.is_ok() {
            res = file.write_all(&batch);
        }
        batch.clear();
        if let Err(e) = res {
            let mut st = lock(&shared.state);
            st.error.get_or_insert(e);
            st.pending.clear();
            st.active = false;
            let waker = st.waker.take();
            drop(st);
            if let Some(w) = waker {
                w.wake();
            }
            return;
        }
    }
}
