//! The streamed model call over any lab runtime: hyper 1.x's HTTP/1.1 client on the runtime's
//! own TCP stream, and the workflow's timer from the runtime's adapter. The agents study's
//! hyper rows use it, and so does the simulator's capacity measurement.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_lite::Stream;
use weft_lab_agent::stream::{BoxFuture, HttpClient, HttpResponse, Post};

use crate::framework::adapter::{Adapter, Net};

/// The workflow's timer, from a lab runtime adapter.
pub struct AdapterSleep<R>(PhantomData<fn() -> R>);

impl<R: Adapter> weft_lab_agent::Sleep for AdapterSleep<R> {
    fn sleep(duration: std::time::Duration) -> impl Future<Output = ()> + Send {
        R::sleep(duration)
    }
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
    fn post<'a>(&'a self, req: Post<'a>) -> BoxFuture<'a, Result<HttpResponse, String>> {
        let Post { endpoint, path, body } = req;
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
