//! `http-hello`'s load: the built-in client (a two-worker tokio runtime in the lab's process,
//! one request in flight per keep-alive connection, every latency kept and every response
//! checked) or `wrk` (`framework::wrk`, its Lua script checking every response).

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use super::BODY;
use crate::framework::{stats, wrk};

/// Which client drives the servers (`--load`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// The lab's own client (a tokio runtime in this process; every latency kept).
    Builtin,
    /// `wrk` with its Lua check of every response (`apt-get install wrk`).
    Wrk,
}

/// How the servers are loaded.
#[derive(Clone, Copy)]
pub struct LoadSpec<'a> {
    /// wrk's script when wrk is the load; `None`: the built-in client.
    pub wrk: Option<&'a Path>,
    pub connections: usize,
    pub idle: usize,
}

impl LoadSpec<'_> {
    /// The load generator's name in the table and the JSON.
    pub(super) fn name(&self) -> &'static str {
        if self.wrk.is_some() {
            "wrk"
        } else {
            "builtin"
        }
    }
}

/// What one round's load measured.
pub(super) struct LoadOut {
    /// Every request's latency in µs (the built-in client only).
    pub(super) latencies_us: Vec<f64>,
    pub(super) requests: u64,
    /// Connections that failed (built-in), or wrk's errors and failed checks.
    pub(super) errors: u64,
    /// The load's wall time.
    pub(super) took: Duration,
    pub(super) p50_us: f64,
    pub(super) p99_us: f64,
    pub(super) p999_us: f64,
}

/// The built-in load generator: `connections` keep-alive connections, one request in flight each.
fn drive(addr: SocketAddr, connections: usize, duration: Duration) -> Result<LoadOut, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let start = Instant::now();
        let deadline = start + duration;
        let tasks: Vec<_> = (0..connections).map(|_| tokio::spawn(client(addr, deadline))).collect();
        let mut all = Vec::new();
        let mut errors = 0;
        for t in tasks {
            match t.await {
                Ok(Ok(lat)) => all.extend(lat),
                Ok(Err(_)) | Err(_) => errors += 1,
            }
        }
        let took = start.elapsed();
        let us: Vec<f64> = all.iter().map(|d| d.as_nanos() as f64 / 1_000.0).collect();
        Ok(LoadOut {
            requests: us.len() as u64,
            errors,
            took,
            p50_us: stats::percentile(&us, 50.0),
            p99_us: stats::percentile(&us, 99.0),
            p999_us: stats::percentile(&us, 99.9),
            latencies_us: us,
        })
    })
}

async fn client(addr: SocketAddr, deadline: Instant) -> Result<Vec<Duration>, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    let request = b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
    let mut lat = Vec::with_capacity(1 << 16);
    let mut buf = vec![0u8; 4096];
    while Instant::now() < deadline {
        let t0 = Instant::now();
        s.write_all(request).await.map_err(|e| e.to_string())?;
        // Read one response: headers, then a Content-Length body.
        let mut have = 0;
        let (head_end, body_len) = loop {
            let n = s.read(&mut buf[have..]).await.map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("server closed the connection".into());
            }
            have += n;
            if let Some(end) = find(&buf[..have], b"\r\n\r\n") {
                let head = std::str::from_utf8(&buf[..end]).map_err(|_| "non-UTF-8 head")?;
                if !head.starts_with("HTTP/1.1 200") {
                    return Err(format!("bad status: {head}"));
                }
                let len = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>())
                    })
                    .ok_or("no content-length")?
                    .map_err(|_| "bad content-length")?;
                break (end + 4, len);
            }
            if have == buf.len() {
                return Err("response head too large".into());
            }
        };
        while have < head_end + body_len {
            let n = s.read(&mut buf[have..]).await.map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("server closed mid-body".into());
            }
            have += n;
        }
        if &buf[head_end..head_end + body_len] != BODY || have != head_end + body_len {
            return Err("wrong body".into());
        }
        lat.push(t0.elapsed());
    }
    Ok(lat)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One round's load against the server at `addr` (wrk rounds `duration` up to whole seconds).
pub(super) fn run(spec: LoadSpec, addr: SocketAddr, duration: Duration) -> Result<LoadOut, String> {
    match spec.wrk {
        None => drive(addr, spec.connections, duration),
        Some(script) => {
            let s = wrk::Wrk::start(script, addr, spec.connections, duration, &["/"], 0)?.finish()?;
            Ok(LoadOut {
                latencies_us: Vec::new(),
                requests: s.requests,
                errors: s.errors + s.bad,
                took: s.took,
                p50_us: s.p50_us,
                p99_us: s.p99_us,
                p999_us: s.p999_us,
            })
        }
    }
}
