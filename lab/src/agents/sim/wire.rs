//! The simulator's wire formats: request bodies as Ollama and the OpenAI-compatible endpoint
//! accept them, and the lines it writes (NDJSON for `/api/*`, SSE `data:` events for
//! `/v1/chat/completions`), field names and units (nanoseconds) as Ollama's `docs/api.md`
//! documents them.
//!
//! Lines are serialised with serde from borrowed structs: one allocation-free pass per token
//! into a reused buffer, with correct JSON escaping of whatever text a token holds.

use serde::{Deserialize, Serialize};

use super::model::RunnerOpts;

/// `options` of a generate/chat request (the ones the simulator honours; others are ignored,
/// as Ollama ignores unknown options).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Options {
    pub num_predict: Option<i64>,
    pub num_ctx: Option<u32>,
    pub num_gpu: Option<u32>,
    pub temperature: Option<f64>,
    pub seed: Option<i64>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Message {
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub content: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct StreamOptions {
    #[serde(default)]
    pub include_usage: bool,
}

/// `/api/generate`, `/api/chat` and `/v1/chat/completions` bodies in one shape.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Request {
    #[serde(default)]
    pub model: String,
    pub prompt: Option<String>,
    pub messages: Option<Vec<Message>>,
    /// Ollama streams unless told `false`; OpenAI streams only when told `true`.
    pub stream: Option<bool>,
    #[serde(default)]
    pub options: Options,
    // OpenAI-style fields.
    pub max_tokens: Option<i64>,
    pub max_completion_tokens: Option<i64>,
    pub temperature: Option<f64>,
    pub seed: Option<i64>,
    pub stream_options: Option<StreamOptions>,
}

impl Request {
    /// The prompt text (generate) or the concatenated message contents (chat).
    pub fn prompt_text(&self) -> String {
        match (&self.prompt, &self.messages) {
            (Some(p), _) => p.clone(),
            (None, Some(ms)) => ms.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n"),
            (None, None) => String::new(),
        }
    }

    pub fn runner_opts(&self) -> RunnerOpts {
        let d = RunnerOpts::default();
        RunnerOpts {
            num_ctx: self.options.num_ctx.unwrap_or(d.num_ctx),
            num_gpu: self.options.num_gpu.unwrap_or(d.num_gpu),
        }
    }

    pub fn num_predict(&self) -> Option<i64> {
        self.options.num_predict.or(self.max_tokens).or(self.max_completion_tokens)
    }

    pub fn temperature(&self) -> f64 {
        self.options.temperature.or(self.temperature).unwrap_or(0.8)
    }

    pub fn seed(&self) -> Option<i64> {
        self.options.seed.or(self.seed)
    }
}

/// Approximate token count of a prompt (≈ 4 characters a token, as tokenizers average on
/// English text).
pub fn count_tokens(text: &str) -> u32 {
    (text.len() as u32).div_ceil(4)
}

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

/// Ollama's 404 text for an unknown model.
pub fn not_found(model: &str) -> String {
    format!("model \"{model}\" not found, try pulling it first")
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
