//! The simulator's HTTP side: hyper 1.x on weft, one accept loop per instance, routing, and
//! the token producer that turns the timing model's decisions into timed writes.
//!
//! A streamed response is a weft task (the producer) feeding a bounded channel that the
//! response body drains; the producer holds the instance slot, so a client that goes away
//! (body dropped → send fails) frees its slot at once. Token deadlines are absolute
//! (`sleep_until`), so timer granularity never accumulates into drift.

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request as HttpRequest, Response, StatusCode};
use weft::sync::{mpsc, oneshot};
use weft::time::Instant;

use super::model::{load_factor, Arrival, Model, Rng, RunnerOpts};
use weft_lab_agent::sim_request::{self, Api};

use super::wire::{self, ChatMsg, ChunkChoice, Delta, OllamaLine, OpenAiChunk, Stats, Usage};
use super::{Fault, Shared};

/// A response body: one buffer, or the producer's channel.
pub enum SimBody {
    Full(Option<Bytes>),
    Chan(mpsc::Receiver<io::Result<Bytes>>),
}

impl hyper::body::Body for SimBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<io::Result<Frame<Bytes>>>> {
        match self.get_mut() {
            SimBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            SimBody::Chan(rx) => rx.poll_recv(cx).map(|o| o.map(|r| r.map(Frame::data))),
        }
    }
}

/// Queued requests' wake-ups: request id → "you may start (reload?)".
type Waiters = Vec<(u64, oneshot::Sender<bool>)>;

/// One simulated model server (an Ollama process).
pub struct Instance {
    pub index: usize,
    pub fault: Option<Fault>,
    state: Mutex<(Model, Waiters)>,
}

impl Instance {
    pub fn new(index: usize, slots: usize, max_queue: usize, fault: Option<Fault>) -> Instance {
        Instance { index, fault, state: Mutex::new((Model::new(slots, max_queue), Vec::new())) }
    }

    pub fn running(&self) -> usize {
        self.state.lock().unwrap().0.running()
    }

    pub fn loaded(&self) -> Option<RunnerOpts> {
        self.state.lock().unwrap().0.loaded()
    }

    /// Frees one slot and hands freed slots to queued requests (a waiter that is gone frees
    /// its slot again at once).
    fn finish(&self) {
        let mut state = self.state.lock().unwrap();
        let mut started = state.0.finish();
        while let Some(s) = started.pop() {
            let pos = state.1.iter().position(|(id, _)| *id == s.id);
            let waiter = pos.map(|p| state.1.swap_remove(p).1);
            if match waiter {
                None => true,
                Some(w) => w.send(s.reload).is_err(),
            } {
                started.extend(state.0.finish());
            }
        }
    }
}

/// Holds one running slot; frees it when dropped, however the request ends.
struct Slot(Arc<Instance>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Takes a queued ticket back out of the queue if the request is dropped while waiting.
struct Waiting(Arc<Instance>, u64, bool);

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.2 {
            let mut state = self.0.state.lock().unwrap();
            state.0.cancel(self.1);
            state.1.retain(|(id, _)| *id != self.1);
        }
    }
}

/// Waits for a slot; `Err(())` = queue full.
async fn admit(inst: &Arc<Instance>, id: u64, opts: RunnerOpts) -> Result<(Slot, bool), ()> {
    let rx = {
        let mut state = inst.state.lock().unwrap();
        match state.0.arrive(id, opts) {
            Arrival::Start { reload } => return Ok((Slot(inst.clone()), reload)),
            Arrival::Busy => return Err(()),
            Arrival::Queued => {
                let (tx, rx) = oneshot::channel();
                state.1.push((id, tx));
                rx
            }
        }
    };
    let mut guard = Waiting(inst.clone(), id, false);
    let reload = rx.await.map_err(|_| ())?;
    guard.2 = true;
    Ok((Slot(inst.clone()), reload))
}

fn respond(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response<SimBody> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(SimBody::Full(Some(Bytes::from(body))))
        .expect("static headers are valid")
}

fn json(status: StatusCode, v: serde_json::Value) -> Response<SimBody> {
    respond(status, "application/json; charset=utf-8", serde_json::to_vec(&v).expect("a Value serialises"))
}

/// The service: routes one request.
pub async fn handle(
    shared: Arc<Shared>,
    inst: Arc<Instance>,
    req: HttpRequest<Incoming>,
) -> Result<Response<SimBody>, Infallible> {
    let api = match (req.method(), req.uri().path()) {
        (&Method::POST, "/api/generate") => Api::Generate,
        (&Method::POST, "/api/chat") => Api::Chat,
        (&Method::POST, "/v1/chat/completions") => Api::OpenAi,
        (&Method::GET, "/api/tags") => return Ok(json(StatusCode::OK, shared.tags())),
        (&Method::GET, "/api/version") => {
            return Ok(json(StatusCode::OK, serde_json::json!({"version": super::VERSION})))
        }
        (&Method::GET, "/api/ps") => return Ok(json(StatusCode::OK, shared.ps(&inst))),
        (&Method::GET | &Method::HEAD, "/") => {
            return Ok(respond(StatusCode::OK, "text/plain; charset=utf-8", b"Ollama is running".to_vec()))
        }
        _ => return Ok(respond(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", b"404 page not found".to_vec())),
    };
    let err = |status: StatusCode, message: &str| {
        if api == Api::OpenAi {
            let kind = if status == StatusCode::NOT_FOUND { "invalid_request_error" } else { "api_error" };
            respond(status, "application/json", wire::openai_error(message, kind))
        } else {
            respond(status, "application/json; charset=utf-8", wire::ollama_error(message))
        }
    };
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(err(StatusCode::BAD_REQUEST, &format!("reading the request body: {e}"))),
    };
    let request = match sim_request::parse(api, &body, &shared.config.models) {
        Ok(r) => r,
        Err(e) => {
            let status = StatusCode::from_u16(e.status).expect("parse answers 400 or 404");
            return Ok(err(status, &e.message));
        }
    };
    match inst.fault {
        Some(Fault::SlowHeaders(d)) => weft::time::sleep(d).await,
        Some(Fault::NonJson500) => {
            return Ok(respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", b"Internal Server Error".to_vec()))
        }
        Some(Fault::Busy) => return Ok(err(StatusCode::SERVICE_UNAVAILABLE, wire::SERVER_BUSY)),
        _ => {}
    }
    let stream = request.stream.unwrap_or(api != Api::OpenAi);
    let arrived = Instant::now();
    let id = shared.next_id();
    let (slot, reload) = match admit(&inst, id, request.runner_opts()).await {
        Ok(s) => s,
        Err(()) => return Ok(err(StatusCode::SERVICE_UNAVAILABLE, wire::SERVER_BUSY)),
    };
    let job = Job::new(&shared, &inst, &request, api, id, arrived, reload);
    if !stream {
        let mut sink = Sink::Discard;
        let Some((text, stats, reason)) = job.run(slot, &mut sink).await else {
            return Ok(err(StatusCode::INTERNAL_SERVER_ERROR, "simulated runner failure"));
        };
        return Ok(single(api, &request.model, id, &text, stats, reason));
    }
    let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(32);
    drop(weft::spawn(async move {
        let _ = job.run(slot, &mut Sink::Chan(tx)).await;
    }));
    let content_type = if api == Api::OpenAi { "text/event-stream" } else { "application/x-ndjson" };
    Ok(Response::builder()
        .status(StatusCode::OK)
        .header("content-type", content_type)
        .body(SimBody::Chan(rx))
        .expect("static headers are valid"))
}

/// A non-streamed answer: one JSON object with the whole text and the final statistics.
fn single(api: Api, model: &str, id: u64, text: &str, s: Stats, reason: &str) -> Response<SimBody> {
    let v = match api {
        Api::Generate | Api::Chat => {
            let mut v = serde_json::json!({
                "model": model, "created_at": wire::now_rfc3339(), "done": true, "done_reason": reason,
                "total_duration": s.total_duration, "load_duration": s.load_duration,
                "prompt_eval_count": s.prompt_eval_count, "prompt_eval_duration": s.prompt_eval_duration,
                "eval_count": s.eval_count, "eval_duration": s.eval_duration,
            });
            if api == Api::Generate {
                v["response"] = text.into();
            } else {
                v["message"] = serde_json::json!({"role": "assistant", "content": text});
            }
            v
        }
        Api::OpenAi => serde_json::json!({
            "id": format!("chatcmpl-{id}"), "object": "chat.completion", "created": wire::unix_now(), "model": model,
            "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": reason}],
            "usage": {"prompt_tokens": s.prompt_eval_count, "completion_tokens": s.eval_count,
                      "total_tokens": s.prompt_eval_count + s.eval_count},
        }),
    };
    json(StatusCode::OK, v)
}

/// Where a job's lines go: the streamed body's channel, or nowhere (non-streamed answers are
/// built from the returned text and statistics).
enum Sink {
    Chan(mpsc::Sender<io::Result<Bytes>>),
    Discard,
}

impl Sink {
    /// False when the client is gone.
    async fn emit(&mut self, item: io::Result<Bytes>) -> bool {
        match self {
            Sink::Chan(tx) => tx.send(item).await.is_ok(),
            Sink::Discard => item.is_ok(),
        }
    }
}

/// One admitted generation: what to produce and how fast.
struct Job {
    shared: Arc<Shared>,
    inst: Arc<Instance>,
    api: Api,
    model: String,
    id: u64,
    arrived: Instant,
    reload: bool,
    opts: RunnerOpts,
    prompt_tokens: u32,
    tokens: u32,
    length_limited: bool,
    text_rng: Rng,
    jitter_rng: Rng,
    include_usage: bool,
}

impl Job {
    fn new(
        shared: &Arc<Shared>,
        inst: &Arc<Instance>,
        r: &wire::Request,
        api: Api,
        id: u64,
        arrived: Instant,
        reload: bool,
    ) -> Job {
        let opts = r.runner_opts();
        let prompt = r.prompt_text();
        // Text: a fixed seed, or greedy decoding (temperature 0) from the prompt, or fresh.
        let text_seed = match (r.seed(), r.temperature()) {
            (Some(s), _) => s as u64,
            (None, t) if t <= 0.0 => {
                prompt.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
            }
            (None, _) => shared.config.seed ^ id.wrapping_mul(0x2545_F491_4F6C_DD1D),
        };
        let mut text_rng = Rng::new(text_seed);
        // The "natural" answer length; num_predict caps it (done_reason "length").
        let natural = shared.config.profile.default_predict + (text_rng.next_u64() % 16) as u32;
        let sim_request::Sizing { prompt_tokens, tokens, length_limited } = r.sizing(&prompt, natural);
        Job {
            shared: shared.clone(),
            inst: inst.clone(),
            api,
            model: r.model.clone(),
            id,
            arrived,
            reload,
            opts,
            prompt_tokens,
            tokens,
            length_limited,
            text_rng,
            jitter_rng: Rng::new(shared.config.seed.wrapping_add(id)),
            include_usage: r.include_usage(),
        }
    }

    /// Produces every line into `sink`; returns the text, the final statistics and the done
    /// reason, or `None` when a fault or a departed client ended it early.
    async fn run(mut self, slot: Slot, sink: &mut Sink) -> Option<(String, Stats, &'static str)> {
        let profile = &self.shared.config.profile;
        let load = if self.reload { profile.load } else { Duration::ZERO };
        let prefill = self.jitter_rng.jittered(profile.prefill(self.opts, self.prompt_tokens), profile.jitter);
        weft::time::sleep(load + prefill).await;
        let base = profile.base_inter_token(self.opts);
        let gen_start = Instant::now();
        let mut deadline = gen_start;
        let chat_id = format!("chatcmpl-{}", self.id);
        let created = wire::unix_now();
        let mut buf = Vec::with_capacity(256);
        let mut text = String::new();
        for i in 0..self.tokens {
            match self.inst.fault {
                Some(Fault::Stall { after, duration }) if after == i => weft::time::sleep(duration).await,
                Some(Fault::Truncate { after }) if after == i => {
                    // An error ends the body: hyper drops the connection without the chunked
                    // terminator, as a crashed server would.
                    sink.emit(Err(io::Error::other("simulated truncation"))).await;
                    return None;
                }
                Some(Fault::Malformed { after }) if after == i => {
                    // A departed client shows at the next token's emit.
                    let _ = sink.emit(Ok(Bytes::from_static(b"{\"model\":\"broken\",\"response\":\n"))).await;
                }
                Some(Fault::MidStreamError { after }) if after == i => {
                    let line = if self.api == Api::OpenAi {
                        let mut l = b"data: ".to_vec();
                        l.extend(wire::openai_error("simulated runner failure", "api_error"));
                        l.extend_from_slice(b"\n\n");
                        l
                    } else {
                        wire::ollama_error("simulated runner failure")
                    };
                    sink.emit(Ok(Bytes::from(line))).await;
                    return None;
                }
                _ => {}
            }
            let factor =
                load_factor(profile.full_load_factor, self.inst.running(), self.inst.state.lock().unwrap().0.slots());
            deadline += self.jitter_rng.jittered(base.mul_f64(factor), profile.jitter);
            weft::time::sleep_until(deadline).await;
            let word = wire::WORDS[(self.text_rng.next_u64() % wire::WORDS.len() as u64) as usize];
            buf.clear();
            self.line(&mut buf, Some(word), None, i == 0, &chat_id, created);
            text.push_str(word);
            if !sink.emit(Ok(Bytes::copy_from_slice(&buf))).await {
                return None;
            }
        }
        let eval_duration = gen_start.elapsed();
        let stats = Stats {
            total_duration: self.arrived.elapsed().as_nanos() as u64,
            load_duration: load.as_nanos() as u64,
            prompt_eval_count: self.prompt_tokens,
            prompt_eval_duration: prefill.as_nanos() as u64,
            eval_count: self.tokens,
            eval_duration: eval_duration.as_nanos() as u64,
        };
        buf.clear();
        self.line(&mut buf, None, Some(stats), false, &chat_id, created);
        let delivered = sink.emit(Ok(Bytes::copy_from_slice(&buf))).await;
        drop(slot);
        delivered.then_some((text, stats, if self.length_limited { "length" } else { "stop" }))
    }

    /// Serialises one line (`stats` = the final one) into `buf`.
    fn line(
        &self,
        buf: &mut Vec<u8>,
        word: Option<&str>,
        stats: Option<Stats>,
        first: bool,
        chat_id: &str,
        created: u64,
    ) {
        let reason = if self.length_limited { "length" } else { "stop" };
        match self.api {
            Api::Generate | Api::Chat => {
                let created_at = wire::now_rfc3339();
                let text = word.unwrap_or("");
                let line = OllamaLine {
                    model: &self.model,
                    created_at: &created_at,
                    response: (self.api == Api::Generate).then_some(text),
                    message: (self.api == Api::Chat).then_some(ChatMsg { role: "assistant", content: text }),
                    done: stats.is_some(),
                    done_reason: stats.map(|_| reason),
                    stats,
                };
                serde_json::to_writer(&mut *buf, &line).expect("a line serialises");
                buf.push(b'\n');
            }
            Api::OpenAi => {
                let chunk = |choices, usage| OpenAiChunk {
                    id: chat_id,
                    object: "chat.completion.chunk",
                    created,
                    model: &self.model,
                    system_fingerprint: "fp_ollama",
                    choices,
                    usage,
                };
                let sse = |buf: &mut Vec<u8>, c: &OpenAiChunk<'_>| {
                    buf.extend_from_slice(b"data: ");
                    serde_json::to_writer(&mut *buf, c).expect("a chunk serialises");
                    buf.extend_from_slice(b"\n\n");
                };
                match stats {
                    None => {
                        let role = first.then_some("assistant");
                        let delta = Delta { role, content: word };
                        sse(buf, &chunk(vec![ChunkChoice { index: 0, delta, finish_reason: None }], None));
                    }
                    Some(s) => {
                        let delta = Delta { role: None, content: Some("") };
                        sse(buf, &chunk(vec![ChunkChoice { index: 0, delta, finish_reason: Some(reason) }], None));
                        if self.include_usage {
                            let usage = Usage {
                                prompt_tokens: s.prompt_eval_count,
                                completion_tokens: s.eval_count,
                                total_tokens: s.prompt_eval_count + s.eval_count,
                            };
                            sse(buf, &chunk(Vec::new(), Some(usage)));
                        }
                        buf.extend_from_slice(b"data: [DONE]\n\n");
                    }
                }
            }
        }
    }
}
