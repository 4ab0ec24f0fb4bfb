//! A minimal blocking HTTP/1.1 client for checks made before any timing: the agents study's
//! pre-flight against a model server, `axum-ab`'s route checks. Never on a measured path.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

/// The body every hello server in the lab answers with (`http-hello`'s servers, and the
/// probes that check one is up before idle connections are opened to it).
pub const HELLO_BODY: &[u8] = b"Hello, world!";

/// One request over a fresh connection (`connection: close`): the status and the body,
/// de-chunked. Errors name `http://{authority}`.
pub fn exchange(
    addr: SocketAddr,
    authority: &str,
    method: &str,
    path: &str,
    body: &str,
) -> Result<(u16, String), String> {
    let base = format!("http://{authority}");
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| format!("{}: cannot connect ({e}); is the server running?", base))?;
    s.set_read_timeout(Some(Duration::from_secs(120))).map_err(|e| e.to_string())?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        authority,
        body.len()
    );
    s.write_all(req.as_bytes()).map_err(|e| format!("{}: {e}", base))?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| format!("{}: reading the answer: {e}", base))?;
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text.split_once("\r\n\r\n").ok_or_else(|| format!("{}: not an HTTP answer", base))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("{}: bad status line", base))?;
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        let mut out = String::new();
        let mut rest = rest;
        while let Some((size, after)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 || after.len() < n {
                break;
            }
            out.push_str(&after[..n]);
            rest = after[n..].trim_start_matches("\r\n");
        }
        out
    } else {
        rest.to_string()
    };
    Ok((status, body))
}
