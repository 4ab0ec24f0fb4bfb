//! The streamed LLM call: one small client trait ([`HttpClient`]: POST a JSON body, get a
//! status and a byte stream) and the reader of its answer ([`stream_call`]: Ollama's NDJSON or
//! OpenAI's SSE to the end marker, with typed errors and an idle timeout). Runtime-neutral:
//! the timeout's timer comes from the caller's [`Sleep`](crate::Sleep).
//!
//! The response future and body are boxed once per call (not per token): the agent code is then
//! written once for every client, and a per-call allocation is noise next to a streamed answer.

use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_lite::Stream;

use crate::Sleep;

pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, String>> + Send>>;
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a model server listens.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Endpoint {
    /// `http://host:port` without a trailing slash.
    pub base: String,
    pub addr: SocketAddr,
    /// `host:port` for the Host header.
    pub authority: String,
}

impl Endpoint {
    /// Parses `http://host[:port][/]` and resolves it (plain HTTP only).
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        use std::net::ToSocketAddrs;
        let rest = url.strip_prefix("http://").ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
        let authority = rest.trim_end_matches('/').to_string();
        if authority.is_empty() || authority.contains('/') {
            return Err(format!("{url}: expected http://HOST:PORT"));
        }
        let with_port = if authority.rsplit(':').next().is_some_and(|p| p.parse::<u16>().is_ok()) {
            authority.clone()
        } else {
            format!("{authority}:80")
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| format!("{url}: cannot resolve: {e}"))?
            .next()
            .ok_or_else(|| format!("{url}: resolves to no address"))?;
        Ok(Endpoint { base: format!("http://{authority}"), addr, authority })
    }
}

/// A response: status and the body as it arrives.
pub struct HttpResponse {
    pub status: u16,
    pub body: ByteStream,
}

/// POST a JSON body and stream the answer.
pub trait HttpClient: Send + Sync + 'static {
    fn post<'a>(&'a self, req: Post<'a>) -> BoxFuture<'a, Result<HttpResponse, String>>;
}

/// One JSON `POST`: the server, the path on it, and the body.
pub struct Post<'a> {
    pub endpoint: &'a Endpoint,
    pub path: &'a str,
    pub body: Vec<u8>,
}

/// Why a streamed call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// Connecting or sending failed.
    Connect(String),
    /// A non-200 status; `message` is the JSON `error` text, or the start of a non-JSON body.
    Status { status: u16, message: String },
    /// A line that is not valid JSON.
    Malformed(String),
    /// An `{"error":…}` line inside a 200 stream.
    Server(String),
    /// The body ended (or broke) before the `done` line.
    Truncated(String),
    /// Nothing arrived for the idle timeout.
    Timeout(Duration),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Connect(m) => write!(f, "connection failed: {m}"),
            CallError::Status { status, message } => write!(f, "HTTP {status}: {message}"),
            CallError::Malformed(l) => write!(f, "malformed stream line: {l}"),
            CallError::Server(m) => write!(f, "server error mid-stream: {m}"),
            CallError::Truncated(m) => write!(f, "stream ended before done: {m}"),
            CallError::Timeout(d) => write!(f, "no data for {:.1} s", d.as_secs_f64()),
        }
    }
}

impl std::error::Error for CallError {}

/// One streamed call's measurements.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CallStats {
    pub ttft_ms: f64,
    pub total_ms: f64,
    /// Non-empty chunks received.
    pub tokens: u64,
    /// Tokens after the first ÷ time from first to last token.
    pub client_tok_s: f64,
    pub eval_count: u64,
    pub eval_duration_ns: u64,
    /// `eval_count / eval_duration`.
    pub server_tok_s: f64,
    pub prompt_eval_count: u64,
    pub load_duration_ns: u64,
    /// The streamed text (not serialised).
    #[serde(skip)]
    pub text: String,
}

/// The longest stream line accepted (a token line is ~200 bytes; a final Ollama line with its
/// context array a few KiB).
pub const MAX_LINE: usize = 1 << 20;

/// The OpenAI-compatible streaming endpoint (SSE `data:` events ending in `[DONE]`).
pub const OPENAI_PATH: &str = "/v1/chat/completions";

fn malformed(e: serde_json::Error, line: &[u8]) -> CallError {
    CallError::Malformed(format!("{e}: {:?}", String::from_utf8_lossy(&line[..line.len().min(80)])))
}

#[derive(Default, serde::Deserialize)]
struct Line {
    response: Option<String>,
    message: Option<LineMsg>,
    #[serde(default)]
    done: bool,
    error: Option<serde_json::Value>,
    eval_count: Option<u64>,
    eval_duration: Option<u64>,
    prompt_eval_count: Option<u64>,
    load_duration: Option<u64>,
}

#[derive(serde::Deserialize)]
struct LineMsg {
    #[serde(default)]
    content: String,
}

/// Waits for `fut`, or for `idle` without progress (the sleep is re-armed lazily: one timer
/// per timeout period, not one per chunk).
async fn idle_race<R: Sleep, T>(
    fut: impl Future<Output = T>,
    idle: Duration,
    last: Instant,
    sleep: &mut Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
) -> Result<T, CallError> {
    let mut fut = std::pin::pin!(fut);
    poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Ok(v));
        }
        loop {
            let s = sleep.get_or_insert_with(|| {
                let left = idle.saturating_sub(last.elapsed());
                Box::pin(R::sleep(left))
            });
            if s.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            *sleep = None;
            if last.elapsed() >= idle {
                return Poll::Ready(Err(CallError::Timeout(idle)));
            }
        }
    })
    .await
}

/// POSTs `body` to `path` and reads an Ollama NDJSON stream to its `done` line (or, for
/// [`OPENAI_PATH`], an SSE stream to `data: [DONE]`). Every failure
/// is a typed [`CallError`], at the latest `idle` after the last byte arrived.
pub async fn stream_call<R: Sleep, C: HttpClient + ?Sized>(
    client: &C,
    endpoint: &Endpoint,
    path: &str,
    body: Vec<u8>,
    idle: Duration,
) -> Result<CallStats, CallError> {
    let start = Instant::now();
    let mut sleep = None;
    let resp = idle_race::<R, _>(client.post(Post { endpoint, path, body }), idle, start, &mut sleep)
        .await?
        .map_err(CallError::Connect)?;
    let mut body = resp.body;
    let mut last = Instant::now();
    if resp.status != 200 {
        let mut raw = Vec::new();
        while raw.len() < 4096 {
            match idle_race::<R, _>(futures_lite::StreamExt::next(&mut body), idle, last, &mut sleep).await? {
                Some(Ok(b)) => raw.extend_from_slice(&b),
                _ => break,
            }
            last = Instant::now();
        }
        let message = serde_json::from_slice::<serde_json::Value>(&raw)
            .ok()
            .and_then(|v| v.get("error").map(|e| e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string())))
            .unwrap_or_else(|| format!("non-JSON body: {:?}", String::from_utf8_lossy(&raw[..raw.len().min(200)])));
        return Err(CallError::Status { status: resp.status, message });
    }
    let sse = path == OPENAI_PATH;
    let mut sse_usage: Option<(u64, u64)> = None;
    let mut stats = CallStats::default();
    let mut pending: Vec<u8> = Vec::new();
    let (mut first, mut last_token) = (None::<Instant>, start);
    loop {
        let chunk = match idle_race::<R, _>(futures_lite::StreamExt::next(&mut body), idle, last, &mut sleep).await? {
            Some(Ok(b)) => b,
            Some(Err(e)) => return Err(CallError::Truncated(e)),
            None => return Err(CallError::Truncated("connection closed".into())),
        };
        last = Instant::now();
        pending.extend_from_slice(&chunk);
        if pending.len() > MAX_LINE && !pending.contains(&b'\n') {
            // A server streaming without newlines would grow `pending` without bound.
            return Err(CallError::Malformed(format!("a line longer than {MAX_LINE} bytes")));
        }
        let mut consumed = 0;
        while let Some(nl) = pending[consumed..].iter().position(|&b| b == b'\n') {
            let line = &pending[consumed..consumed + nl];
            consumed += nl + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let (piece, done) = if sse {
                let Some(data) = line.strip_prefix(b"data:") else { continue };
                let data = data.trim_ascii();
                if data == b"[DONE]" {
                    (String::new(), Some(Line::default()))
                } else {
                    let v: serde_json::Value = serde_json::from_slice(data).map_err(|e| malformed(e, line))?;
                    if let Some(e) = v.get("error") {
                        return Err(CallError::Server(
                            e["message"].as_str().map(str::to_string).unwrap_or_else(|| e.to_string()),
                        ));
                    }
                    if let Some(n) = v["usage"]["completion_tokens"].as_u64() {
                        sse_usage = Some((n, v["usage"]["prompt_tokens"].as_u64().unwrap_or(0)));
                    }
                    (v["choices"][0]["delta"]["content"].as_str().unwrap_or("").to_string(), None)
                }
            } else {
                let parsed: Line = serde_json::from_slice(line).map_err(|e| malformed(e, line))?;
                if let Some(e) = parsed.error {
                    return Err(CallError::Server(e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string())));
                }
                let piece =
                    parsed.response.clone().or(parsed.message.as_ref().map(|m| m.content.clone())).unwrap_or_default();
                (piece, parsed.done.then_some(parsed))
            };
            if !piece.is_empty() {
                let now = Instant::now();
                first.get_or_insert(now);
                last_token = now;
                stats.tokens += 1;
                stats.text.push_str(&piece);
            }
            if let Some(parsed) = done {
                let end = Instant::now();
                let first = first.unwrap_or(end);
                stats.ttft_ms = (first - start).as_secs_f64() * 1e3;
                stats.total_ms = (end - start).as_secs_f64() * 1e3;
                let span = (last_token - first).as_secs_f64();
                stats.client_tok_s = if span > 0.0 { (stats.tokens.saturating_sub(1)) as f64 / span } else { 0.0 };
                stats.eval_count = parsed.eval_count.or(sse_usage.map(|u| u.0)).unwrap_or(stats.tokens);
                stats.eval_duration_ns = parsed.eval_duration.unwrap_or(0);
                stats.server_tok_s = if stats.eval_duration_ns > 0 {
                    stats.eval_count as f64 / (stats.eval_duration_ns as f64 / 1e9)
                } else {
                    0.0
                };
                stats.prompt_eval_count = parsed.prompt_eval_count.or(sse_usage.map(|u| u.1)).unwrap_or(0);
                stats.load_duration_ns = parsed.load_duration.unwrap_or(0);
                return Ok(stats);
            }
        }
        pending.drain(..consumed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body of given chunks with status 200.
    struct Canned(Vec<Vec<u8>>);

    impl HttpClient for Canned {
        fn post<'a>(&'a self, _: Post<'a>) -> BoxFuture<'a, Result<HttpResponse, String>> {
            let chunks: Vec<Result<Bytes, String>> = self.0.iter().map(|c| Ok(Bytes::from(c.clone()))).collect();
            Box::pin(
                async move { Ok(HttpResponse { status: 200, body: Box::pin(futures_lite::stream::iter(chunks)) }) },
            )
        }
    }

    struct NeverIdle;

    impl Sleep for NeverIdle {
        fn sleep(_: Duration) -> impl Future<Output = ()> + Send {
            std::future::pending()
        }
    }

    fn call(chunks: Vec<Vec<u8>>) -> Result<CallStats, CallError> {
        let endpoint = Endpoint { base: "http://t".into(), addr: ([127, 0, 0, 1], 9).into(), authority: "t".into() };
        let client = Canned(chunks);
        futures_lite::future::block_on(stream_call::<NeverIdle, _>(
            &client,
            &endpoint,
            "/api/generate",
            Vec::new(),
            Duration::from_secs(3600),
        ))
    }

    /// A server that streams without newlines is cut off at `MAX_LINE`, not buffered forever
    /// (found reading the parser for its fuzz target, `fuzz/fuzz_targets/agent_stream.rs`).
    #[test]
    fn an_endless_line_is_an_error_not_unbounded_memory() {
        let chunks = vec![vec![b'x'; 64 << 10]; 2 * MAX_LINE / (64 << 10)];
        match call(chunks) {
            Err(CallError::Malformed(m)) => assert!(m.contains("longer than"), "{m}"),
            other => panic!("expected a Malformed error, got {other:?}"),
        }
    }

    #[test]
    fn a_stream_split_anywhere_reads_the_same() {
        let body = b"{\"response\":\"He\"}\n{\"response\":\"llo\"}\n{\"done\":true,\"eval_count\":2}\n".to_vec();
        for step in [1, 3, 7, body.len()] {
            let stats = call(body.chunks(step).map(<[u8]>::to_vec).collect()).unwrap();
            assert_eq!((stats.text.as_str(), stats.tokens, stats.eval_count), ("Hello", 2, 2), "chunks of {step}");
        }
    }
}
