//! hyper 1.x client ↔ server on weft, HTTP/1.1 (chunked streaming body) and HTTP/2, with no
//! tokio runtime in the process: every task, timer and socket here is weft's. Built on its
//! own (`cargo test -p weft`), the `tokio` crate does not even have its `rt` feature
//! (weft enables `io-util` only; `cargo tree -p weft -e features -i tokio` shows it), so no
//! tokio runtime *can* exist; in a workspace build the lab's tokio features are unified in,
//! but nothing here creates one.
#![cfg(feature = "hyper")]

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use weft::hyper::{WeftConnector, WeftExecutor, WeftIo, WeftTimer};
use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, Runtime};
use weft::task::JoinHandle;

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        ("current_thread", Builder::new_current_thread().enable_all().build().unwrap()),
        ("multi_thread", Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()),
    ]
}

/// Echoes the request body back, streamed, and counts bytes in a header-free way.
async fn echo(
    req: Request<Incoming>,
) -> Result<Response<http_body_util::combinators::BoxBody<Bytes, hyper::Error>>, Infallible> {
    match req.uri().path() {
        "/hello" => Ok(Response::new(
            Full::new(Bytes::from_static(b"Hello, world!")).map_err(|n: Infallible| match n {}).boxed(),
        )),
        _ => Ok(Response::new(req.into_body().boxed())),
    }
}

async fn server(http2: bool) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    weft::spawn(async move {
        loop {
            let Ok((s, _)) = listener.accept().await else { return };
            weft::spawn(async move {
                let svc = hyper::service::service_fn(echo);
                let _ = if http2 {
                    hyper::server::conn::http2::Builder::new(WeftExecutor::new())
                        .timer(WeftTimer::new())
                        .serve_connection(WeftIo::new(s), svc)
                        .await
                } else {
                    hyper::server::conn::http1::Builder::new()
                        .timer(WeftTimer::new())
                        .serve_connection(WeftIo::new(s), svc)
                        .await
                };
            });
        }
    });
    addr
}

/// A server for one HTTP/1.1 connection, with hyper's header read timeout `header_timeout`:
/// its address, and the task that returns how serving the connection ended.
async fn serve_one_http1(header_timeout: Duration) -> (std::net::SocketAddr, JoinHandle<hyper::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = weft::spawn(async move {
        let (s, _) = listener.accept().await.unwrap();
        hyper::server::conn::http1::Builder::new()
            .timer(WeftTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(WeftIo::new(s), hyper::service::service_fn(echo))
            .await
    });
    (addr, server)
}

fn chunked_body(
    chunks: usize,
    size: usize,
) -> StreamBody<impl futures::Stream<Item = Result<Frame<Bytes>, Infallible>>> {
    let stream = futures::stream::iter((0..chunks).map(move |i| Ok(Frame::data(Bytes::from(vec![i as u8; size])))));
    StreamBody::new(stream)
}

fn round_trip(http2: bool) {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let addr = server(http2).await;
            let client = Client::builder(WeftExecutor::new())
                .timer(WeftTimer::new())
                .pool_timer(WeftTimer::new())
                .http2_only(http2)
                .build::<_, http_body_util::combinators::BoxBody<Bytes, Infallible>>(WeftConnector::new());
            // Small request.
            let resp = client
                .request(
                    Request::get(format!("http://{addr}/hello")).body(http_body_util::Empty::new().boxed()).unwrap(),
                )
                .await
                .unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.version(), if http2 { hyper::Version::HTTP_2 } else { hyper::Version::HTTP_11 });
            let body = resp.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(&body[..], b"Hello, world!", "{name}");
            // Streaming (chunked on HTTP/1.1) body of 64 × 16 KiB, echoed back streamed.
            let req = Request::post(format!("http://{addr}/echo")).body(chunked_body(64, 16 * 1024).boxed()).unwrap();
            let resp = client.request(req).await.unwrap();
            if !http2 {
                assert_eq!(
                    resp.headers().get("transfer-encoding").map(|v| v.to_str().unwrap()),
                    Some("chunked"),
                    "{name}"
                );
            }
            let body = resp.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(body.len(), 64 * 16 * 1024, "{name}");
            for (i, chunk) in body.chunks(16 * 1024).enumerate() {
                assert!(chunk.iter().all(|&b| b == i as u8), "{name}: chunk {i}");
            }
            // Many concurrent requests over the pool (HTTP/2: one multiplexed connection).
            let mut hs = Vec::new();
            for _ in 0..50 {
                let c = client.clone();
                hs.push(weft::spawn(async move {
                    let resp = c
                        .request(
                            Request::get(format!("http://{addr}/hello"))
                                .body(http_body_util::Empty::new().boxed())
                                .unwrap(),
                        )
                        .await
                        .unwrap();
                    resp.into_body().collect().await.unwrap().to_bytes().len()
                }));
            }
            for h in hs {
                assert_eq!(h.await.unwrap(), 13);
            }
        });
    }
}

#[test]
fn http1_client_server_round_trip_with_chunked_streaming() {
    round_trip(false);
}

#[test]
fn http2_client_server_round_trip() {
    round_trip(true);
}

#[test]
fn malformed_http_is_a_typed_parse_error() {
    let rt = Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (addr, server) = serve_one_http1(Duration::from_secs(2)).await;
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(b"NOT HTTP AT ALL \x00\x01\r\n\r\n").await.unwrap();
        let mut reply = Vec::new();
        let _ = weft::time::timeout(Duration::from_secs(5), c.read_to_end(&mut reply)).await.expect("server closes");
        let err = server.await.unwrap().unwrap_err();
        assert!(err.is_parse(), "expected a parse error, got {err:?}");
        assert!(String::from_utf8_lossy(&reply).starts_with("HTTP/1.1 400"), "{:?}", String::from_utf8_lossy(&reply));

        // A client talking to a server that answers garbage gets a typed error too.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        weft::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf).await;
            let _ = s.write_all(b"garbage garbage\r\n\r\n").await;
        });
        let client = Client::builder(WeftExecutor::new())
            .timer(WeftTimer::new())
            .build::<_, http_body_util::Empty<Bytes>>(WeftConnector::new());
        let err = client
            .request(Request::get(format!("http://{addr}/")).body(http_body_util::Empty::new()).unwrap())
            .await
            .unwrap_err();
        let src = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<hyper::Error>());
        assert!(src.is_some_and(|e| e.is_parse()), "{err:?}");
    });
}

#[test]
fn header_read_timeout_closes_a_silent_client() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (addr, server) = serve_one_http1(Duration::from_millis(100)).await;
        let mut c = TcpStream::connect(addr).await.unwrap();
        c.write_all(b"GET / HTT").await.unwrap(); // then silence
        let r = weft::time::timeout(Duration::from_secs(5), server).await.expect("timer fired");
        assert!(r.unwrap().is_err());
    });
}

#[test]
fn timer_reset_reuses_the_sleep() {
    use hyper::rt::Timer;
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let t = WeftTimer::new();
        let mut s = t.sleep(Duration::from_secs(60));
        let before = &*s as *const dyn hyper::rt::Sleep as *const () as usize;
        t.reset(&mut s, std::time::Instant::now() + Duration::from_millis(10));
        let after = &*s as *const dyn hyper::rt::Sleep as *const () as usize;
        assert_eq!(before, after, "reset must re-arm in place, not allocate a new Sleep");
        weft::time::timeout(Duration::from_secs(2), s).await.expect("reset deadline honoured");
    });
}
