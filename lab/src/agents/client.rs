//! The agents' HTTP-client adapter: one small trait ([`HttpClient`]: POST a JSON body, get a
//! status and a byte stream) with two real implementations — hyper 1.x over each runtime's own
//! sockets ([`HyperClient`], no tokio runtime for weft), and reqwest ([`ReqwestClient`]), either
//! native on tokio or on another runtime through a *reactor bridge* — plus the NDJSON reader
//! with its typed errors and idle timeout ([`stream_call`]).
//!
//! The response future and body are boxed once per call (not per token): the agent code is then
//! written once for every client, and a per-call allocation is noise next to a streamed answer.

use std::future::{poll_fn, Future};
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_lite::Stream;

use crate::framework::adapter::{Adapter, Net};

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
    fn post<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        path: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<HttpResponse, String>>;
}

/// hyper 1.x's HTTP/1.1 client connection over runtime `R`'s own TCP stream (one connection
/// per call; the connection task runs on `R`).
pub struct HyperClient<R>(PhantomData<fn() -> R>);

impl<R> Default for HyperClient<R> {
    fn default() -> Self {
        HyperClient(PhantomData)
    }
}

impl<R: Adapter> HttpClient for HyperClient<R> {
    fn post<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        path: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<HttpResponse, String>> {
        Box::pin(async move {
            let stream =
                <R::Net as Net>::connect(endpoint.addr).await.map_err(|e| format!("connect {}: {e}", endpoint.base))?;
            let io = <R::Net as Net>::hyper_io(stream);
            let (mut sender, conn) =
                hyper::client::conn::http1::handshake(io).await.map_err(|e| format!("handshake: {e}"))?;
            R::detach(R::spawn(async move {
                let _ = conn.await;
            }));
            let req = hyper::Request::post(path)
                .header("host", endpoint.authority.as_str())
                .header("content-type", "application/json")
                .body(http_body_util::Full::new(Bytes::from(body)))
                .map_err(|e| e.to_string())?;
            let resp = sender.send_request(req).await.map_err(|e| format!("request: {e}"))?;
            let status = resp.status().as_u16();
            Ok(HttpResponse { status, body: Box::pin(IncomingStream { body: resp.into_body(), _sender: sender }) })
        })
    }
}

struct IncomingStream {
    body: hyper::body::Incoming,
    _sender: hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>>,
}

impl Stream for IncomingStream {
    type Item = Result<Bytes, String>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        use hyper::body::Body;
        loop {
            return match std::task::ready!(Pin::new(&mut self.body).poll_frame(cx)) {
                None => Poll::Ready(None),
                Some(Err(e)) => Poll::Ready(Some(Err(e.to_string()))),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(d) if d.is_empty() => continue,
                    Ok(d) => Poll::Ready(Some(Ok(d))),
                    Err(_) => continue, // trailers
                },
            };
        }
    }
}

/// How reqwest finds a tokio reactor when the host runtime is not tokio (`--bridge`).
///
/// Measured 2026-11-23 on the 2-core shared box, quick profile, the two bridges alternated
/// (enter, compat, enter, compat), each run with weft-mt as the interleaved peer:
/// `weft-lab agents --quiet --runtimes weft-mt,weft-mt+reqwest --configs 3 --runs 3 --agents 32
/// --bridge B`. 2-agent mean efficiency, weft-mt+reqwest − weft-mt: enter −0.25 / +0.15 pp,
/// async-compat +0.19 / +0.17 pp. 32-agent fleet, client CPU per token: enter 17.7 / 16.6 µs
/// (peer 14.0 / 11.5), async-compat 16.7 / 16.0 µs (peer 14.9 / 15.7); efficiency − peer:
/// enter −1.7 / −0.4 pp, async-compat −1.0 / −1.9 pp. The two are within the noise (the peer
/// alone moves 11.5–15.7 µs), so `enter` stays the default: its runtime is built and dropped
/// with each run (the lab's one-runtime-alive rule), async-compat's lives until exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BridgeKind {
    /// Every poll runs inside `Handle::enter` of a lab-owned multi-thread tokio runtime
    /// (`--bridge-workers` threads, built and dropped with each run).
    Enter,
    /// The `async-compat` crate: each poll enters its global one-thread tokio runtime
    /// (`async-compat/tokio-1`), created on first use and never dropped.
    AsyncCompat,
}

impl BridgeKind {
    pub fn name(self) -> &'static str {
        match self {
            BridgeKind::Enter => "enter",
            BridgeKind::AsyncCompat => "async-compat",
        }
    }
    pub fn by_name(s: &str) -> Option<BridgeKind> {
        [BridgeKind::Enter, BridgeKind::AsyncCompat].into_iter().find(|b| b.name() == s)
    }
}

/// Where reqwest's polls find their tokio context.
#[derive(Clone)]
pub enum Bridge {
    /// Already on a tokio runtime.
    Native,
    Enter(tokio::runtime::Handle),
    AsyncCompat,
}

/// reqwest, natively (on a tokio runtime) or through a tokio reactor bridge: every poll of
/// reqwest's futures and streams runs inside the bridge's tokio context, so reqwest finds a
/// reactor and timer and spawns its connection tasks onto the bridge runtime's workers, while
/// the agent futures themselves stay on the host runtime.
#[derive(Clone)]
pub struct ReqwestClient {
    client: reqwest::Client,
    bridge: Bridge,
    /// Re-chunk the body into ≥ 1 KB blocks (TR115's "smol-1KB").
    rechunk_1kb: bool,
}

impl ReqwestClient {
    pub fn new(bridge: Option<tokio::runtime::Handle>, rechunk_1kb: bool) -> Result<ReqwestClient, String> {
        ReqwestClient::with_bridge(bridge.map_or(Bridge::Native, Bridge::Enter), rechunk_1kb)
    }

    pub fn with_bridge(bridge: Bridge, rechunk_1kb: bool) -> Result<ReqwestClient, String> {
        let client = reqwest::Client::builder().no_proxy().build().map_err(|e| format!("building reqwest: {e}"))?;
        Ok(ReqwestClient { client, bridge, rechunk_1kb })
    }
}

impl HttpClient for ReqwestClient {
    fn post<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        path: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<HttpResponse, String>> {
        let send = self
            .client
            .post(format!("{}{path}", endpoint.base))
            .header("content-type", "application/json")
            .body(body)
            .send();
        let bridge = self.bridge.clone();
        let rechunk = self.rechunk_1kb;
        Box::pin(async move {
            let resp =
                Bridged { bridge: bridge.clone(), inner: Box::pin(send) }.await.map_err(|e| format!("request: {e}"))?;
            let status = resp.status().as_u16();
            let stream = futures_lite::StreamExt::map(resp.bytes_stream(), |r| r.map_err(|e| e.to_string()));
            let stream = Bridged { bridge, inner: Box::pin(stream) };
            let body: ByteStream = if rechunk {
                Box::pin(Rechunk { inner: stream, buf: Vec::new(), done: false })
            } else {
                Box::pin(stream)
            };
            Ok(HttpResponse { status, body })
        })
    }
}

/// Polls `inner` inside the bridge's tokio context.
struct Bridged<T> {
    bridge: Bridge,
    inner: Pin<Box<T>>,
}

impl<T> Bridged<T> {
    /// Runs one poll of `inner` in the bridge's context.
    fn in_context<O>(
        &mut self,
        cx: &mut Context<'_>,
        poll: impl FnOnce(Pin<&mut T>, &mut Context<'_>) -> Poll<O>,
    ) -> Poll<O> {
        let inner = self.inner.as_mut();
        match &self.bridge {
            Bridge::Native => poll(inner, cx),
            Bridge::Enter(h) => {
                let _enter = h.enter();
                poll(inner, cx)
            }
            Bridge::AsyncCompat => {
                let mut once = Some((inner, poll));
                let f = async_compat::Compat::new(std::future::poll_fn(move |cx| {
                    let (inner, poll) = once.take().expect("polled once");
                    poll(inner, cx)
                }));
                std::pin::pin!(f).poll(cx)
            }
        }
    }
}

impl<F: Future> Future for Bridged<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.in_context(cx, |f, cx| f.poll(cx))
    }
}

impl<S: Stream> Stream for Bridged<S> {
    type Item = S::Item;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.in_context(cx, |s, cx| s.poll_next(cx))
    }
}

/// Accumulates chunks to at least 1 KB before yielding (the end flushes what is left).
struct Rechunk<S> {
    inner: S,
    buf: Vec<u8>,
    done: bool,
}

impl<S: Stream<Item = Result<Bytes, String>> + Unpin> Stream for Rechunk<S> {
    type Item = Result<Bytes, String>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        while !this.done && this.buf.len() < 1024 {
            match std::task::ready!(Pin::new(&mut this.inner).poll_next(cx)) {
                Some(Ok(b)) => this.buf.extend_from_slice(&b),
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => this.done = true,
            }
        }
        if this.buf.is_empty() {
            return Poll::Ready(None);
        }
        Poll::Ready(Some(Ok(Bytes::from(std::mem::take(&mut this.buf)))))
    }
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
async fn idle_race<R: Adapter, T>(
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
pub async fn stream_call<R: Adapter, C: HttpClient + ?Sized>(
    client: &C,
    endpoint: &Endpoint,
    path: &str,
    body: Vec<u8>,
    idle: Duration,
) -> Result<CallStats, CallError> {
    let start = Instant::now();
    let mut sleep = None;
    let resp = idle_race::<R, _>(client.post(endpoint, path, body), idle, start, &mut sleep)
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
