//! `Spaced<T>`: a value followed by 128 unused bytes, so that nothing after it in the struct
//! holding it shares its cache line or the 128-byte pair of lines that x86's adjacent-line
//! prefetcher fetches together — `crossbeam_utils::CachePadded`'s purpose, without raising
//! the holder's alignment.
//!
//! `CachePadded` aligns to 128 bytes on x86-64, and a struct with an alignment above 16 is
//! allocated through `posix_memalign`, which glibc serves by over-allocating and splitting
//! the chunk: under callgrind on `weft-lab actors --filter =spawn` (an actor's mailbox is one
//! channel), creating a channel with `CachePadded` costs several times what it costs without,
//! and a whole actor spawn costs measurably more (figures and command:
//! docs/notes/performance-figures.md, "Spaced fields").
//!
//! Only what follows a spaced value is kept away from it; what precedes it is the previous
//! field, so a holder puts its spaced fields first, in `repr(C)` order (see `mpsc::chan`).
//! A 64-byte gap (one line, no prefetch-pair guarantee) made the channel 256 bytes smaller;
//! interleaved `weft-lab micro` runs of `ping_pong` and `oneshot_ping` on this 2-core box
//! could not tell 64 from 128 from `CachePadded` apart, so the guarantee `CachePadded` gave
//! is kept. Rejected: keeping `CachePadded` and allocating channels from a pool (a second
//! allocator to tune and to trim after bursts, for the creation path only).

use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

/// The gap after the value: a 128-byte pair of cache lines.
pub(crate) const GAP: usize = 128;

/// `GAP` bytes after the value, or `gap` bytes when the value ends with fields that are
/// rarely written and so may count as part of the gap (the channel's tail word is followed
/// by its spare blocks and cold fields, `mpsc::list`).
#[repr(C)]
pub(crate) struct Spaced<T, const G: usize = GAP> {
    value: T,
    /// Never read or written: uninitialised, so creating a `Spaced` writes only the value.
    _gap: MaybeUninit<[u8; G]>,
}

impl<T, const G: usize> Spaced<T, G> {
    pub(crate) const fn new(value: T) -> Spaced<T, G> {
        Spaced { value, _gap: MaybeUninit::uninit() }
    }
}

impl<T, const G: usize> Deref for Spaced<T, G> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T, const G: usize> DerefMut for Spaced<T, G> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaced_values_are_a_cache_line_apart_and_keep_their_alignment() {
        #[repr(C)]
        struct Two {
            a: Spaced<u64>,
            b: Spaced<u64>,
        }
        let two = Two { a: Spaced::new(1), b: Spaced::new(2) };
        let (a, b) = (&*two.a as *const u64 as usize, &*two.b as *const u64 as usize);
        assert!(b - a >= GAP + 8, "spaced values share a prefetch pair");
        assert_eq!(std::mem::align_of::<Two>(), 8);
        assert_eq!((*two.a, *two.b), (1, 2));
    }
}
