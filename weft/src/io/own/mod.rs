//! weft's own implementation of tokio's I/O traits and `io-util` helpers, used when weft *is*
//! tokio (the `tokio` facade crate builds weft without the `tokio-traits` feature, so no real
//! tokio is in the graph).
//!
//! Written from tokio 1.54's documented API (names, signatures, semantics, cancel-safety
//! notes), not its source. One concept per file; the futures returned by the `*Ext` traits
//! are public types in private modules (awaitable, not nameable), as tokio's are. With
//! `tokio-traits` on (the default, weft beside a real tokio) `weft::io` re-exports tokio's
//! traits instead, so tokio-util codecs and hyper-util's `TokioIo` take weft sockets; the two
//! configurations have the same names and signatures.
//!
//! Deliberate differences from tokio, all accepting more code than tokio does: the `*Ext`
//! futures are `Unpin`; `read_line` and `read_to_string` leave the destination as it was on
//! error or cancellation; `split`'s halves are `Sync` when `T: Send`.

/// `get_ref`, `get_mut`, `get_pin_mut` and `into_inner` of an adapter over one I/O object in
/// its pin-projected `inner` field (tokio's names); the notes say what each bypasses or loses.
macro_rules! inner_accessors {
    ($T:ident, $what:literal, get_mut: $get_mut:literal, into_inner: $into_inner:literal) => {
        #[doc = concat!("The underlying ", $what, ".")]
        pub fn get_ref(&self) -> &$T {
            &self.inner
        }

        #[doc = concat!("The underlying ", $what, ", mutably. ", $get_mut)]
        pub fn get_mut(&mut self) -> &mut $T {
            &mut self.inner
        }

        #[doc = concat!("The underlying ", $what, ", pinned.")]
        pub fn get_pin_mut(self: std::pin::Pin<&mut Self>) -> std::pin::Pin<&mut $T> {
            self.project().inner
        }

        #[doc = concat!("Returns the underlying ", $what, ". ", $into_inner)]
        pub fn into_inner(self) -> $T {
            self.inner
        }
    };
}

mod buf_read_ext;
mod buf_read_futures;
mod buf_reader;
mod buf_stream;
mod buf_writer;
mod chain;
mod copy;
mod copy_bidirectional;
mod copy_buffer;
mod forward;
mod join;
mod lines;
mod read_buf;
mod read_ext;
mod read_futures;
mod seek_ext;
mod split;
mod split_segments;
mod take;
mod traits;
mod write_ext;
mod write_futures;

pub use buf_read_ext::AsyncBufReadExt;
pub use buf_reader::BufReader;
pub use buf_stream::BufStream;
pub use buf_writer::BufWriter;
pub use chain::Chain;
pub(crate) use copy::{copy, copy_buf};
pub use copy_bidirectional::{copy_bidirectional, copy_bidirectional_with_sizes};
pub use join::{join, Join};
pub use lines::Lines;
pub use read_buf::ReadBuf;
pub use read_ext::AsyncReadExt;
pub use seek_ext::AsyncSeekExt;
pub use split::{split, ReadHalf, WriteHalf};
pub use split_segments::Split;
pub use std::io::SeekFrom;
pub use take::Take;
pub use traits::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite};
pub use write_ext::AsyncWriteExt;
