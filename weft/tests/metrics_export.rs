//! Exporting metrics: the 0.0.4 text passes `promtool check metrics`, the OpenMetrics text
//! passes a strict OpenMetrics parser (Python `prometheus_client`), the endpoint negotiates
//! the format and survives 100 concurrent scrapes, and a real Prometheus server scrapes it.
//! The external tools are optional: a test without its tool says so on stderr and passes
//! (`.ci/run` installs them).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper_util::client::legacy::Client;
use weft::hyper::{WeftConnector, WeftExecutor, WeftTimer};

fn runtime_with_activity() -> weft::runtime::Runtime {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .enable_metrics_poll_time_histogram()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..10 {
            weft::spawn(async { weft::task::yield_now().await }).await.unwrap();
        }
        weft::task::spawn_blocking(|| ()).await.unwrap();
        weft::time::sleep(Duration::from_millis(1)).await;
    });
    rt
}

fn tool(name: &str) -> bool {
    Command::new(name).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn run_with_stdin(cmd: &mut Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// A check whose tool is missing is skipped with a message, unless
/// `WEFT_METRICS_EXPORT_REQUIRE_TOOLS` is set (as `.ci/run` does after installing them): then a
/// missing tool fails the test instead of letting it pass without checking anything.
fn skipped(what: &str) {
    if std::env::var_os("WEFT_METRICS_EXPORT_REQUIRE_TOOLS").is_some() {
        panic!("{what} could not run and WEFT_METRICS_EXPORT_REQUIRE_TOOLS is set");
    }
    eprintln!("SKIPPED {what}");
}

#[test]
fn text_format_passes_promtool() {
    let rt = runtime_with_activity();
    let text = weft::metrics::text::render(&rt.handle().metrics());
    assert!(text.contains("# TYPE weft_spawned_tasks_total counter\nweft_spawned_tasks_total 10\n"), "{text}");
    assert!(text.contains("weft_poll_time_seconds_bucket{worker=\"0\",le=\"+Inf\"}"));
    if !tool("promtool") {
        skipped("promtool check: promtool not installed (apt-get install prometheus)");
        return;
    }
    let out = run_with_stdin(Command::new("promtool").args(["check", "metrics"]), &text);
    assert!(
        out.status.success(),
        "promtool rejected the text format:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Python with `prometheus_client` (`WEFT_OPENMETRICS_PYTHON`, set by `.ci/run`).
fn openmetrics_python() -> Option<String> {
    let py = std::env::var("WEFT_OPENMETRICS_PYTHON").ok()?;
    let ok = Command::new(&py)
        .args(["-c", "import prometheus_client.openmetrics.parser"])
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(py)
}

const STRICT_PARSE: &str = "import sys\n\
from prometheus_client.openmetrics.parser import text_string_to_metric_families\n\
fams = list(text_string_to_metric_families(sys.stdin.read()))\n\
print(len(fams))\n";

#[test]
fn openmetrics_passes_a_strict_parser() {
    let rt = runtime_with_activity();
    let text = weft::metrics::openmetrics::render(&rt.handle().metrics());
    assert!(text.ends_with("# EOF\n"));
    assert!(text.contains("# TYPE weft_spawned_tasks counter\nweft_spawned_tasks_total 10\n"), "{text}");
    let Some(py) = openmetrics_python() else {
        skipped("OpenMetrics parse: set WEFT_OPENMETRICS_PYTHON to a python with prometheus_client");
        return;
    };
    let out = run_with_stdin(Command::new(py).args(["-c", STRICT_PARSE]), &text);
    assert!(out.status.success(), "OpenMetrics parser rejected the output:\n{}", String::from_utf8_lossy(&out.stderr));
    let families: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(families, text.matches("# TYPE ").count());
}

async fn get(addr: std::net::SocketAddr, path: &str, accept: Option<&str>) -> (u16, String, String) {
    let client =
        Client::builder(WeftExecutor::new()).timer(WeftTimer::new()).build::<_, Empty<Bytes>>(WeftConnector::new());
    let mut req = Request::get(format!("http://{addr}{path}"));
    if let Some(a) = accept {
        req = req.header("accept", a);
    }
    let resp = client.request(req.body(Empty::new()).unwrap()).await.unwrap();
    let status = resp.status().as_u16();
    let ct = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, ct, String::from_utf8(body.to_vec()).unwrap())
}

#[test]
fn endpoint_negotiates_the_format_and_takes_100_concurrent_scrapes() {
    let rt = runtime_with_activity();
    rt.block_on(async {
        let addr = weft::metrics::serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let (status, ct, body) = get(addr, "/metrics", None).await;
        assert_eq!(status, 200);
        assert_eq!(ct, "text/plain; version=0.0.4; charset=utf-8");
        assert!(body.contains("weft_spawned_tasks_total"));
        let (status, ct, body) =
            get(addr, "/metrics", Some("application/openmetrics-text;version=1.0.0,text/plain;q=0.5")).await;
        assert_eq!(status, 200);
        assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
        assert!(body.ends_with("# EOF\n"));
        assert_eq!(get(addr, "/nope", None).await.0, 404);

        let scrapes: Vec<_> = (0..100).map(|_| weft::spawn(get(addr, "/metrics", None))).collect();
        for s in scrapes {
            let (status, _, body) = s.await.unwrap();
            assert_eq!(status, 200);
            assert!(body.contains("# TYPE weft_workers gauge"));
        }
    });
}

#[test]
fn serve_refuses_non_loopback_addresses() {
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt.block_on(weft::metrics::serve("0.0.0.0:0".parse().unwrap())).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("loopback"), "{err}");
}

#[test]
fn a_real_prometheus_scrapes_the_endpoint() {
    if !tool("prometheus") {
        skipped("Prometheus scrape: prometheus not installed (apt-get install prometheus)");
        return;
    }
    let rt = runtime_with_activity();
    let addr = rt.block_on(weft::metrics::serve("127.0.0.1:0".parse().unwrap())).unwrap();
    let dir = std::env::temp_dir().join(format!("weft-prometheus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: weft\n    static_configs:\n      - targets: ['{addr}']\n"
        ),
    )
    .unwrap();
    // A free port for Prometheus's own web listener.
    let prom_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut prom = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prom_addr: std::net::SocketAddr = format!("127.0.0.1:{prom_port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = String::new();
    let found = rt.block_on(async {
        while Instant::now() < deadline {
            weft::time::sleep(Duration::from_millis(250)).await;
            let client = Client::builder(WeftExecutor::new()).build::<_, Empty<Bytes>>(WeftConnector::new());
            let uri = format!("http://{prom_addr}/api/v1/query?query=weft_spawned_tasks_total");
            let Ok(resp) = client.request(Request::get(uri).body(Empty::new()).unwrap()).await else { continue };
            let body = resp.into_body().collect().await.unwrap().to_bytes();
            last = String::from_utf8_lossy(&body).into_owned();
            // The runtime spawned 10 tasks before serving (the server's own tasks are spawned
            // too, so the value is at least 10).
            if last.contains("\"__name__\":\"weft_spawned_tasks_total\"") {
                return true;
            }
        }
        false
    });
    let _ = prom.kill();
    let _ = prom.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(found, "Prometheus never stored weft_spawned_tasks_total; last answer: {last}");
}
