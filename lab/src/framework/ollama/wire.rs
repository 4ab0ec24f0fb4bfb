//! The simulator's wire formats: request bodies as Ollama and the OpenAI-compatible endpoint
//! accept them (parsed and checked in `weft_lab_agent::sim_request`, where the fuzz target
//! reaches them), and the lines it writes (NDJSON for `/api/*`, SSE `data:` events for
//! `/v1/chat/completions`), field names and units (nanoseconds) as Ollama's `docs/api.md`
//! documents them.
//!
//! Lines are serialised with serde from borrowed structs: one allocation-free pass per token
//! into a reused buffer, with correct JSON escaping of whatever text a token holds.

use serde::Serialize;

pub use weft_lab_agent::sim_request::{count_tokens, not_found, Request};

/// The final line's statistics (all durations in nanoseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    pub total_duration: u64,
    pub load_duration: u64,
    pub prompt_eval_count: u32,
    pub prompt_eval_duration: u64,
    pub eval_count: u32,
    pub eval_duration: u64,
}

#[derive(Serialize)]
pub struct ChatMsg<'a> {
    pub role: &'static str,
    pub content: &'a str,
}

/// One `/api/generate` (`response`) or `/api/chat` (`message`) line.
#[derive(Serialize)]
pub struct OllamaLine<'a> {
    pub model: &'a str,
    pub created_at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<ChatMsg<'a>>,
    pub done: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_reason: Option<&'a str>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
}

#[derive(Serialize)]
pub struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<&'a str>,
}

#[derive(Serialize)]
pub struct ChunkChoice<'a> {
    pub index: u32,
    pub delta: Delta<'a>,
    pub finish_reason: Option<&'a str>,
}

#[derive(Clone, Copy, Serialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

/// One `chat.completion.chunk` SSE event body.
#[derive(Serialize)]
pub struct OpenAiChunk<'a> {
    pub id: &'a str,
    pub object: &'static str,
    pub created: u64,
    pub model: &'a str,
    pub system_fingerprint: &'static str,
    pub choices: Vec<ChunkChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// `{"error":"..."}` (Ollama) body.
pub fn ollama_error(message: &str) -> Vec<u8> {
    let mut v = serde_json::to_vec(&serde_json::json!({ "error": message })).expect("a string map serialises");
    v.push(b'\n');
    v
}

/// OpenAI's error envelope.
pub fn openai_error(message: &str, kind: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "error": { "message": message, "type": kind, "param": null, "code": null }
    }))
    .expect("a string map serialises")
}

/// Ollama's 503 text when `OLLAMA_MAX_QUEUE` is exceeded.
pub const SERVER_BUSY: &str = "server busy, please try again.  maximum pending requests exceeded";

/// An RFC 3339 timestamp with nanoseconds (Ollama's `created_at`).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_nanos(std::time::SystemTime::now()).to_string()
}

pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A small vocabulary the simulated model "generates" from.
pub const WORDS: [&str; 32] = [
    "the ",
    "agent ",
    "latency ",
    "runtime ",
    "throughput ",
    "of ",
    "a ",
    "stream ",
    "tokens ",
    "per ",
    "second ",
    "scheduler ",
    "and ",
    "efficiency ",
    "is ",
    "measured ",
    "with ",
    "two ",
    "workers ",
    "report ",
    "analysis ",
    "shows ",
    "that ",
    "queue ",
    "model ",
    "server ",
    "under ",
    "load ",
    "remains ",
    "stable ",
    "while ",
    "\"quoted\" ",
];
