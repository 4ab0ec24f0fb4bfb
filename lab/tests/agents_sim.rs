//! The Ollama simulator: its timing model (queueing, reloads, load factor — the computed
//! schedule, never wall time) and its protocol (generate, chat, OpenAI SSE, tags/version/ps,
//! error shapes).

mod common;

use std::time::Duration;

use weft_lab::framework::ollama::model::{load_factor, Arrival, Model, Rng, RunnerOpts, Started};
use weft_lab::framework::ollama::{Profile, Sim, SimConfig};

const A: RunnerOpts = RunnerOpts { num_ctx: 512, num_gpu: 80 };
const B: RunnerOpts = RunnerOpts { num_ctx: 2048, num_gpu: 80 };

/// Requests `(id, options)` arrive at `m` in order, each checked against what it must do.
fn arrive_in_order(m: &mut Model, arrivals: &[(u64, RunnerOpts, Arrival)]) {
    for &(id, opts, expected) in arrivals {
        assert_eq!(m.arrive(id, opts), expected, "request {id}");
    }
}

#[test]
fn one_slot_queues_fifo() {
    let mut m = Model::new(1, 512);
    arrive_in_order(
        &mut m,
        &[(1, A, Arrival::Start { reload: true }), (2, A, Arrival::Queued), (3, A, Arrival::Queued)],
    );
    assert_eq!(m.finish(), vec![Started { id: 2, reload: false }]);
    assert_eq!(m.finish(), vec![Started { id: 3, reload: false }]);
    assert_eq!(m.finish(), vec![]);
    assert_eq!(m.running(), 0);
}

#[test]
fn full_queue_is_busy() {
    let mut m = Model::new(1, 1);
    arrive_in_order(&mut m, &[(1, A, Arrival::Start { reload: true }), (2, A, Arrival::Queued), (3, A, Arrival::Busy)]);
    assert_eq!(m.queued(), 1);
}

#[test]
fn parallel_slots_start_together() {
    let mut m = Model::new(2, 512);
    let arrivals =
        [(1, A, Arrival::Start { reload: true }), (2, A, Arrival::Start { reload: false }), (3, A, Arrival::Queued)];
    arrive_in_order(&mut m, &arrivals);
    assert_eq!(m.running(), 2);
}

#[test]
fn changed_runner_options_reload_after_drain_and_nobody_overtakes() {
    let mut m = Model::new(2, 512);
    arrive_in_order(
        &mut m,
        &[
            (1, A, Arrival::Start { reload: true }),
            // Different num_ctx: waits although a slot is free.
            (2, B, Arrival::Queued),
            // Same options as the loaded runner, but FIFO: it may not overtake request 2.
            (3, A, Arrival::Queued),
        ],
    );
    // Request 1 drains: request 2 starts with a reload; 3 now needs another reload and waits.
    assert_eq!(m.finish(), vec![Started { id: 2, reload: true }]);
    assert_eq!(m.loaded(), Some(B));
    assert_eq!(m.finish(), vec![Started { id: 3, reload: true }]);
    assert_eq!(m.loaded(), Some(A));
}

#[test]
fn cancelled_waiter_leaves_the_queue() {
    let mut m = Model::new(1, 512);
    m.arrive(1, A);
    m.arrive(2, A);
    m.arrive(3, A);
    assert!(m.cancel(2));
    assert_eq!(m.finish(), vec![Started { id: 3, reload: false }]);
}

#[test]
fn load_factor_is_linear_in_occupancy() {
    assert_eq!(load_factor(1.6, 1, 4), 1.0);
    assert!((load_factor(1.6, 2, 4) - 1.2).abs() < 1e-12);
    assert!((load_factor(1.6, 4, 4) - 1.6).abs() < 1e-12);
    assert_eq!(load_factor(1.6, 3, 1), 1.0);
}

#[test]
fn profile_costs() {
    let p = Profile::full();
    // Every layer on the GPU at num_gpu 80 and 100 (35 layers): the same speed.
    assert_eq!(p.base_inter_token(A), p.inter_token);
    assert_eq!(p.base_inter_token(RunnerOpts { num_ctx: 512, num_gpu: 100 }), p.inter_token);
    assert_eq!(p.base_inter_token(RunnerOpts { num_ctx: 512, num_gpu: 25 }), p.inter_token.mul_f64(1.6));
    // TTFT calibration: ≈ 1 s for a 200-token prompt at 2048 context.
    assert_eq!(p.prefill(B, 200), Duration::from_millis(1000));
    let q = Profile::quick();
    assert_eq!(q.inter_token * 20, p.inter_token);
}

#[test]
fn rng_is_seeded() {
    let (mut a, mut b) = (Rng::new(7), Rng::new(7));
    let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
    let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
    assert_eq!(xs, ys);
    assert_ne!(xs, (0..8).map(|_| Rng::new(8).next_u64()).collect::<Vec<_>>());
}

fn sim(configure: impl FnOnce(&mut SimConfig)) -> Sim {
    let mut c = SimConfig::new(common::tiny_profile(1.5, 20));
    c.instances = 1;
    configure(&mut c);
    Sim::start(c).expect("simulator starts")
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn post(url: &str, body: serde_json::Value) -> (u16, String, String) {
    let r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let ct = r.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (status, ct, r.text().await.unwrap())
}

/// The JSON body of a GET of `url`.
async fn get_json(c: &reqwest::Client, url: String) -> serde_json::Value {
    serde_json::from_str(&c.get(url).send().await.unwrap().text().await.unwrap()).unwrap()
}

fn lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().filter(|l| !l.is_empty()).map(|l| serde_json::from_str(l).expect("every line is JSON")).collect()
}

#[test]
fn generate_streams_ndjson_with_final_statistics() {
    let s = sim(|_| {});
    let url = format!("{}/api/generate", s.urls()[0]);
    rt().block_on(async {
        let body = serde_json::json!({"model": "gemma3:latest", "prompt": "hello there", "options": {"num_predict": 5, "seed": 3}});
        let (status, ct, text) = post(&url, body).await;
        assert_eq!(status, 200);
        assert_eq!(ct, "application/x-ndjson");
        let ls = lines(&text);
        assert_eq!(ls.len(), 6);
        for l in &ls[..5] {
            assert_eq!(l["done"], false);
            assert!(!l["response"].as_str().unwrap().is_empty());
            assert_eq!(l["model"], "gemma3:latest");
            assert!(l["created_at"].is_string());
        }
        let last = &ls[5];
        assert_eq!(last["done"], true);
        assert_eq!(last["done_reason"], "length");
        assert_eq!(last["eval_count"], 5);
        assert_eq!(last["prompt_eval_count"], 3); // 11 characters ≈ 3 tokens
        for f in ["total_duration", "load_duration", "prompt_eval_duration", "eval_duration"] {
            assert!(last[f].is_u64(), "{f} is integer nanoseconds");
        }
        assert!(last["total_duration"].as_u64() >= last["eval_duration"].as_u64());
        // First request on a fresh instance loads the runner.
        assert!(last["load_duration"].as_u64().unwrap() > 0);
    });
}

#[test]
fn generate_without_stream_is_one_object_and_seed_is_honoured() {
    let s = sim(|_| {});
    let url = format!("{}/api/generate", s.urls()[0]);
    rt().block_on(async {
        let body = serde_json::json!({"model": "gemma3", "prompt": "x", "stream": false, "options": {"num_predict": 4, "seed": 42, "temperature": 1.0}});
        let (status, ct, a) = post(&url, body.clone()).await;
        assert_eq!((status, ct.as_str()), (200, "application/json; charset=utf-8"));
        let (_, _, b) = post(&url, body).await;
        let (a, b): (serde_json::Value, serde_json::Value) = (serde_json::from_str(&a).unwrap(), serde_json::from_str(&b).unwrap());
        assert_eq!(a["done"], true);
        assert_eq!(a["eval_count"], 4);
        assert_eq!(a["response"], b["response"]);
        assert_eq!(a["response"].as_str().unwrap().split_whitespace().count(), 4);
    });
}

#[test]
fn chat_streams_messages() {
    let s = sim(|_| {});
    let url = format!("{}/api/chat", s.urls()[0]);
    rt().block_on(async {
        let body = serde_json::json!({"model": "gemma3:latest", "messages": [{"role": "user", "content": "hi"}], "options": {"num_predict": 3}});
        let (status, _, text) = post(&url, body).await;
        assert_eq!(status, 200);
        let ls = lines(&text);
        assert_eq!(ls.len(), 4);
        assert_eq!(ls[0]["message"]["role"], "assistant");
        assert!(ls[0].get("response").is_none());
        assert_eq!(ls[3]["done"], true);
        assert_eq!(ls[3]["eval_count"], 3);
    });
}

#[test]
fn openai_streams_sse_with_usage_and_done() {
    let s = sim(|_| {});
    let url = format!("{}/v1/chat/completions", s.urls()[0]);
    rt().block_on(async {
        let body = serde_json::json!({"model": "gemma3:latest", "messages": [{"role": "user", "content": "hi"}], "stream": true,
                                      "max_tokens": 3, "stream_options": {"include_usage": true}});
        let (status, ct, text) = post(&url, body).await;
        assert_eq!((status, ct.as_str()), (200, "text/event-stream"));
        let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
        assert!(events.iter().all(|e| e.starts_with("data: ")));
        assert_eq!(*events.last().unwrap(), "data: [DONE]");
        let chunks: Vec<serde_json::Value> =
            events[..events.len() - 1].iter().map(|e| serde_json::from_str(&e[6..]).unwrap()).collect();
        assert_eq!(chunks.len(), 5); // 3 tokens, finish chunk, usage chunk
        assert_eq!(chunks[0]["object"], "chat.completion.chunk");
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        assert!(chunks[1]["choices"][0]["finish_reason"].is_null());
        assert_eq!(chunks[3]["choices"][0]["finish_reason"], "length");
        assert_eq!(chunks[4]["choices"].as_array().unwrap().len(), 0);
        assert_eq!(chunks[4]["usage"]["completion_tokens"], 3);
        // Not streamed unless asked (OpenAI's default).
        let body = serde_json::json!({"model": "gemma3:latest", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2});
        let (_, _, text) = post(&url, body).await;
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["object"], "chat.completion");
        assert_eq!(v["usage"]["completion_tokens"], 2);
    });
}

#[test]
fn tags_version_ps() {
    let s = sim(|_| {});
    let base = s.urls()[0].clone();
    rt().block_on(async {
        let c = reqwest::Client::new();
        let tags = get_json(&c, format!("{base}/api/tags")).await;
        assert_eq!(tags["models"][0]["name"], "gemma3:latest");
        let v = get_json(&c, format!("{base}/api/version")).await;
        assert!(v["version"].is_string());
        let ps = get_json(&c, format!("{base}/api/ps")).await;
        assert_eq!(ps["models"].as_array().unwrap().len(), 0, "nothing loaded yet");
    });
}

#[test]
fn error_shapes() {
    let s = sim(|c| c.max_queue = 0);
    let base = s.urls()[0].clone();
    rt().block_on(async {
        let (status, _, text) =
            post(&format!("{base}/api/generate"), serde_json::json!({"model": "llama9", "prompt": "x"})).await;
        assert_eq!(status, 404);
        assert_eq!(text.trim(), r#"{"error":"model \"llama9\" not found, try pulling it first"}"#);
        let r = reqwest::Client::new().post(format!("{base}/api/generate")).body("{not json").send().await.unwrap();
        assert_eq!(r.status().as_u16(), 400);
        let v: serde_json::Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
        assert!(v["error"].is_string());
        let (status, _, text) = post(&format!("{base}/api/generate"), serde_json::json!({"prompt": "x"})).await;
        assert_eq!((status, text.trim()), (400, r#"{"error":"model is required"}"#));
        // Queue of 0: a second request while the first runs is refused with 503.
        let c = reqwest::Client::new();
        let first = c
            .post(format!("{base}/api/generate"))
            .body(
                serde_json::json!({"model": "gemma3:latest", "prompt": "x", "options": {"num_predict": 2000}})
                    .to_string(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(first.status().as_u16(), 200);
        let (status, _, text) =
            post(&format!("{base}/api/generate"), serde_json::json!({"model": "gemma3:latest", "prompt": "x"})).await;
        assert_eq!(status, 503);
        assert_eq!(text.trim(), r#"{"error":"server busy, please try again.  maximum pending requests exceeded"}"#);
        drop(first);
    });
}
