//! Asynchronous I/O traits and helpers, tokio-shaped.
//!
//! The traits (`AsyncRead`, `AsyncWrite`, `AsyncBufRead`, `AsyncSeek`, `ReadBuf`), their
//! `*Ext` extensions and the `io-util` adapters come from one of two places, chosen by the
//! `tokio-traits` feature, with the same names and signatures either way:
//! - on (the default, weft beside a real tokio): tokio's, from the `tokio` crate with no
//!   runtime features, so tokio-util codecs, tokio-rustls and hyper-util's `TokioIo` take weft
//!   sockets unchanged;
//! - off (weft *is* tokio: the `tokio` facade crate, `compat/tokio/`): weft's own, in `own/`,
//!   so no real tokio is in the graph (it would depend on itself).
//!
//! weft's sockets also implement futures-io's `AsyncRead`/`AsyncWrite`. `Interest` and `Ready`
//! are weft's own (tokio only exposes them with its `net` feature, which would pull in its
//! reactor). `stdin`, `stdout` and `stderr` are weft's, run on the blocking pool (`stdio.rs`);
//! so are `empty`, `repeat` and `sink` (`util.rs`), the in-memory pipes `simplex` and `duplex`
//! (written once, against whichever traits are exported) and `copy` and `copy_buf`
//! (`coop_io.rs`): all of these spend weft's coop budget, not tokio's.

mod coop_io;
mod duplex;
#[cfg(not(feature = "tokio-traits"))]
mod own;
mod ready;
mod simplex;
mod stdio;
#[cfg(unix)]
pub mod unix;
mod util;

pub use coop_io::{copy, copy_buf};
pub use duplex::{duplex, DuplexStream};
pub use ready::{Interest, Ready};
pub use simplex::{simplex, SimplexStream};
pub use std::io::{Error, ErrorKind, Result};
pub use stdio::{stderr, stdin, stdout, Stderr, Stdin, Stdout};
pub use util::{empty, repeat, sink, Empty, Repeat, Sink};

/// The one list of the traits and `io-util` items whose source the `tokio-traits` feature
/// picks: weft's own (`own/`) when weft is tokio, tokio's beside a real tokio.
macro_rules! traits_and_helpers {
    ($($name:ident),* $(,)?) => {
        #[cfg(not(feature = "tokio-traits"))]
        pub use own::{$($name),*};
        #[cfg(feature = "tokio-traits")]
        pub use tokio::io::{$($name),*};
    };
}

traits_and_helpers!(
    copy_bidirectional,
    copy_bidirectional_with_sizes,
    join,
    split,
    AsyncBufRead,
    AsyncBufReadExt,
    AsyncRead,
    AsyncReadExt,
    AsyncSeek,
    AsyncSeekExt,
    AsyncWrite,
    AsyncWriteExt,
    BufReader,
    BufStream,
    BufWriter,
    Chain,
    Join,
    Lines,
    ReadBuf,
    ReadHalf,
    SeekFrom,
    Split,
    Take,
    WriteHalf,
);
