//! `GET /tasks` on `weft::metrics::serve`: the task dump as JSON, under 100 concurrent scrapes
//! from a real HTTP client (hyper's) on a second runtime. Every body must name the three
//! parked tasks spawned at a known line, exactly three times, and one body must pass a strict
//! JSON parser (Python's `json`; skipped with a message when python3 is missing, unless
//! `WEFT_METRICS_EXPORT_REQUIRE_TOOLS` is set).
#![cfg(feature = "hyper")]

use std::process::{Command, Stdio};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper_util::client::legacy::Client;
use weft::hyper::{WeftConnector, WeftExecutor, WeftTimer};

async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String, String) {
    let client =
        Client::builder(WeftExecutor::new()).timer(WeftTimer::new()).build::<_, Empty<Bytes>>(WeftConnector::new());
    let req = Request::get(format!("http://{addr}{path}")).body(Empty::new()).unwrap();
    let resp = client.request(req).await.unwrap();
    let status = resp.status().as_u16();
    let ct = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, ct, String::from_utf8(body.to_vec()).unwrap())
}

fn strict_json(body: &str) -> Option<String> {
    use std::io::Write;
    // Prints "<number of tasks> <number whose state is idle>".
    let script = "import json,sys; t=json.load(sys.stdin)['tasks']; \
                  print(len(t), sum(1 for x in t if x['state']=='idle' and isinstance(x['poll_count'], int)))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python's json rejected the body: {}\n{body}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).unwrap().trim().to_string())
}

#[test]
fn tasks_endpoint_serves_the_dump_as_json_to_100_concurrent_scrapes() {
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (tx, rx) = weft::sync::watch::channel(false);
    let mut parked = Vec::new();
    let mut line = 0;
    for _ in 0..3 {
        let mut rx = rx.clone();
        line = line!() + 1;
        parked.push(rt.spawn(async move { while !*rx.borrow_and_update() && rx.changed().await.is_ok() {} }));
    }
    let addr = rt.block_on(weft::metrics::serve("127.0.0.1:0".parse().unwrap())).unwrap();
    // Wait until the three have gone idle (joined the dump).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while rt.handle().dump_tasks().iter().filter(|t| t.spawn_location.line() == line).count() < 3 {
        assert!(std::time::Instant::now() < deadline, "the parked tasks never showed up in the dump");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }

    let needle = format!("\"file\":\"{}\",\"line\":{line},", file!());
    let client_rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let bodies = client_rt.block_on(async {
        let scrapes: Vec<_> = (0..100).map(|_| weft::spawn(get(addr, "/tasks"))).collect();
        let mut bodies = Vec::new();
        for s in scrapes {
            let (status, ct, body) = s.await.unwrap();
            assert_eq!((status, ct.as_str()), (200, "application/json"), "{body}");
            bodies.push(body);
        }
        assert_eq!(get(addr, "/nope").await.0, 404);
        bodies
    });
    for body in &bodies {
        assert!(body.starts_with("{\"tasks\":[") && body.ends_with("]}\n"), "{body}");
        assert_eq!(body.matches(&needle).count(), 3, "{needle} in {body}");
    }
    match strict_json(&bodies[0]) {
        Some(counts) => {
            let n: Vec<usize> = counts.split(' ').map(|x| x.parse().unwrap()).collect();
            // The endpoint's own accept loop and connection tasks are listed too.
            assert!(n[0] >= 3 && n[1] >= 3, "{counts}: {}", bodies[0]);
        }
        None if std::env::var_os("WEFT_METRICS_EXPORT_REQUIRE_TOOLS").is_some() => {
            panic!("python3 could not run and WEFT_METRICS_EXPORT_REQUIRE_TOOLS is set")
        }
        None => eprintln!("SKIPPED strict JSON check: python3 not found"),
    }
    tx.send(true).unwrap();
    rt.block_on(async {
        for p in parked {
            p.await.unwrap();
        }
    });
}
