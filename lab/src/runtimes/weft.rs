//! weft adapter (`weft-mt`, `weft-ct`).
//!
//! weft mirrors tokio's names, so this file reads like `tokio.rs`. weft has no channels yet
//! (`weft::sync` is a later issue): its channel kit is [`NotYet`], and the channel workloads'
//! weft rows say "not yet". When `weft::sync` lands, write a `WeftChannels` kit here (copy the
//! shape of `TokioChannels`) and name it in `type Channels`.

use std::future::Future;
use std::time::Duration;

use crate::adapter::{Adapter, Flavor, NotYet, Panicked, RtConfig};

/// A built weft runtime of either flavor.
pub struct Weft {
    runtime: weft::runtime::Runtime,
}

impl Adapter for Weft {
    type Handle<T: Send + 'static> = weft::task::JoinHandle<T>;
    type Channels = NotYet;

    fn build(config: &RtConfig) -> std::io::Result<Self> {
        let mut builder = match config.flavor {
            Flavor::MultiThread => {
                let mut b = weft::runtime::Builder::new_multi_thread();
                b.worker_threads(config.workers);
                b
            }
            Flavor::CurrentThread => weft::runtime::Builder::new_current_thread(),
        };
        if let Some(n) = config.global_queue_interval {
            builder.global_queue_interval(n);
        }
        if let Some(n) = config.event_interval {
            builder.event_interval(n);
        }
        let runtime = builder.thread_name("weft-lab").enable_all().build()?;
        Ok(Weft { runtime })
    }

    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        self.runtime.block_on(fut)
    }

    fn spawn<F>(fut: F) -> Self::Handle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        weft::spawn(fut)
    }

    fn join<T: Send + 'static>(handle: Self::Handle<T>) -> impl Future<Output = Result<T, Panicked>> + Send {
        async move { handle.await.map_err(|_| Panicked) }
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        weft::task::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        weft::time::sleep(duration)
    }
}
