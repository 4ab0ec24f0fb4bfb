//! weft's own I/O traits and io-util helpers (`weft/src/io/own/`, what `weft::io` is when the
//! `tokio-traits` feature is off, as the `tokio` facade builds it), one module per concept,
//! sharing a tiny executor and mock I/O objects from `support`. Run with
//! `cargo test -p weft --no-default-features --features macros --test own_io` (CI does); with
//! `tokio-traits` on, `weft::io` is tokio's and these tests compile to nothing.
#![cfg(not(feature = "tokio-traits"))]

mod buf_read;
mod buffered;
mod pipes;
mod read;
mod read_buf;
mod support;
mod write;
