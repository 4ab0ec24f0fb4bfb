//! weft: a fast, tokio-shaped async runtime.
//!
//! ```
//! use std::time::Duration;
//!
//! let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
//! let sum = rt.block_on(async {
//!     let handles: Vec<_> = (0..10u64).map(|i| weft::spawn(async move { i * i })).collect();
//!     weft::time::sleep(Duration::from_millis(1)).await;
//!     let mut sum = 0;
//!     for h in handles {
//!         sum += h.await.unwrap();
//!     }
//!     sum
//! });
//! assert_eq!(sum, 285);
//! ```
//!
//! The API mirrors tokio's names (`runtime`, `task`, `time`, `spawn`), so code written for
//! tokio ports by renaming the crate. See `ARCHITECTURE.md` for the map of the code, and the
//! `//!` essays of `task`, `runtime::scheduler` and `time` for the designs.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

// tokio's unstable features weft does not implement: a dependency asking for one learns it at
// compile time, never through a stub that changes behaviour at run time.
#[cfg(feature = "io-uring")]
compile_error!(
    "weft does not implement tokio's unstable `io-uring` feature (file I/O through io_uring); \
     remove `io-uring` from the tokio/weft features of the crate that enables it (`cargo tree -e features -i weft` names it)"
);
#[cfg(feature = "taskdump")]
compile_error!(
    "weft does not implement tokio's unstable `taskdump` feature (Handle::dump); weft's task dump is \
     `weft::metrics::tasks` (WEFT_METRICS_DUMP). Remove `taskdump` from the features of the crate that enables it \
     (`cargo tree -e features -i weft` names it)"
);

// Not under loom: see the note in Cargo.toml.
pub mod fs;
#[cfg(all(feature = "hyper", not(loom)))]
pub mod hyper;
pub mod io;
pub(crate) mod loom;
#[doc(hidden)]
pub mod macros;
pub mod metrics;
pub mod net;
pub mod process;
pub mod runtime;
pub mod signal;
/// Streams live in the `tokio-stream` crate (and `futures`' `Stream` trait), as in tokio, whose
/// `tokio::stream` module is this same empty placeholder until `Stream` reaches `std`.
pub mod stream {}
pub mod sync;
pub mod task;
pub mod time;
pub(crate) mod util;

pub use task::spawn;

#[cfg(feature = "macros")]
pub use weft_macros::{main, test};

pub mod arena {
    //! Memory from the runtime's task arena for values made and dropped with tasks, as actor
    //! cells and channels are (weft only: tokio has no such item).
    //!
    //! An [`ArenaArc`] created on a runtime thread takes its memory from that runtime's arena,
    //! whose per-thread caches hand slots out and back with a list push or pop; created
    //! elsewhere, from the global allocator. It is an `Arc` without weak references.
    pub use crate::task::arena_arc::ArenaArc;
}

#[doc(hidden)]
pub mod __private {
    //! Used by the code `#[weft::main]` / `#[weft::test]` expand to.
    pub use crate::runtime::Builder;
    #[cfg(feature = "macros")]
    pub use weft_macros::{join_impl, select_impl, try_join_impl};
}
