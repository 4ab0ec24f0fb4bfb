//! A small tokio service, unchanged: an axum app on loopback with a JSON route that calls the
//! app's own plain route through reqwest, a raw HTTP/1.1 client written with tokio-util's
//! `LinesCodec` over `tokio::net::TcpStream`, and a tokio-stream wrapper around a
//! `TcpListener`. Built with the `[patch.crates-io]` lines in `Cargo.toml`, every one
//! of those crates runs on weft; the last line proves it with metrics only weft has.

use std::time::Duration;

use axum::extract::State;
use axum::{routing::get, Json, Router};
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

/// A JSON route that asks this same server's `/` through reqwest (a second service, as far as
/// the route can tell).
async fn relay(State(base): State<String>) -> Json<serde_json::Value> {
    let body = reqwest::get(format!("{base}/")).await.unwrap().text().await.unwrap();
    Json(serde_json::json!({ "relayed": body }))
}

#[tokio::main]
async fn main() {
    // axum, served by `axum::serve` on a tokio (= weft) listener.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/", get(hello))
        .route("/sum", get(spawn_blocking_sum))
        .route("/relay", get(relay))
        .with_state(format!("http://{addr}"));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    // reqwest against axum, both on weft.
    let relayed: serde_json::Value = reqwest::get(format!("http://{addr}/relay")).await.unwrap().json().await.unwrap();
    assert_eq!(relayed, serde_json::json!({ "relayed": "hello from axum" }));

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
