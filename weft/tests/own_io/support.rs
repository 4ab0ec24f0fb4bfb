//! A minimal executor (block_on over a counting waker) and scripted mock I/O objects.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use weft::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Counts how often it was woken.
#[derive(Default)]
pub struct CountWaker(pub AtomicUsize);

impl Wake for CountWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn counting_waker() -> (Arc<CountWaker>, Waker) {
    let c = Arc::new(CountWaker::default());
    (c.clone(), Waker::from(c))
}

/// Polls `fut` to completion; panics if it stays pending for too long (a lost wakeup or a
/// deadlock in the code under test).
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let (_count, waker) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    for _ in 0..100_000 {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
    panic!("future did not complete");
}

/// Polls `fut` once with a counting waker.
pub fn poll_once<F: Future + Unpin>(fut: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(fut).poll(&mut Context::from_waker(waker))
}

/// One scripted step of a [`MockReader`].
pub enum Step {
    Data(&'static [u8]),
    Pending,
    Error(io::ErrorKind),
}

/// Returns its script one step per poll (a `Data` step may take several polls if the buffer
/// is small); EOF after the script. `Pending` steps wake the task at once.
pub struct MockReader {
    pub steps: VecDeque<Step>,
    pub reads: usize,
}

impl MockReader {
    pub fn new(steps: Vec<Step>) -> Self {
        MockReader { steps: steps.into(), reads: 0 }
    }
}

impl AsyncRead for MockReader {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.reads += 1;
        match self.steps.pop_front() {
            None => Poll::Ready(Ok(())),
            Some(Step::Pending) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Some(Step::Error(kind)) => Poll::Ready(Err(kind.into())),
            Some(Step::Data(d)) => {
                let n = d.len().min(buf.remaining());
                buf.put_slice(&d[..n]);
                if n < d.len() {
                    self.steps.push_front(Step::Data(&d[n..]));
                }
                Poll::Ready(Ok(()))
            }
        }
    }
}

/// A writer that accepts at most `max` bytes per call, optionally returning `Pending` (and
/// waking) before every accepted write, and records flushes, shutdowns and write sizes.
#[derive(Default)]
pub struct MockWriter {
    pub data: Vec<u8>,
    pub max: usize,
    pub pend: bool,
    pub pended: bool,
    pub writes: Vec<usize>,
    pub flushes: usize,
    pub shutdowns: usize,
    pub vectored: bool,
}

impl MockWriter {
    pub fn new(max: usize) -> Self {
        MockWriter { max, ..Default::default() }
    }
}

impl AsyncWrite for MockWriter {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.pend && !self.pended {
            self.pended = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.pended = false;
        let n = buf.len().min(self.max);
        self.data.extend_from_slice(&buf[..n]);
        self.writes.push(n);
        Poll::Ready(Ok(n))
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if !self.vectored {
            let first = bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| &**b);
            return self.poll_write(cx, first);
        }
        let all: Vec<u8> = bufs.iter().flat_map(|b| b.iter().copied()).collect();
        self.poll_write(cx, &all)
    }
    fn is_write_vectored(&self) -> bool {
        self.vectored
    }
    fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.flushes += 1;
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shutdowns += 1;
        Poll::Ready(Ok(()))
    }
}
