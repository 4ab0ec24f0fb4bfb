//! Adapters that let ecosystem crates run on weft without another runtime.
//!
//! * `hyper` (cargo feature `hyper`, on by default): hyper 1.x's `rt` traits (executor,
//!   timer, I/O) and a `hyper-util` legacy-client connector, all backed by weft.

// Not under loom: see the note in Cargo.toml.
#[cfg(all(feature = "hyper", not(loom)))]
pub mod hyper;
