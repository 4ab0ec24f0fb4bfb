//! Cross-runtime workloads: a task on one runtime handing messages to a task on a second
//! runtime of the same kind, over the runtime's own channels, so every wake crosses from one
//! scheduler to the other (`schedule` from a thread that is not the target runtime's).
//!
//! Why: Zenoh runs five small internal runtimes and hands every message from one to the next,
//! and a service that keeps a runtime per subsystem does the same. Within one runtime a wake
//! can land in the waker's own worker (its LIFO slot, its local queue); across runtimes it
//! cannot, so these rows measure the injection queue and the unpark of a sleeping worker.
//!
//! The second runtime (`start_peer`) is built, started and proved to be serving before the clock
//! starts, and shut down after it stops, as the first one is (`run` times only the workload
//! future). A runtime whose `build` does not make a runtime of its own (async-std's process
//! global, [`Adapter::OWN_RUNTIMES`]) reports these rows as "not yet".

use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;

use super::{expect_eq, inside, Outcome};
use crate::framework::adapter::{Adapter, Channels, RtConfig};

type Kit<R> = <R as Adapter>::Channels;
type Tx<R> = <Kit<R> as Channels>::Sender<u64>;
type Rx<R> = <Kit<R> as Channels>::Receiver<u64>;
/// The second runtime's thread; it returns its serving task's verdict.
type PeerThread = JoinHandle<Result<(), String>>;

/// Capacity of `cross_runtime_stream`'s channel.
pub const STREAM_CAPACITY: usize = 64;

/// What the serving task on the second runtime does with the requests it receives.
#[derive(Clone, Copy)]
pub(super) enum Serve {
    /// Answers each request `v` with `v + 1` (`cross_runtime_ping`).
    Echo,
    /// Adds the requests up and answers once with the sum when the senders are gone
    /// (`cross_runtime_stream`).
    Sum,
}

impl Serve {
    /// The requests channel's capacity: one outstanding ping, or the stream's window.
    fn capacity(self) -> usize {
        match self {
            Serve::Echo => 1,
            Serve::Sum => STREAM_CAPACITY,
        }
    }
}

/// Builds a second runtime of kind `R` with `config` on a thread of its own and waits until its
/// task serving the requests runs; returns the thread (which returns that task's verdict once
/// every sender of the requests is gone) with the requests' sender and the answers' receiver.
fn start_peer<R: Adapter>(config: &RtConfig, serve: Serve) -> Result<(PeerThread, Tx<R>, Rx<R>), String> {
    let (requests, mut inbox) = Kit::<R>::bounded::<u64>(serve.capacity());
    let (outbox, answers) = Kit::<R>::bounded::<u64>(1);
    let (ready_tx, ready_rx) = std_mpsc::channel::<()>();
    let config = config.clone();
    let thread = std::thread::Builder::new()
        .name("lab-second-runtime".into())
        .spawn(move || {
            let runtime = R::build(&config).map_err(|e| format!("building the second runtime failed: {e}"))?;
            runtime.block_on(inside::<R, _>(async move {
                let _ = ready_tx.send(());
                serve_requests::<R>(serve, &mut inbox, outbox).await
            }))
        })
        .map_err(|e| format!("starting the second runtime's thread failed: {e}"))?;
    if ready_rx.recv().is_ok() {
        return Ok((thread, requests, answers));
    }
    // The thread ended before its task ran: its own error says why.
    Err(match thread.join() {
        Ok(Err(why)) => why,
        Ok(Ok(())) => "the second runtime's task ended before it served".into(),
        Err(_) => "the second runtime panicked while starting".into(),
    })
}

async fn serve_requests<R: Adapter>(serve: Serve, inbox: &mut Rx<R>, outbox: Tx<R>) -> Result<(), String> {
    let mut sum = 0u64;
    while let Some(v) = Kit::<R>::recv(inbox).await {
        match serve {
            Serve::Echo => {
                if Kit::<R>::send(&outbox, v + 1).await.is_err() {
                    return Err("the first runtime stopped listening".into());
                }
            }
            Serve::Sum => sum = sum.wrapping_add(v),
        }
    }
    if let Serve::Sum = serve {
        // Only a failed run has dropped the answers' receiver; its own error says more.
        let _ = Kit::<R>::send(&outbox, sum).await;
    }
    Ok(())
}

/// Starts the second runtime serving as `serve` says, runs `timed` with the requests' sender
/// and the answers' receiver, then waits for the second runtime to stop. The workload's own
/// failure is reported first, then the second runtime's.
pub(super) fn with_peer<R: Adapter>(
    config: &RtConfig,
    serve: Serve,
    timed: impl FnOnce(Tx<R>, Rx<R>) -> Outcome,
) -> Outcome {
    let (thread, requests, answers) = match start_peer::<R>(config, serve) {
        Ok(started) => started,
        Err(why) => return Outcome::Failed(why),
    };
    // The work owns the only requests' sender: when it ends (or fails), the serving task sees
    // the channel close and the second runtime's thread returns.
    let outcome = timed(requests, answers);
    let served = thread.join().unwrap_or_else(|_| Err("the second runtime's serving task panicked".into()));
    match (outcome, served) {
        (Outcome::Time(t), Ok(())) => Outcome::Time(t),
        (Outcome::Time(_), Err(why)) => Outcome::Failed(why),
        (other, _) => other,
    }
}

/// `cross_runtime_ping`: N requests from a task on this runtime to a task on a second one,
/// one outstanding, each answered (`v + 1`, checked): two cross-runtime wakes per request.
pub async fn ping<R: Adapter>(requests: Tx<R>, mut answers: Rx<R>, n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        for i in 0..n {
            Kit::<R>::send(&requests, i).await.map_err(|_| "the second runtime stopped serving".to_string())?;
            let answer = Kit::<R>::recv(&mut answers).await.ok_or("the second runtime stopped answering")?;
            expect_eq("answer", answer, i + 1)?;
        }
        Ok(())
    })
    .await
}

/// `cross_runtime_stream`: N values from a task on this runtime to a task on a second one
/// through a bounded(64) channel; the second answers with their sum once the stream ends.
pub async fn stream<R: Adapter>(requests: Tx<R>, mut answers: Rx<R>, n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        for i in 0..n {
            Kit::<R>::send(&requests, i).await.map_err(|_| "the second runtime stopped serving".to_string())?;
        }
        drop(requests);
        let sum = Kit::<R>::recv(&mut answers).await.ok_or("the second runtime sent no sum")?;
        expect_eq("sum received", sum, n * n.saturating_sub(1) / 2)
    })
    .await
}
