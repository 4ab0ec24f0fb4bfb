//! Helpers shared by the workload files: validation (`expect_eq`), joining (`join_sum`),
//! running inside a worker (`inside`) and a runtime-neutral latch (`Countdown`). Written
//! against [`Adapter`], like the workloads themselves.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::framework::adapter::Adapter;

/// `Ok` when `got == want`, else a message naming the check.
pub(crate) fn expect_eq(what: &str, got: u64, want: u64) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("validation failed: {what}: got {got}, want {want}"))
    }
}

/// Joins every handle in order and adds up the outputs (wrapping).
pub(crate) async fn join_sum<R: Adapter>(handles: Vec<R::Handle<u64>>) -> Result<u64, String> {
    let mut sum = 0u64;
    for handle in handles {
        sum = sum.wrapping_add(R::join(handle).await.map_err(|_| "a task panicked".to_string())?);
    }
    Ok(sum)
}

/// Runs `work` in a spawned task (on a worker) and waits for it.
pub(crate) async fn inside<R: Adapter, F>(work: F) -> Result<(), String>
where
    F: Future<Output = Result<(), String>> + Send + 'static,
{
    R::join(R::spawn(work)).await.map_err(|_| "the root task panicked".to_string())?
}

/// A runtime-neutral "last one out signals" latch (an atomic count and a futures-channel
/// oneshot), shared by every runtime in `spawn_many` and `ping_pong`.
pub(crate) struct Countdown {
    remaining: AtomicU64,
    done: Mutex<Option<futures_channel::oneshot::Sender<()>>>,
}

impl Countdown {
    pub(crate) fn new(n: u64) -> (Arc<Countdown>, futures_channel::oneshot::Receiver<()>) {
        let (tx, rx) = futures_channel::oneshot::channel();
        let countdown = Arc::new(Countdown { remaining: AtomicU64::new(n), done: Mutex::new(Some(tx)) });
        if n == 0 {
            countdown.fire();
        }
        (countdown, rx)
    }

    pub(crate) fn tick(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.fire();
        }
    }

    fn fire(&self) {
        if let Some(tx) = self.done.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(());
        }
    }
}
