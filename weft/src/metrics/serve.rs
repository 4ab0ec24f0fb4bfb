//! `serve`: the metrics endpoint, an HTTP/1.1 server (hyper, through `crate::hyper`) running
//! as ordinary tasks on the runtime it reports on. `GET /metrics` answers the text format
//! 0.0.4, or OpenMetrics when the `Accept` header asks for `application/openmetrics-text`
//! (and the `openmetrics` feature is on); `GET /tasks` answers the task dump as JSON
//! (`tasks.rs`); anything else is a 404.
//!
//! Loopback only: the endpoint has no authentication, and runtime internals (task counts,
//! timings) are not for the network at large; a non-loopback address is refused.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};

use crate::hyper::{WeftIo, WeftTimer};
use crate::net::TcpListener;
use crate::runtime::{Handle, RuntimeMetrics};

/// Binds `addr` (a loopback address; port 0 picks a free one) and serves the current
/// runtime's metrics on it from a spawned task. Returns the bound address.
///
/// weft only (tokio has no exporter). Errors: `InvalidInput` for a non-loopback address, or
/// the bind error. Panics outside a runtime.
pub async fn serve(addr: SocketAddr) -> io::Result<SocketAddr> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("weft::metrics::serve binds loopback addresses only (got {addr}); use 127.0.0.1 or ::1"),
        ));
    }
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    crate::spawn(accept_loop(listener, Handle::current()));
    Ok(local)
}

async fn accept_loop(listener: TcpListener, handle: Handle) {
    let metrics = handle.metrics();
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // Out of fds, a reset before accept: keep serving, after a pause when timers run
            // (the listener stays readable while the process is out of fds: an immediate retry
            // would spin a worker at 100%).
            Err(_) => {
                if handle.inner.driver().time().is_some() {
                    crate::time::sleep(std::time::Duration::from_millis(50)).await;
                } else {
                    crate::task::yield_now().await;
                }
                continue;
            }
        };
        let (metrics, handle) = (metrics.clone(), handle.clone());
        crate::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let response = respond(&req, &metrics, &handle);
                async move { Ok::<_, Infallible>(response) }
            });
            // A broken connection only ends itself.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(WeftTimer::new())
                .header_read_timeout(std::time::Duration::from_secs(10))
                .serve_connection(WeftIo::new(stream), service)
                .await;
        });
    }
}

fn respond<B>(req: &Request<B>, metrics: &RuntimeMetrics, handle: &Handle) -> Response<Full<Bytes>> {
    if req.method() == hyper::Method::GET && req.uri().path() == "/tasks" {
        let body = super::tasks::render_json(&handle.dump_tasks());
        let mut r = Response::new(Full::new(Bytes::from(body)));
        let content_type = hyper::header::HeaderValue::from_static(super::tasks::CONTENT_TYPE);
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, content_type);
        return r;
    }
    if req.method() != hyper::Method::GET || req.uri().path() != "/metrics" {
        let mut r = Response::new(Full::new(Bytes::from_static(b"not found: try GET /metrics or GET /tasks\n")));
        *r.status_mut() = StatusCode::NOT_FOUND;
        return r;
    }
    let wants_openmetrics = req
        .headers()
        .get_all(hyper::header::ACCEPT)
        .iter()
        .any(|v| v.to_str().is_ok_and(|s| s.contains("application/openmetrics-text")));
    let (body, content_type) = render(metrics, wants_openmetrics);
    let mut r = Response::new(Full::new(Bytes::from(body)));
    r.headers_mut().insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static(content_type));
    r
}

#[cfg(feature = "openmetrics")]
fn render(metrics: &RuntimeMetrics, openmetrics: bool) -> (String, &'static str) {
    if openmetrics {
        (super::openmetrics::render(metrics), super::openmetrics::CONTENT_TYPE)
    } else {
        (super::text::render(metrics), super::text::CONTENT_TYPE)
    }
}

#[cfg(not(feature = "openmetrics"))]
fn render(metrics: &RuntimeMetrics, _openmetrics: bool) -> (String, &'static str) {
    (super::text::render(metrics), super::text::CONTENT_TYPE)
}
