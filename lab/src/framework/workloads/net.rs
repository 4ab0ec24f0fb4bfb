//! Network workloads on each runtime's own sockets over loopback (127.0.0.1 only):
//! `tcp_echo` — concurrent connections echoing fixed-size messages.

use super::{expect_eq, inside, join_sum};
use crate::framework::adapter::{Adapter, Net};

/// Connections in `tcp_echo`.
pub const TCP_ECHO_CONNECTIONS: u64 = 64;
/// Bytes per `tcp_echo` message.
pub const TCP_ECHO_MESSAGE: usize = 256;

/// `tcp_echo`: 64 connections share N round trips of a 256-byte message (each client waits
/// for its echo before sending the next); every echoed byte is checked.
pub async fn tcp_echo<R: Adapter>(n: u64) -> Result<(), String> {
    inside::<R, _>(async move { echo_session::<R>(n, TCP_ECHO_CONNECTIONS, false).await.map(drop) }).await
}

/// The echo session behind `tcp_echo` (and `weft-lab tcp-echo`, which also wants each round
/// trip's latency, over `connections` connections): returns the round-trip times in
/// nanoseconds when `record_latency`, else an empty vector, after validating that all `n`
/// round trips came back intact. Call it from inside a task on the runtime.
pub async fn echo_session<R: Adapter>(n: u64, connections: u64, record_latency: bool) -> Result<Vec<u64>, String> {
    let conns = connections.max(1).min(n.max(1));
    let (listener, addr) = <R::Net as Net>::bind_loopback().await.map_err(|e| format!("bind: {e}"))?;
    let server = R::spawn(async move {
        let mut handlers = Vec::with_capacity(conns as usize);
        for _ in 0..conns {
            let Ok(mut s) = <R::Net as Net>::accept(&listener).await else { break };
            handlers.push(R::spawn(async move {
                let mut buf = [0u8; TCP_ECHO_MESSAGE];
                let mut echoed = 0u64;
                // Until the client hangs up (read_exact then fails with EOF).
                while <R::Net as Net>::read_exact(&mut s, &mut buf).await.is_ok() {
                    if <R::Net as Net>::write_all(&mut s, &buf).await.is_err() {
                        break;
                    }
                    echoed += 1;
                }
                echoed
            }));
        }
        handlers
    });
    let per_conn = n / conns;
    let extra = n % conns;
    let clients: Vec<_> = (0..conns)
        .map(|c| {
            let rounds = per_conn + u64::from(c < extra);
            R::spawn(async move {
                let mut latencies = Vec::with_capacity(if record_latency { rounds as usize } else { 0 });
                let Ok(mut s) = <R::Net as Net>::connect(addr).await else { return (0, latencies) };
                let mut msg = [0u8; TCP_ECHO_MESSAGE];
                let mut back = [0u8; TCP_ECHO_MESSAGE];
                let mut ok = 0u64;
                for r in 0..rounds {
                    msg.fill((c as u8).wrapping_add(r as u8));
                    let start = record_latency.then(std::time::Instant::now);
                    if <R::Net as Net>::write_all(&mut s, &msg).await.is_err()
                        || <R::Net as Net>::read_exact(&mut s, &mut back).await.is_err()
                    {
                        break;
                    }
                    if let Some(start) = start {
                        latencies.push(start.elapsed().as_nanos() as u64);
                    }
                    ok += u64::from(back == msg);
                }
                (ok, latencies)
            })
        })
        .collect();
    let mut echoed_ok = 0;
    let mut latencies = Vec::new();
    for client in clients {
        let (ok, lat) = R::join(client).await.map_err(|_| "an echo client panicked".to_string())?;
        echoed_ok += ok;
        latencies.extend(lat);
    }
    let handlers = R::join(server).await.map_err(|_| "the accept task panicked".to_string())?;
    let served = join_sum::<R>(handlers).await?;
    expect_eq("round trips echoed intact", echoed_ok, n)?;
    expect_eq("messages the servers echoed", served, n)?;
    Ok(latencies)
}
