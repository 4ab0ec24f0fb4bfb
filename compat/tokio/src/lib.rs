//! tokio's API, backed by weft: the crate that `[patch.crates-io] tokio = { path = … }` puts in
//! place of tokio for a whole dependency graph.
//!
//! Everything is weft's, re-exported under tokio's paths (weft mirrors them: `runtime`, `task`,
//! `time`, `io`, `net`, `fs`, `process`, `signal`, `sync`, `spawn`, `main`, `test`, `select!`,
//! `join!`, `try_join!`, `pin!`, `task_local!`). weft is built without its `tokio-traits`
//! feature, so `tokio::io::AsyncRead` and the rest of the I/O traits are weft's own and no real
//! tokio is anywhere in the graph (`cargo tree -i tokio` shows only this crate). weft's extras
//! (`metrics`, `compat`, runtime metrics tokio does not have) come along: a program can ask
//! `Handle::current().metrics().long_poll_count()` to see that weft is what runs.
//!
//! Not here, by design: tokio's internals and its `tokio_unstable`-only APIs that weft does not
//! implement fail at compile time (an unresolved path, or weft's `compile_error!` for the
//! `io-uring` and `taskdump` features), never as a stub that panics at run time.

pub use weft::*;
