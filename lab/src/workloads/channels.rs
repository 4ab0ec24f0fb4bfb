//! Channel workloads, each on the runtime's *own* channels (`Adapter::Channels`): a runtime
//! without channels reports these rows as "not yet" (the runner checks before calling).

use super::{expect_eq, inside, join_sum};
use crate::adapter::{Adapter, Channels};

/// Capacity of the bounded channel in the mpsc workloads.
pub const MPSC_CAPACITY: usize = 1_024;
/// Producers in `mpsc_contended` (report 004: 10 producers).
pub const CONTENDED_PRODUCERS: u64 = 10;

type Kit<R> = <R as Adapter>::Channels;

/// `producers` tasks share `total` messages; the calling task receives and sums them.
async fn mpsc<R: Adapter>(producers: u64, total: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let (tx, mut rx) = Kit::<R>::bounded::<u64>(MPSC_CAPACITY);
        let per = total / producers;
        let handles: Vec<_> = (0..producers)
            .map(|p| {
                let tx = tx.clone();
                R::spawn(async move {
                    for i in p * per..(p + 1) * per {
                        if Kit::<R>::send(&tx, i).await.is_err() {
                            return 0;
                        }
                    }
                    1
                })
            })
            .collect();
        drop(tx);
        let (mut count, mut sum) = (0u64, 0u64);
        while let Some(v) = Kit::<R>::recv(&mut rx).await {
            count += 1;
            sum = sum.wrapping_add(v);
        }
        expect_eq("producers finished", join_sum::<R>(handles).await?, producers)?;
        let sent = per * producers;
        expect_eq("messages received", count, sent)?;
        expect_eq("sum received", sum, sent * sent.saturating_sub(1) / 2)
    })
    .await
}

/// `mpsc_uncontended`: one producer, N messages, bounded 1,024.
pub async fn mpsc_uncontended<R: Adapter>(n: u64) -> Result<(), String> {
    mpsc::<R>(1, n).await
}

/// `mpsc_contended`: ten producers sharing N messages, bounded 1,024.
pub async fn mpsc_contended<R: Adapter>(n: u64) -> Result<(), String> {
    mpsc::<R>(CONTENDED_PRODUCERS, n).await
}

/// `oneshot_ping`: N requests to a responder task, each answered on a fresh oneshot.
pub async fn oneshot_ping<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let (tx, mut rx) = Kit::<R>::bounded::<(u64, <Kit<R> as Channels>::OneshotSender<u64>)>(1);
        let responder = R::spawn(async move {
            let mut answered = 0u64;
            while let Some((v, reply)) = Kit::<R>::recv(&mut rx).await {
                if Kit::<R>::send_once(reply, v + 1).is_ok() {
                    answered += 1;
                }
            }
            answered
        });
        let mut sum = 0u64;
        for i in 0..n {
            let (reply_tx, reply_rx) = Kit::<R>::oneshot();
            Kit::<R>::send(&tx, (i, reply_tx)).await.map_err(|_| "responder gone".to_string())?;
            sum += Kit::<R>::recv_once(reply_rx).await.map_err(|_| "reply dropped".to_string())?;
        }
        drop(tx);
        expect_eq("answers", join_sum::<R>(vec![responder]).await?, n)?;
        expect_eq("sum of answers", sum, n * (n + 1) / 2)
    })
    .await
}
