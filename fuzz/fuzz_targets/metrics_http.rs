//! weft's metrics endpoint (`weft::metrics::serve`), over real TCP on loopback: any bytes a
//! client sends get a response or a closed connection within a bound (never a hang), and the
//! endpoint keeps serving a well-formed scrape afterwards.
#![no_main]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;

/// One runtime serving the endpoint for the whole run (kept in a static: reachable, not leaked).
fn endpoint() -> SocketAddr {
    static SERVER: OnceLock<(weft::runtime::Runtime, SocketAddr)> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let rt = weft::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
            let addr = rt.block_on(weft::metrics::serve("127.0.0.1:0".parse().unwrap())).unwrap();
            (rt, addr)
        })
        .1
}

/// Sends `bytes`, half-closes if `half_close` (so that a partial request ends at once: hyper
/// closes on EOF, answered or not), and reads until the server closes; the response bytes.
fn exchange(bytes: &[u8], half_close: bool) -> Vec<u8> {
    let start = Instant::now();
    let mut s = TcpStream::connect(endpoint()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // The server may close early on garbage: a failed write is an answer too.
    let _ = s.write_all(bytes);
    if half_close {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("no answer and no close within {:?}: {e}", start.elapsed()),
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let reply = exchange(data, true);
    if !reply.is_empty() {
        assert!(reply.starts_with(b"HTTP/1."), "a reply that is not HTTP: {:?}", String::from_utf8_lossy(&reply));
    }
    // Still serving: a well-formed scrape after every input.
    let ok = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false);
    assert!(ok.starts_with(b"HTTP/1.1 200"), "the endpoint stopped serving: {:?}", String::from_utf8_lossy(&ok));
});
