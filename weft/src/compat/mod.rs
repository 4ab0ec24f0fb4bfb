//! Adapters that let ecosystem crates run on weft without another runtime.
//!
//! * `hyper` (cargo feature `hyper`, on by default): hyper 1.x's `rt` traits (executor,
//!   timer, I/O) and a `hyper-util` legacy-client connector, all backed by weft.

#[cfg(feature = "hyper")]
pub mod hyper;
