//! One batch of the agents study on tokio's API — here weft, through the patch — with reqwest
//! native: the plan as JSON on stdin, `Result<Batch, String>` as one JSON line on stdout
//! (`weft-lab agents` starts it; `lab/src/agents/child.rs` is the other end). The workflow,
//! the streamed call and the timed part are `weft_lab_agent`'s, the same code every other row
//! runs; this file only supplies the timer, the spawner and the reqwest client.

use std::future::Future;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use weft_lab_agent::plan::{drive, Batch, RunPlan, Spawner};
use weft_lab_agent::stream::{BoxFuture, ByteStream, Endpoint, HttpClient, HttpResponse, Post};
use weft_lab_agent::Sleep;

struct TokioSleep;

impl Sleep for TokioSleep {
    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(duration)
    }
}

struct TokioSpawner;

impl Spawner for TokioSpawner {
    fn spawn<F>(&self, f: F) -> BoxFuture<'static, Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let handle = tokio::spawn(f);
        Box::pin(async move { handle.await.ok() })
    }
}

/// reqwest on the current (weft) runtime: no bridge, no second reactor.
struct Reqwest(reqwest::Client);

impl HttpClient for Reqwest {
    fn post<'a>(&'a self, req: Post<'a>) -> BoxFuture<'a, Result<HttpResponse, String>> {
        let Post { endpoint, path, body } = req;
        let send = self
            .0
            .post(format!("{}{path}", endpoint.base))
            .header("content-type", "application/json")
            .body(body)
            .send();
        Box::pin(async move {
            let resp = send.await.map_err(|e| format!("request: {e}"))?;
            let status = resp.status().as_u16();
            let body: ByteStream =
                Box::pin(futures_lite::StreamExt::map(resp.bytes_stream(), |r| r.map_err(|e| e.to_string())));
            Ok(HttpResponse { status, body })
        })
    }
}

fn run(plan: &RunPlan) -> Result<Batch, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(plan.workers.max(1))
        .enable_all()
        .build()
        .map_err(|e| format!("building the runtime: {e}"))?;
    let client = reqwest::Client::builder().no_proxy().build().map_err(|e| format!("building reqwest: {e}"))?;
    Ok(rt.block_on(drive::<TokioSleep, _, _>(plan, Arc::new(Reqwest(client)), TokioSpawner)))
}

fn main() {
    let mut input = String::new();
    let reply = std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("reading the plan: {e}"))
        .and_then(|_| serde_json::from_str::<RunPlan>(&input).map_err(|e| format!("bad plan: {e}")))
        .and_then(|plan| run(&plan));
    println!("{}", serde_json::to_string(&reply).expect("a batch serialises"));
}
