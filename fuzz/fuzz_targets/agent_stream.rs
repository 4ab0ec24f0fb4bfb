//! The agents client's stream reader (`weft_lab_agent::stream::stream_call`): a model server's
//! response body, Ollama NDJSON or OpenAI SSE, arriving in arbitrary chunks. Every body ends in
//! `Ok` or a typed `CallError` once it ends (no hang, no panic), and an `Ok` counts no more
//! tokens than the body has lines.
#![no_main]

use std::time::Duration;

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use weft_lab_agent::stream::{stream_call, BoxFuture, Endpoint, HttpClient, HttpResponse, Post, OPENAI_PATH};
use weft_lab_agent::Sleep;

/// A body of given chunks behind a given status.
struct Canned {
    status: u16,
    chunks: Vec<Vec<u8>>,
}

impl HttpClient for Canned {
    fn post<'a>(&'a self, _: Post<'a>) -> BoxFuture<'a, Result<HttpResponse, String>> {
        let chunks: Vec<Result<Bytes, String>> = self.chunks.iter().map(|c| Ok(Bytes::from(c.clone()))).collect();
        let status = self.status;
        Box::pin(async move { Ok(HttpResponse { status, body: Box::pin(futures_lite::stream::iter(chunks)) }) })
    }
}

/// The idle timeout never fires: the body's end, not a timer, must end every call.
struct NeverIdle;

impl Sleep for NeverIdle {
    fn sleep(_: Duration) -> impl std::future::Future<Output = ()> + Send {
        std::future::pending()
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else { return };
    let path = if mode & 1 == 1 { OPENAI_PATH } else { "/api/generate" };
    let status = if mode & 2 == 2 { 500 } else { 200 };
    // Chunk boundaries from the mode's high bits: 1..=32 bytes per chunk.
    let step = usize::from(mode >> 3) + 1;
    let chunks: Vec<Vec<u8>> = body.chunks(step).map(<[u8]>::to_vec).collect();
    let lines = body.iter().filter(|&&b| b == b'\n').count() as u64;
    let endpoint = Endpoint { base: "http://fuzz".into(), addr: ([127, 0, 0, 1], 9).into(), authority: "fuzz".into() };
    let client = Canned { status, chunks };
    let call = stream_call::<NeverIdle, _>(&client, &endpoint, path, Vec::new(), Duration::from_secs(3600));
    if let Ok(stats) = futures_lite::future::block_on(call) {
        assert_eq!(status, 200, "a non-200 status gave Ok");
        assert!(stats.tokens <= lines, "{} tokens from {lines} lines", stats.tokens);
    }
});
