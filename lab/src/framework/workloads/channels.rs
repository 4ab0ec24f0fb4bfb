//! Channel workloads, each on the runtime's *own* channels (`Adapter::Channels`): a runtime
//! without channels reports these rows as "not yet" (the runner checks before calling).

use super::{expect_eq, inside, join_sum};
use crate::framework::adapter::{Adapter, BroadcastEnd, Channels};

/// Capacity of the bounded channel in the mpsc workloads.
pub const MPSC_CAPACITY: usize = 1_024;
/// Producers in `mpsc_contended` (report 004, *smarm — Benchmarks & Tuning Recommendations*,
/// docs/notes/reference-reports.md: 10 producers).
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

/// Receivers in `broadcast_fanout`.
pub const FANOUT_RECEIVERS: u64 = 16;

/// `broadcast_fanout`: one sender broadcasts N values to 16 receiver tasks; each receiver
/// checks it got all N, in order. The channel holds N values so that no runtime's receivers
/// can lag (a lag would skip work, and fails validation).
pub async fn broadcast_fanout<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let (tx, first) = Kit::<R>::broadcast::<u64>(n.max(1) as usize);
        let mut receivers = vec![first];
        receivers.extend((1..FANOUT_RECEIVERS).map(|_| Kit::<R>::subscribe(&tx)));
        let handles: Vec<_> = receivers
            .into_iter()
            .map(|mut rx| {
                R::spawn(async move {
                    let (mut count, mut sum, mut next) = (0u64, 0u64, 0u64);
                    loop {
                        match Kit::<R>::broadcast_recv(&mut rx).await {
                            Ok(v) => {
                                if v != next {
                                    return u64::MAX; // out of order: fails the count check
                                }
                                next += 1;
                                count += 1;
                                sum = sum.wrapping_add(v);
                            }
                            Err(BroadcastEnd::Closed) => break,
                            Err(BroadcastEnd::Lagged) => return u64::MAX,
                        }
                    }
                    if sum == n * n.saturating_sub(1) / 2 {
                        count
                    } else {
                        u64::MAX
                    }
                })
            })
            .collect();
        for i in 0..n {
            Kit::<R>::broadcast_send(&tx, i).await.map_err(|_| "every receiver is gone".to_string())?;
        }
        drop(tx);
        let mut received = 0u64;
        for h in handles {
            let got = R::join(h).await.map_err(|_| "a receiver panicked".to_string())?;
            expect_eq("values one receiver got, in order, with the right sum", got, n)?;
            received += got;
        }
        expect_eq("values received in all", received, n * FANOUT_RECEIVERS)
    })
    .await
}
