//! The service `weft-lab axum-ab` measures: an axum app written against tokio exactly as users
//! write one. The same source is built twice — `tokio/Cargo.toml` links the real tokio,
//! `weft/Cargo.toml` adds the `[patch.crates-io]` lines that put weft under the whole graph
//! (axum, hyper, hyper-util, reqwest, tower) — and nothing here knows which it got.
//!
//! Routes (each answer is checked by the lab, byte for byte, before any load):
//! - `GET /json`: a small JSON document built with serde.
//! - `GET /relay`: calls a second local service (`--backend URL`, the same binary run with
//!   `--serve-backend`) through one shared `reqwest::Client` and returns its value doubled.
//! - `GET /file`: `tokio::fs::read` of `--file PATH`, returned as is.
//! - `GET /hash`: FNV-1a over 64 KiB computed in `spawn_blocking`.
//! - `GET /legacy`: the route that accidentally blocks: `std::thread::sleep(50 ms)` on the
//!   runtime's worker, as a synchronous driver called from a handler would. The lab sends it
//!   paced traffic (about 1% of all requests) in its blocking scenario, none otherwise.
//!
//! Prints `listening on ADDR` (an ephemeral loopback port) once it accepts.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{routing::get, Json, Router};
use serde::{Deserialize, Serialize};

/// What every route shares.
struct App {
    client: reqwest::Client,
    backend: String,
    file: PathBuf,
}

#[derive(Serialize)]
struct Item {
    id: u32,
    name: &'static str,
    tags: [&'static str; 2],
}

#[derive(Serialize)]
struct Catalogue {
    route: &'static str,
    count: usize,
    items: Vec<Item>,
}

#[derive(Serialize, Deserialize)]
struct Quote {
    price: u64,
    currency: String,
}

async fn json() -> Json<Catalogue> {
    let items: Vec<Item> = (0..8)
        .map(|id| Item { id, name: "widget", tags: ["in-stock", if id % 2 == 0 { "even" } else { "odd" }] })
        .collect();
    Json(Catalogue { route: "json", count: items.len(), items })
}

async fn relay(State(app): State<Arc<App>>) -> Result<Json<serde_json::Value>, (StatusCode, String)> {
    let bad = |e: reqwest::Error| (StatusCode::BAD_GATEWAY, format!("backend: {e}"));
    let quote: Quote =
        app.client.get(format!("{}/quote", app.backend)).send().await.map_err(bad)?.json().await.map_err(bad)?;
    Ok(Json(serde_json::json!({ "route": "relay", "price": quote.price * 2, "currency": quote.currency })))
}

async fn read_file(State(app): State<Arc<App>>) -> Result<Vec<u8>, (StatusCode, String)> {
    tokio::fs::read(&app.file)
        .await
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("{}: {e}", app.file.display())))
}

/// FNV-1a over 64 KiB of a fixed pattern (the lab recomputes it to check the answer).
fn fnv_64k() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..65_536u32 {
        h ^= u64::from((i.wrapping_mul(31) ^ (i >> 7)) as u8);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

async fn hash() -> Result<Json<serde_json::Value>, (StatusCode, String)> {
    let h =
        tokio::task::spawn_blocking(fnv_64k).await.map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(Json(serde_json::json!({ "route": "hash", "fnv": format!("{h:016x}") })))
}

async fn legacy() -> Json<serde_json::Value> {
    // The accident under study: a blocking call on the async worker.
    std::thread::sleep(Duration::from_millis(50));
    Json(serde_json::json!({ "route": "legacy" }))
}

async fn quote() -> Json<Quote> {
    Json(Quote { price: 4217, currency: "EUR".into() })
}

fn usage() -> ! {
    eprintln!("usage: axum-svc --backend URL --file PATH | axum-svc --serve-backend");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (mut backend, mut file, mut serve_backend) = (None, None, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--backend" => backend = Some(args.next().unwrap_or_else(|| usage())),
            "--file" => file = Some(PathBuf::from(args.next().unwrap_or_else(|| usage()))),
            "--serve-backend" => serve_backend = true,
            _ => usage(),
        }
    }
    let router = if serve_backend {
        Router::new().route("/quote", get(quote))
    } else {
        let (Some(backend), Some(file)) = (backend, file) else { usage() };
        let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().expect("reqwest client");
        let app = Arc::new(App { client, backend, file });
        Router::new()
            .route("/json", get(json))
            .route("/relay", get(relay))
            .route("/file", get(read_file))
            .route("/hash", get(hash))
            .route("/legacy", get(legacy))
            .with_state(app)
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    println!("listening on {}", listener.local_addr().expect("local addr"));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    axum::serve(listener, router).await.expect("serve");
}
