//! `data-ab`: the data tier of a web service, A/B on tokio and on weft. One axum service written
//! as users write them (`lab/services/data-svc`: routes that query PostgreSQL through a
//! deadpool-postgres pool over tokio-postgres and read and write Redis through redis-rs's
//! `ConnectionManager`) is built twice — the real tokio, and the same dependencies with
//! `[patch.crates-io] tokio = compat/tokio` — and loaded with `wrk`, builds interleaved round
//! by round (a fresh service process each round; the same PostgreSQL and Redis, started by the
//! lab on loopback in temporary directories, for both).
//!
//! wrk rotates over `/user/ID` (a `SELECT`), `/session/ID` (a Redis `GET`), `/profile/ID`
//! (read-through cache: Redis, on a miss a PostgreSQL join then `SET EX`) and `/visit/ID` (a
//! Redis `INCR` and a PostgreSQL `UPDATE … RETURNING`), over 16 ids each. Every round starts with
//! the profile cache emptied, so both builds face the same misses. Before the load each round
//! proves which runtime runs and checks every route's answer against the seed's formulas
//! (`seed.rs`); during the load the wrk script checks every response's status and route marker.
//!
//! Server CPU per request is the service process's only: PostgreSQL's and Redis's are the same
//! servers for both builds and are not counted (their work per request is the same queries).
//!
//! Builds, processes, rounds and tables: `framework::service_ab`; the servers:
//! `framework::datastores`; the load: `framework::wrk`.

mod seed;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use crate::framework::datastores::{Postgres, Redis, Resp};
use crate::framework::idle_conns;
use crate::framework::selection::write_md_json;
use crate::framework::service_ab::{self, Build, Round, Row, Running};
use crate::framework::wrk;

/// The routes under load, each over [`ids`].
const ROUTES: [&str; 4] = ["user", "session", "profile", "visit"];
/// Ids per route in the rotation.
const IDS_PER_ROUTE: i32 = 16;

/// `weft-lab data-ab`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// wrk connections; a comma-separated list is a sweep.
    #[arg(long, value_delimiter = ',', default_value = "64")]
    pub connections: Vec<usize>,
    /// Seconds of load per build per round (whole seconds: wrk's unit).
    #[arg(long, default_value_t = 4)]
    pub seconds: u64,
    /// Interleaved rounds (tokio, weft, tokio, weft, …).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// The service's PostgreSQL pool size (deadpool's `max_size`).
    #[arg(long, default_value_t = 16)]
    pub pool: usize,
    /// Where the two service builds go.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/data-ab"))]
    pub target_dir: PathBuf,
    /// Build the services unoptimised (CI's smoke run: checks the command works end to end
    /// from a clean clone; its numbers mean nothing).
    #[arg(long)]
    pub debug_services: bool,
    /// Writes OUT/data_ab.md and OUT/data_ab.json.
    #[arg(long, default_value = "lab-results/data_ab")]
    pub out: PathBuf,
}

/// The ids each route is asked for under load: spread over the users, the same for both builds.
fn ids() -> impl Iterator<Item = i32> {
    (0..IDS_PER_ROUTE).map(|k| (k * 61) % seed::USERS + 1)
}

/// wrk's rotation: route by route within each id, so consecutive requests hit different routes.
fn paths() -> Vec<String> {
    ids().flat_map(|id| ROUTES.map(|r| format!("/{r}/{id}"))).collect()
}

/// The servers and what a round needs besides the build.
struct Setup {
    exes: [PathBuf; 2],
    pg: Postgres,
    redis: Redis,
    pool: usize,
    script: PathBuf,
    paths: Vec<String>,
    per_round: Duration,
}

fn redis_args(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// Seeds both stores (fresh servers: nothing to clear).
fn seed(pg: &Postgres, redis: &Redis) -> Result<(), String> {
    pg.psql("postgres", &seed::postgres_sql())?;
    redis.command(&redis_args(&seed::redis_mset()))?;
    Ok(())
}

/// Every route answers what the seed implies; a missing user is a 404, not a 5xx or a hang.
fn check_routes(setup: &Setup, server: &Running) -> Result<(), String> {
    for id in [1, 500, seed::USERS] {
        let want = json!({"route": "user", "id": id, "name": seed::name(id), "email": seed::email(id), "balance": seed::balance(id)});
        expect(server.get_json(&format!("/user/{id}"))?, want)?;
        expect(
            server.get_json(&format!("/session/{id}"))?,
            json!({"route": "session", "id": id, "token": seed::token(id)}),
        )?;
        // Cold, then warm: the first answer comes from PostgreSQL, the second from Redis.
        setup.redis.command(&["DEL", &format!("profile:{id}")])?;
        let (orders, cents) = seed::orders(id);
        let profile = json!({"name": seed::name(id), "orders": orders, "cents": cents});
        for source in ["db", "cache"] {
            let want = json!({"route": "profile", "id": id, "source": source, "profile": profile});
            expect(server.get_json(&format!("/profile/{id}"))?, want)?;
        }
        // Each visit adds one in both stores.
        let counts = |v: serde_json::Value| -> Result<(i64, i64), String> {
            match (v["route"].as_str(), v["id"].as_i64(), v["redis"].as_i64(), v["pg"].as_i64()) {
                (Some("visit"), Some(got), Some(r), Some(p)) if got == i64::from(id) => Ok((r, p)),
                _ => Err(format!("GET /visit/{id}: unexpected answer {v}")),
            }
        };
        let first = counts(server.get_json(&format!("/visit/{id}"))?)?;
        let second = counts(server.get_json(&format!("/visit/{id}"))?)?;
        if second != (first.0 + 1, first.1 + 1) {
            return Err(format!(
                "GET /visit/{id} twice: counters went from {first:?} to {second:?}, not up by one each"
            ));
        }
    }
    for path in [format!("/user/{}", seed::USERS + 1), format!("/profile/{}", seed::USERS + 1)] {
        let (status, body) = server.get(&path)?;
        if status != 404 {
            return Err(format!("GET {path}: expected 404 for a missing user, got {status}: {body}"));
        }
    }
    Ok(())
}

fn expect(got: serde_json::Value, want: serde_json::Value) -> Result<(), String> {
    if got != want {
        return Err(format!("expected {want}, got {got}"));
    }
    Ok(())
}

/// The visit counters' totals over the rotation's ids: (Redis, PostgreSQL).
fn visit_totals(setup: &Setup) -> Result<(i64, i64), String> {
    let ids: Vec<String> = ids().map(|id| id.to_string()).collect();
    let keys: Vec<String> = ids.iter().map(|id| format!("visits:{id}")).collect();
    let mut mget = vec!["MGET"];
    mget.extend(keys.iter().map(String::as_str));
    let redis = match setup.redis.command(&mget)? {
        Resp::Array(values) => values
            .iter()
            .map(|v| match v {
                Resp::Bulk(Some(b)) => String::from_utf8_lossy(b).parse::<i64>().map_err(|e| e.to_string()),
                Resp::Bulk(None) => Ok(0),
                other => Err(format!("redis MGET: {other:?}")),
            })
            .sum::<Result<i64, String>>()?,
        other => return Err(format!("redis MGET: {other:?}")),
    };
    let sql = format!("SELECT coalesce(sum(visits), 0) FROM users WHERE id IN ({})", ids.join(","));
    let pg = setup.pg.psql("postgres", &sql)?.trim().parse::<i64>().map_err(|e| format!("sum(visits): {e}"))?;
    Ok((redis, pg))
}

/// The load did its work: the stores' visit counters rose by the `/visit` requests wrk counted
/// (a quarter of all), give or take the requests in flight when wrk stopped (answered but not
/// counted, or cancelled between the two writes when wrk closed its connections).
fn expect_visits(before: (i64, i64), after: (i64, i64), requests: u64, connections: usize) -> Result<(), String> {
    let visits = requests as i64 / ROUTES.len() as i64;
    let slack = connections as i64 + 8;
    for (store, delta) in [("redis", after.0 - before.0), ("postgres", after.1 - before.1)] {
        if delta < visits - slack || delta > visits + slack {
            return Err(format!(
                "{store}'s visit counters rose by {delta} during a load that {visits} /visit requests (±{slack}) were counted in"
            ));
        }
    }
    Ok(())
}

fn one_round(setup: &Setup, build: Build, connections: usize) -> Result<Round, String> {
    setup.redis.command(&redis_args(&seed::redis_del_profiles()))?;
    let exe = &setup.exes[build as usize];
    let pool = setup.pool.to_string();
    let server =
        Running::start(exe, &["--pg", &setup.pg.conninfo("postgres"), "--redis", &setup.redis.url(), "--pool", &pool])?;
    server.expect_runtime(build)?;
    check_routes(setup, &server)?;
    setup.redis.command(&redis_args(&seed::redis_del_profiles()))?;
    let visits_before = visit_totals(setup)?;
    let cpu_before = server.cpu()?;
    let paths: Vec<&str> = setup.paths.iter().map(String::as_str).collect();
    let main = wrk::Wrk::start(&setup.script, server.addr, connections, setup.per_round, &paths, 0)?.finish()?;
    let cpu = server.cpu()?.saturating_sub(cpu_before);
    drop(server);
    expect_visits(visits_before, visit_totals(setup)?, main.requests, connections)?;
    Ok(Round { main, side: None, cpu })
}

/// The stores' versions, for the report.
fn versions(setup: &Setup) -> Result<(String, String), String> {
    let pg = setup.pg.psql("postgres", "SHOW server_version")?.trim().to_string();
    let info = match setup.redis.command(&["INFO", "server"])? {
        Resp::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        other => return Err(format!("redis INFO: {other:?}")),
    };
    let redis = info.lines().find_map(|l| l.strip_prefix("redis_version:")).unwrap_or("?").trim().to_string();
    Ok((pg, redis))
}

/// A row pair and its ratios, as written to `data_ab.json`.
#[derive(Serialize)]
struct Pair {
    tokio: Row,
    weft: Row,
    ratios: service_ab::Ratios,
}

fn markdown(pairs: &[Pair], setup: &Setup, rounds: usize, (pg, redis): &(String, String)) -> String {
    let mut md = format!(
        "## data-ab — axum + PostgreSQL (deadpool-postgres) + Redis (ConnectionManager), real tokio vs patched to weft, wrk, {rounds} interleaved rounds of {:.1} s per build\n\n\
         PostgreSQL {pg} and Redis {redis}, started by the lab on loopback (no fsync, no persistence); pool of {} connections. \
         Routes under load: /user (SELECT), /session (Redis GET), /profile (Redis, on a miss a PostgreSQL join + SET EX; cache emptied each round), /visit (Redis INCR + PostgreSQL UPDATE), {IDS_PER_ROUTE} ids each, rotated. \
         CPU/req: the service process's user+system time per answered request (the stores' CPU not counted). Ratios are weft ÷ tokio, median of per-round pairs [95% bootstrap CI]. Targets: req/s ≥ 1.00×, CPU/req ≤ 1.00×, p99 ≤ 1.00×.\n\n",
        setup.per_round.as_secs_f64(),
        setup.pool,
    );
    for p in pairs {
        md += &format!("### {} connections\n\n", p.tokio.connections);
        md += &service_ab::pair_markdown(&p.tokio, &p.weft, None);
    }
    md
}

/// `weft-lab data-ab`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let most = args.connections.iter().max().copied().unwrap_or(1);
    idle_conns::raise_nofile(most as u64 * 2 + idle_conns::FD_SLACK)?;
    let exes = service_ab::build_both("data-svc", &args.target_dir, args.debug_services)?;
    eprintln!("data-ab: starting PostgreSQL and Redis on loopback…");
    let (pg, redis) = (Postgres::start()?, Redis::start()?);
    seed(&pg, &redis)?;
    let script = wrk::write_script(&args.out.join("work"), "data_ab", &["\"route\":\""])?;
    let setup = Setup {
        exes,
        pg,
        redis,
        pool: args.pool.max(1),
        script,
        paths: paths(),
        per_round: Duration::from_secs(args.seconds.max(1)),
    };
    let rounds = args.rounds.max(1);
    let mut pairs = Vec::new();
    for &c in &args.connections {
        let c = c.max(1);
        let [tokio, weft] = service_ab::measure("data-ab", "plain", c, rounds, |build| one_round(&setup, build, c))?;
        pairs.push(Pair { ratios: service_ab::ratios(&tokio, &weft), tokio, weft });
    }
    let mut md = markdown(&pairs, &setup, rounds, &versions(&setup)?);
    if args.debug_services {
        md.insert_str(0, "**Unoptimised service builds (`--debug-services`): these numbers mean nothing.**\n\n");
    }
    write_md_json(&args.out, "data_ab", &md, &pairs)?;
    let failed: u64 = pairs.iter().flat_map(|p| [&p.tokio, &p.weft]).map(|r| r.errors + r.bad).sum();
    if failed > 0 {
        eprintln!("data-ab: {failed} failed or bad responses (see the errors and bad columns)");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rotation_covers_every_route_with_ids_in_range() {
        let p = paths();
        assert_eq!(p.len(), ROUTES.len() * IDS_PER_ROUTE as usize);
        for (i, path) in p.iter().enumerate() {
            assert!(path.starts_with(&format!("/{}/", ROUTES[i % ROUTES.len()])), "{path}");
            let id: i32 = path.rsplit('/').next().unwrap().parse().unwrap();
            assert!((1..=seed::USERS).contains(&id), "{path}");
        }
        let distinct: std::collections::HashSet<_> = ids().collect();
        assert_eq!(distinct.len(), IDS_PER_ROUTE as usize);
    }

    #[test]
    fn visit_counts_must_follow_the_load() {
        assert!(expect_visits((10, 10), (110, 109), 400, 8).is_ok());
        assert!(expect_visits((10, 10), (10, 10), 400, 8).is_err(), "no writes at all");
        assert!(expect_visits((10, 10), (110, 60), 400, 8).is_err(), "postgres skipped half");
    }
}
