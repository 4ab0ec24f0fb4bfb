//! The agents' HTTP clients: two real implementations of the workflow's
//! [`HttpClient`](weft_lab_agent::stream::HttpClient) — hyper 1.x over each runtime's own
//! sockets ([`HyperClient`], no tokio runtime for weft; it lives beside the simulator in
//! `framework::ollama`), and reqwest ([`ReqwestClient`]), either
//! native on tokio or on another runtime through a *reactor bridge*. The streamed call itself
//! and its types live in `weft_lab_agent::stream` (re-exported here), written once for the lab
//! and for the patched reqwest child.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_lite::Stream;

pub use weft_lab_agent::plan::BridgeKind;
pub use weft_lab_agent::stream::*;

pub use crate::framework::ollama::client::{AdapterSleep, HyperClient};

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
    /// Re-chunk the body into ≥ 1 KB blocks (the "smol-1KB" runtime of TR115, *Technical Report
    /// 115 v2: Rust Async Runtime Performance Deep Dive*; docs/notes/reference-reports.md).
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
    fn post<'a>(&'a self, req: Post<'a>) -> BoxFuture<'a, Result<HttpResponse, String>> {
        let Post { endpoint, path, body } = req;
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
