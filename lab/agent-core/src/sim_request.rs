//! What the Ollama simulator accepts: request bodies of `/api/generate`, `/api/chat` and
//! `/v1/chat/completions` as Ollama's `docs/api.md` and OpenAI's chat API define them, checked
//! the way Ollama checks them, and sized into a job (prompt tokens, answer tokens, runner
//! options).
//!
//! It lives beside the client (not in weft-lab's `framework::ollama`) so that the fuzz target
//! `sim_request` can drive exactly the simulator's parser without building the lab, and can
//! round-trip what the agents client writes ([`crate::agent::request_body`]) through it.
//!
//! Bad input is a [`RequestError`] carrying the HTTP status Ollama answers with (400 for a
//! body that is not a request, 404 for an unknown model), never a panic. Numbers a client
//! controls are bounded before they size anything: `num_ctx` is clamped to [`MAX_CTX`] (the
//! simulated model's trained context, as Ollama clamps it), and a `num_predict` beyond `u32`
//! means "no limit", not its low 32 bits.

use serde::Deserialize;

/// The simulated model's (gemma3:4b's) trained context length: a larger `num_ctx` is clamped to it.
pub const MAX_CTX: u32 = 131_072;

/// Which endpoint a request came in on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Api {
    Generate,
    Chat,
    OpenAi,
}

/// The runner options that decide whether a loaded model must be reloaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RunnerOpts {
    pub num_ctx: u32,
    /// Layers offloaded to the GPU (TR115's "GPU 80/100"); 100 = everything.
    pub num_gpu: u32,
}

impl Default for RunnerOpts {
    /// Ollama's defaults for a small model: 2048-token context, every layer on the GPU.
    fn default() -> Self {
        RunnerOpts { num_ctx: 2048, num_gpu: 100 }
    }
}

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

/// A request the simulator refuses, with the status Ollama answers it with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestError {
    pub status: u16,
    pub message: String,
}

impl RequestError {
    fn bad(message: impl Into<String>) -> RequestError {
        RequestError { status: 400, message: message.into() }
    }
}

/// Parses and checks one body that arrived on `api`, against the models the server has
/// (`name` or `name:latest`), in Ollama's order: not JSON or not a request → 400, no model →
/// 400, an unknown model → 404, a chat without messages → 400.
pub fn parse(api: Api, body: &[u8], models: &[String]) -> Result<Request, RequestError> {
    let request: Request = serde_json::from_slice(body).map_err(|e| RequestError::bad(e.to_string()))?;
    if request.model.is_empty() {
        return Err(RequestError::bad("model is required"));
    }
    if !models.iter().any(|m| *m == request.model || m.strip_suffix(":latest") == Some(request.model.as_str())) {
        return Err(RequestError { status: 404, message: not_found(&request.model) });
    }
    if api == Api::Chat && request.messages.is_none() {
        return Err(RequestError::bad("messages are required"));
    }
    Ok(request)
}

/// Ollama's 404 text for an unknown model.
pub fn not_found(model: &str) -> String {
    format!("model \"{model}\" not found, try pulling it first")
}

/// Approximate token count of a prompt (≈ 4 characters a token, as tokenizers average on
/// English text).
pub fn count_tokens(text: &str) -> u32 {
    u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX)
}

/// How big a job is: what the prompt costs and how many tokens the answer has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizing {
    /// Prompt tokens, at most the context.
    pub prompt_tokens: u32,
    /// Answer tokens.
    pub tokens: u32,
    /// The answer stopped at `num_predict` or the context's end (`done_reason` "length").
    pub length_limited: bool,
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

    /// The runner options asked for, `num_ctx` clamped to [`MAX_CTX`].
    pub fn runner_opts(&self) -> RunnerOpts {
        let d = RunnerOpts::default();
        RunnerOpts {
            num_ctx: self.options.num_ctx.unwrap_or(d.num_ctx).min(MAX_CTX),
            num_gpu: self.options.num_gpu.unwrap_or(d.num_gpu),
        }
    }

    /// Ollama's `num_predict`, or OpenAI's `max_tokens` / `max_completion_tokens`.
    pub fn num_predict(&self) -> Option<i64> {
        self.options.num_predict.or(self.max_tokens).or(self.max_completion_tokens)
    }

    pub fn temperature(&self) -> f64 {
        self.options.temperature.or(self.temperature).unwrap_or(0.8)
    }

    pub fn seed(&self) -> Option<i64> {
        self.options.seed.or(self.seed)
    }

    pub fn include_usage(&self) -> bool {
        self.stream_options.as_ref().is_some_and(|o| o.include_usage)
    }

    /// Sizes the job whose model would answer `natural` tokens unprompted: `num_predict` in
    /// `0..=natural` cuts the answer there; otherwise (absent, negative as Ollama's "no
    /// limit", or beyond the answer) it runs to its natural end or the context's, whichever
    /// comes first.
    pub fn sizing(&self, prompt: &str, natural: u32) -> Sizing {
        let num_ctx = self.runner_opts().num_ctx;
        let prompt_tokens = count_tokens(prompt).min(num_ctx);
        let budget = num_ctx.saturating_sub(prompt_tokens).max(1);
        match self.num_predict().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if n <= natural => Sizing { prompt_tokens, tokens: n, length_limited: true },
            _ => Sizing { prompt_tokens, tokens: natural.min(budget), length_limited: natural > budget },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models() -> Vec<String> {
        vec!["gemma3:latest".to_string()]
    }

    #[test]
    fn bad_bodies_get_ollamas_statuses() {
        let status = |api, body: &str| parse(api, body.as_bytes(), &models()).map(|_| 200).unwrap_or_else(|e| e.status);
        assert_eq!(status(Api::Generate, "not json"), 400);
        assert_eq!(status(Api::Generate, r#"{"model":7}"#), 400);
        assert_eq!(status(Api::Generate, r#"{"prompt":"hi"}"#), 400);
        assert_eq!(status(Api::Generate, r#"{"model":"llama9"}"#), 404);
        assert_eq!(status(Api::Chat, r#"{"model":"gemma3"}"#), 400);
        assert_eq!(status(Api::Chat, r#"{"model":"gemma3","messages":[]}"#), 200);
        assert_eq!(status(Api::OpenAi, r#"{"model":"gemma3:latest","messages":[{"content":"x"}]}"#), 200);
    }

    #[test]
    fn a_num_predict_beyond_u32_is_no_limit_not_its_low_bits() {
        // 2^32 + 5 once truncated to a 5-token answer.
        let r = parse(Api::Generate, br#"{"model":"gemma3","options":{"num_predict":4294967301}}"#, &models()).unwrap();
        assert_eq!(r.sizing("", 100), Sizing { prompt_tokens: 0, tokens: 100, length_limited: false });
        let r = parse(Api::Generate, br#"{"model":"gemma3","options":{"num_predict":7}}"#, &models()).unwrap();
        assert_eq!(r.sizing("", 100), Sizing { prompt_tokens: 0, tokens: 7, length_limited: true });
        let r = parse(Api::Generate, br#"{"model":"gemma3","options":{"num_predict":-1}}"#, &models()).unwrap();
        assert_eq!(r.sizing("", 100).tokens, 100);
    }

    #[test]
    fn the_context_is_clamped_and_bounds_prompt_and_answer() {
        let r = parse(Api::Generate, br#"{"model":"gemma3","options":{"num_ctx":4294967295}}"#, &models()).unwrap();
        assert_eq!(r.runner_opts().num_ctx, MAX_CTX);
        let r = parse(Api::Generate, br#"{"model":"gemma3","options":{"num_ctx":8}}"#, &models()).unwrap();
        let s = r.sizing(&"word".repeat(100), 100);
        assert_eq!(s, Sizing { prompt_tokens: 8, tokens: 1, length_limited: true });
    }
}
