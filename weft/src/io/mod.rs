//! Asynchronous I/O traits and helpers, tokio-shaped.
//!
//! weft's sockets implement tokio's `AsyncRead`/`AsyncWrite` (the `tokio` crate is a
//! dependency with *no* runtime features: only its trait definitions and `io-util` helpers)
//! and futures-io's `AsyncRead`/`AsyncWrite`. Re-exporting tokio's traits, rather than
//! defining look-alikes, is what makes `use weft as tokio;` code, tokio-util codecs and
//! tokio-rustls work on weft sockets unchanged. `Interest` and `Ready` are weft's own (tokio
//! only exposes them with its `net` feature, which would pull in its reactor). `stdin`,
//! `stdout` and `stderr` are weft's, run on the blocking pool (`stdio.rs`); so are `empty`,
//! `repeat` and `sink` (`util.rs`) and `copy`, `copy_buf` and `duplex` (`coop_io.rs`),
//! which must spend weft's coop budget, not tokio's.

mod coop_io;
mod ready;
mod stdio;
#[cfg(unix)]
pub mod unix;
mod util;

pub use coop_io::{copy, copy_buf, duplex, DuplexStream};
pub use ready::{Interest, Ready};
pub use stdio::{stderr, stdin, stdout, Stderr, Stdin, Stdout};
pub use util::{empty, repeat, sink, Empty, Repeat, Sink};

pub use std::io::{Error, ErrorKind, Result};
pub use tokio::io::{
    copy_bidirectional, copy_bidirectional_with_sizes, join, simplex, split, AsyncBufRead, AsyncBufReadExt, AsyncRead,
    AsyncReadExt, AsyncSeek, AsyncSeekExt, AsyncWrite, AsyncWriteExt, BufReader, BufStream, BufWriter, Join, Lines,
    ReadBuf, ReadHalf, SeekFrom, SimplexStream, Split, Take, WriteHalf,
};
