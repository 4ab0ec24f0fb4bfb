//! The agents study's workflow, runtime-neutral: one agent ([`agent::run_agent`]: a blocking
//! data summary, then two streamed LLM calls), the streamed call and its client trait
//! ([`stream`]), and one run as data with the timed part every host runs ([`plan`]); and the
//! other side of the wire, what the Ollama simulator accepts ([`sim_request`]).
//!
//! It is a crate of its own so that it can be compiled into two different dependency graphs
//! and still be written once: weft-lab's (every in-process and async-std row, with the real
//! tokio beside weft), and `lab/services/agents-reqwest`'s, where tokio is patched to weft and
//! reqwest runs on it natively (the `weft-mt+reqwest-patched` row). It names no runtime: the
//! caller brings a [`Sleep`] (for idle timeouts), an [`stream::HttpClient`] and a
//! [`plan::Spawner`].

use std::future::Future;
use std::time::Duration;

pub mod agent;
pub mod plan;
pub mod sim_request;
pub mod stream;

/// A runtime's timer, the one thing the workflow needs from it (a call's idle timeout).
pub trait Sleep: 'static {
    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send;
}
