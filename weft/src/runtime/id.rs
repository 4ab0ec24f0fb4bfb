//! `runtime::Id`: tells live runtimes apart (tokio's `Handle::id`).
//!
//! Derived from the address of the scheduler's shared state, which is unique while the runtime
//! lives and costs no counter; like tokio's, an id is only unique among runtimes alive together.

use std::fmt;
use std::num::NonZeroU64;

/// An opaque id of a runtime, unique among the runtimes currently alive.
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq)]
pub struct Id(NonZeroU64);

impl Id {
    pub(crate) fn from_addr(addr: usize) -> Id {
        Id(NonZeroU64::new(addr as u64).expect("a scheduler's address is never null"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
