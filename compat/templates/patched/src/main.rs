//! A small tokio service, unchanged: an axum app on loopback, a raw HTTP/1.1 client written
//! with tokio-util's `LinesCodec` over `tokio::net::TcpStream`, and a tokio-stream wrapper
//! around a `TcpListener`. Built with the `[patch.crates-io]` lines in `Cargo.toml`, every one
//! of those crates runs on weft; the last line proves it with metrics only weft has.

use std::time::Duration;

use axum::{routing::get, Router};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_stream::wrappers::TcpListenerStream;
use tokio_util::codec::{Framed, LinesCodec};

async fn hello() -> &'static str {
    "hello from axum"
}

async fn spawn_blocking_sum() -> String {
    let sum = tokio::task::spawn_blocking(|| (1..=100u64).sum::<u64>()).await.unwrap();
    format!("sum {sum}")
}

#[tokio::main]
async fn main() {
    // axum, served by `axum::serve` on a tokio (= weft) listener.
    let app = Router::new().route("/", get(hello)).route("/sum", get(spawn_blocking_sum));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    for (path, expected) in [("/", "hello from axum"), ("/sum", "sum 5050")] {
        // tokio-util's codec over a tokio socket: the request line by line, the response read
        // as lines until the body.
        let stream = TcpStream::connect(addr).await.unwrap();
        let mut framed = Framed::new(stream, LinesCodec::new());
        framed.send(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n")).await.unwrap();
        let mut lines = Vec::new();
        while let Some(line) = tokio::time::timeout(Duration::from_secs(10), framed.next()).await.unwrap() {
            lines.push(line.unwrap());
        }
        assert!(lines[0].starts_with("HTTP/1.1 200"), "{path}: {lines:?}");
        assert_eq!(lines.last().map(String::as_str), Some(expected), "{path}: {lines:?}");
    }

    // tokio-stream's listener wrapper: accept one connection as a stream item.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut incoming = TcpListenerStream::new(listener);
    let connect = tokio::spawn(async move { TcpStream::connect(addr).await.unwrap() });
    let accepted = incoming.next().await.unwrap().unwrap();
    assert_eq!(accepted.local_addr().unwrap(), addr);
    connect.await.unwrap();

    // Metrics tokio does not have: this is weft's runtime under every crate above.
    let metrics = tokio::runtime::Handle::current().metrics();
    println!(
        "patched: ok (weft runtime: {} workers, {} tasks spawned, {} long polls)",
        metrics.num_workers(),
        metrics.spawned_tasks_count(),
        metrics.long_poll_count()
    );
}
