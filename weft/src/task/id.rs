//! Task ids: unique for the life of the process, allocated without a global atomic per spawn.
//!
//! Each thread reserves a block of `BLOCK` ids from the global counter and hands them out
//! locally, so the spawn path touches only thread-local memory (one shared `fetch_add` per
//! `BLOCK` spawns). Ids are therefore unique but not ordered across threads.

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroU64;

use crate::loom::unmodeled::{AtomicU64, Ordering::Relaxed};

/// An opaque, process-unique task identifier.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

const BLOCK: u64 = 1024;

static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// (next id to hand out, end of the reserved block)
    static LOCAL: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

impl Id {
    pub(crate) fn next() -> Id {
        let id = LOCAL
            .try_with(|local| {
                let (mut next, mut end) = local.get();
                if next == end {
                    // Relaxed: uniqueness needs only the atomicity of the RMW.
                    next = NEXT_BLOCK.fetch_add(BLOCK, Relaxed);
                    end = next + BLOCK;
                }
                local.set((next + 1, end));
                next
            })
            // Thread-local storage is being torn down: fall back to one id from the counter.
            .unwrap_or_else(|_| NEXT_BLOCK.fetch_add(BLOCK, Relaxed));
        Id(NonZeroU64::new(id).expect("task id space exhausted"))
    }

    /// The id a number from `as_u64` stands for (none for 0, which no task has).
    pub(crate) fn from_u64(v: u64) -> Option<Id> {
        NonZeroU64::new(v).map(Id)
    }

    /// The id as a number (for logs and metrics).
    pub fn as_u64(&self) -> u64 {
        self.0.get()
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.0)
    }
}
