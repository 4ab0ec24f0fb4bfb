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

pub mod compat;
pub mod fs;
pub mod io;
pub(crate) mod loom;
pub mod net;
pub mod runtime;
pub mod signal;
pub mod sync;
pub mod task;
pub mod time;
pub(crate) mod util;

pub use task::spawn;

#[cfg(feature = "macros")]
pub use weft_macros::{main, test};

#[doc(hidden)]
pub mod __private {
    //! Used by the code `#[weft::main]` / `#[weft::test]` expand to.
    pub use crate::runtime::Builder;
}
