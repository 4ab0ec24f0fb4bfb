//! The Ollama simulator's request parser (`weft_lab_agent::sim_request`): any body on any of
//! the three endpoints is a request or an error with Ollama's status (400 or 404, with a
//! message), never a panic; a parsed request sizes a job within its context. And the agents
//! client's writer round-trips: a body built by `agent::request_body` from fuzzed model,
//! prompt and options parses back to the same model, prompt and token limit.
#![no_main]

use std::path::PathBuf;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use weft_lab_agent::agent::{request_body, AgentSpec};
use weft_lab_agent::sim_request::{parse, Api, MAX_CTX};
use weft_lab_agent::stream::Endpoint;

fn models() -> Vec<String> {
    vec!["gemma3:latest".to_string()]
}

fn check_parse(api: Api, body: &[u8]) {
    match parse(api, body, &models()) {
        Ok(r) => {
            let opts = r.runner_opts();
            assert!(opts.num_ctx <= MAX_CTX);
            let prompt = r.prompt_text();
            for natural in [0, 100, 115] {
                let s = r.sizing(&prompt, natural);
                assert!(s.prompt_tokens <= opts.num_ctx);
                assert!(s.tokens <= natural.max(1), "{s:?} for natural {natural}");
                if let Some(n) = r.num_predict().and_then(|n| u32::try_from(n).ok()).filter(|&n| n <= natural) {
                    assert_eq!((s.tokens, s.length_limited), (n, true));
                }
            }
        }
        Err(e) => {
            assert!(e.status == 400 || e.status == 404, "status {}", e.status);
            assert!(!e.message.is_empty());
        }
    }
}

fn round_trip(data: &[u8]) {
    let mut parts = data.splitn(3, |&b| b == 0);
    let (Some(head), Some(model), Some(prompt)) = (parts.next(), parts.next(), parts.next()) else { return };
    let model = String::from_utf8_lossy(model).into_owned();
    let prompt = String::from_utf8_lossy(prompt).into_owned();
    let num = |i: usize| head.get(i).copied().map(i64::from);
    let openai = head.first().is_some_and(|b| b & 1 == 1);
    let predict = num(1).map(|n| n - 64);
    let spec = AgentSpec {
        name: "fuzz".into(),
        endpoint: Endpoint::parse("http://127.0.0.1:1").unwrap(),
        model: model.clone(),
        options: serde_json::json!({ "num_predict": predict, "temperature": num(2), "seed": num(3), "num_ctx": num(4) }),
        data_dir: PathBuf::new(),
        idle_timeout: Duration::from_secs(1),
        openai,
    };
    let body = request_body(&spec, prompt.clone());
    let api = if openai { Api::OpenAi } else { Api::Generate };
    let known = model == "gemma3" || model == "gemma3:latest";
    match parse(api, &body, &models()) {
        Ok(r) => {
            assert!(known, "an unknown model {model:?} was accepted");
            assert_eq!(r.model, model);
            assert_eq!(r.prompt_text(), prompt);
            assert_eq!(r.num_predict(), predict);
            assert_eq!(r.stream, Some(true));
        }
        Err(e) if model.is_empty() => assert_eq!(e.status, 400),
        Err(e) => {
            assert!(!known, "the client's own body was refused: {e:?}");
            assert_eq!(e.status, 404);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else { return };
    let api = [Api::Generate, Api::Chat, Api::OpenAi][usize::from(selector % 3)];
    check_parse(api, body);
    round_trip(data);
});
