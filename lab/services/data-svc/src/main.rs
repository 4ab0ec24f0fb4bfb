//! The service `weft-lab data-ab` measures: the data tier of a web service, written against tokio
//! exactly as users write one — axum routes that query PostgreSQL through a connection pool
//! (deadpool-postgres over tokio-postgres, statements prepared once per connection and cached)
//! and read and write Redis through redis-rs's `ConnectionManager` (one multiplexed connection
//! that reconnects by itself). The same source is built twice — `tokio/Cargo.toml` links the
//! real tokio, `weft/Cargo.toml` adds the `[patch.crates-io]` lines that put weft under the
//! whole graph — and nothing here knows which it got.
//!
//! Routes (`ID` is 1..=1000; the lab seeds both stores and checks every answer before load):
//! - `GET /user/ID`: one `SELECT` by primary key → `{"route":"user","id","name","email","balance"}`.
//! - `GET /session/ID`: one Redis `GET session:ID` → `{"route":"session","id","token"}`.
//! - `GET /profile/ID`: read-through cache: Redis `GET profile:ID`; on a miss the user's row
//!   and order count from PostgreSQL, stored with `SET … EX 60` → `{"route":"profile",…}`.
//! - `GET /visit/ID`: a write to each: Redis `INCR visits:ID` and PostgreSQL
//!   `UPDATE … SET visits = visits + 1 RETURNING visits` → `{"route":"visit","id","redis","pg"}`.
//!
//! A store's error is a 503 with its message, never a panic; every store call has a deadline
//! (`--timeout-ms`, default 5 s) so a stalled server is an error, not a hung request.
//!
//! Prints `listening on ADDR` (an ephemeral loopback port) once it accepts.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{routing::get, Json, Router};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use redis::aio::ConnectionManager;
use redis::AsyncCommands;
use serde_json::{json, Value};

const USER_SQL: &str = "SELECT name, email, balance FROM users WHERE id = $1";
const PROFILE_SQL: &str = "SELECT u.name, count(o.id)::int8, coalesce(sum(o.cents), 0)::int8 \
                           FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE u.id = $1 GROUP BY u.name";
const VISIT_SQL: &str = "UPDATE users SET visits = visits + 1 WHERE id = $1 RETURNING visits";

/// What every route shares.
struct App {
    pg: Pool,
    redis: ConnectionManager,
    deadline: Duration,
}

type Reply = Result<Json<Value>, (StatusCode, String)>;

fn unavailable(what: &str, e: impl std::fmt::Display) -> (StatusCode, String) {
    (StatusCode::SERVICE_UNAVAILABLE, format!("{what}: {e}"))
}

/// `fut` within the service's deadline; a store that does not answer is a 503.
async fn within<T, E: std::fmt::Display>(
    app: &App,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, (StatusCode, String)> {
    match tokio::time::timeout(app.deadline, fut).await {
        Ok(r) => r.map_err(|e| unavailable(what, e)),
        Err(_) => Err(unavailable(what, format!("no answer within {:?}", app.deadline))),
    }
}

async fn pg_row(app: &App, sql: &str, id: i32) -> Result<Option<tokio_postgres::Row>, (StatusCode, String)> {
    let client = within(app, "postgres pool", app.pg.get()).await?;
    let stmt = within(app, "postgres prepare", client.prepare_cached(sql)).await?;
    within(app, "postgres query", client.query_opt(&stmt, &[&id])).await
}

fn not_found(id: i32) -> (StatusCode, String) {
    (StatusCode::NOT_FOUND, format!("no user {id}"))
}

async fn user(State(app): State<Arc<App>>, Path(id): Path<i32>) -> Reply {
    let row = pg_row(&app, USER_SQL, id).await?.ok_or_else(|| not_found(id))?;
    let (name, email, balance): (String, String, i64) = (row.get(0), row.get(1), row.get(2));
    Ok(Json(json!({"route": "user", "id": id, "name": name, "email": email, "balance": balance})))
}

async fn session(State(app): State<Arc<App>>, Path(id): Path<i32>) -> Reply {
    let mut redis = app.redis.clone();
    let token: Option<String> = within(&app, "redis get", redis.get(format!("session:{id}"))).await?;
    let token = token.ok_or_else(|| (StatusCode::NOT_FOUND, format!("no session {id}")))?;
    Ok(Json(json!({"route": "session", "id": id, "token": token})))
}

async fn profile(State(app): State<Arc<App>>, Path(id): Path<i32>) -> Reply {
    let key = format!("profile:{id}");
    let mut redis = app.redis.clone();
    let cached: Option<String> = within(&app, "redis get", redis.get(&key)).await?;
    let (body, source) = match cached {
        Some(body) => (body, "cache"),
        None => {
            let row = pg_row(&app, PROFILE_SQL, id).await?.ok_or_else(|| not_found(id))?;
            let (name, orders, cents): (String, i64, i64) = (row.get(0), row.get(1), row.get(2));
            let body = json!({"name": name, "orders": orders, "cents": cents}).to_string();
            let () = within(&app, "redis set", redis.set_ex(&key, &body, 60)).await?;
            (body, "db")
        }
    };
    let profile: Value = serde_json::from_str(&body).map_err(|e| unavailable("cached profile", e))?;
    Ok(Json(json!({"route": "profile", "id": id, "source": source, "profile": profile})))
}

async fn visit(State(app): State<Arc<App>>, Path(id): Path<i32>) -> Reply {
    let mut redis = app.redis.clone();
    let in_redis: i64 = within(&app, "redis incr", redis.incr(format!("visits:{id}"), 1)).await?;
    let row = pg_row(&app, VISIT_SQL, id).await?.ok_or_else(|| not_found(id))?;
    let in_pg: i64 = row.get(0);
    Ok(Json(json!({"route": "visit", "id": id, "redis": in_redis, "pg": in_pg})))
}

fn usage() -> ! {
    eprintln!("usage: data-svc --pg 'host=… port=… user=… dbname=…' --redis redis://127.0.0.1:PORT/ [--pool N] [--timeout-ms MS]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (mut pg, mut redis_url, mut pool_size, mut timeout_ms) = (None, None, 16usize, 5000u64);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--pg" => pg = Some(value()),
            "--redis" => redis_url = Some(value()),
            "--pool" => pool_size = value().parse().unwrap_or_else(|_| usage()),
            "--timeout-ms" => timeout_ms = value().parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    let (Some(pg), Some(redis_url)) = (pg, redis_url) else { usage() };
    let pg_config: tokio_postgres::Config = pg.parse().unwrap_or_else(|e| {
        eprintln!("data-svc: --pg: {e}");
        std::process::exit(2)
    });
    let manager = Manager::from_config(
        pg_config,
        tokio_postgres::NoTls,
        ManagerConfig { recycling_method: RecyclingMethod::Fast },
    );
    let pool = Pool::builder(manager).max_size(pool_size).build().expect("postgres pool");
    let client = redis::Client::open(redis_url.as_str()).unwrap_or_else(|e| {
        eprintln!("data-svc: --redis: {e}");
        std::process::exit(2)
    });
    let deadline = Duration::from_millis(timeout_ms);
    let redis = match tokio::time::timeout(deadline, ConnectionManager::new(client)).await {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => {
            eprintln!("data-svc: connecting to redis: {e}");
            std::process::exit(1)
        }
        Err(_) => {
            eprintln!("data-svc: redis did not answer within {deadline:?}");
            std::process::exit(1)
        }
    };
    let app = Arc::new(App { pg: pool, redis, deadline });
    let router = Router::new()
        .route("/user/{id}", get(user))
        .route("/session/{id}", get(session))
        .route("/profile/{id}", get(profile))
        .route("/visit/{id}", get(visit))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    println!("listening on {}", listener.local_addr().expect("local addr"));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    axum::serve(listener, router).await.expect("serve");
}
