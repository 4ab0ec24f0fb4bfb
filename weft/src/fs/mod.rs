//! Asynchronous filesystem access, tokio's `fs` surface, built on the blocking pool.
//!
//! Linux has no readiness model for regular files (they are always "ready"; a read may still
//! sleep on the disk), so every operation here runs a plain `std::fs` call on the runtime's
//! blocking pool (`crate::task::spawn_blocking`) and awaits it. That is tokio's design too;
//! what weft changes is *how many* trips to the pool a program pays for.
//!
//! # Glossary
//! - **hop**: one closure sent to the blocking pool and awaited — a queue push, a thread
//!   wake-up, a task wake-up back on a worker. Microseconds each; the thing to minimise.
//! - **read-ahead**: bytes a `File` read from the OS beyond what the caller asked for, kept
//!   in the `File` and handed out by later reads without a hop.
//! - **write-behind**: bytes accepted by `File::poll_write` and not yet written to the OS;
//!   one pool thread drains them while the caller keeps writing.
//! - **logical position**: where the caller believes the cursor is — the OS offset minus
//!   the unread read-ahead (or plus the undrained write-behind).
//!
//! # Shape, and why
//! - Whole-file helpers (`read`, `read_to_string`, `write`, `copy`, …) are **one hop**.
//! - A `File` read refills its read-ahead with **one hop per 128 KiB** (or per caller buffer
//!   when that is larger, up to `max_buf_size`, 2 MiB). tokio reads at most the caller's
//!   buffer per hop, so a `BufReader<tokio::fs::File>` pays a hop per 8 KiB (tokio issues
//!   #3664, #2700); the same code over a weft `File` pays one hop per 128 KiB and serves the
//!   other 15 of each 16 reads from memory. Why not bigger: a 2 MiB read-ahead is much slower
//!   than 128 KiB on the `fs-bench` line workload — a small reused buffer stays in cache and
//!   its pages stay mapped (`READ_AHEAD` in `file.rs`; figures in
//!   docs/notes/performance-figures.md, "File read-ahead").
//! - A `File` write copies the caller's bytes into a write-behind buffer and returns at once;
//!   a single pool closure drains that buffer in a loop, taking whatever accumulated while
//!   it wrote the previous batch. So a `BufWriter<File>` doing 8 KiB writes costs one hop per
//!   burst, not one per write. Bytes are handed to the OS even if the `File` is dropped
//!   without `flush` (tokio behaves the same for its one in-flight write); `flush` waits
//!   for the drain and reports the first write error.
//! - `read_dir` fetches entries in **batches of 256** per hop (tokio: 32), and records
//!   each entry's file type in that hop so `DirEntry::file_type` needs none.
//!
//! # Invariants
//! - A `File` has at most one of {a read or seek hop in flight, an active drain} at a time,
//!   and holds read-ahead only when no drain is active. Every operation that moves or
//!   observes the OS offset (seek, write, `set_len`, `try_clone`, `into_std`) first waits for
//!   in-flight work and gives back unread read-ahead with a relative seek, so the cursor a
//!   caller sees is always the logical position.
//! - No operation waits on something that cannot complete: a hop cancelled by runtime
//!   shutdown surfaces as an `io::Error` ("background task failed", tokio's text), and a file
//!   truncated or unlinked mid-read reads to EOF (Linux keeps the inode while it is open).
//!
//! # Errors
//! Errors are `std::fs`'s, unchanged (same `ErrorKind`, same message). std's messages do not
//! name the path, so neither do weft's (nor tokio's): wrapping them would change `Display`
//! text that ported code may compare.
//!
//! # Rejected alternatives
//! - *io_uring*: would remove the hop entirely, but needs a second driver and kernel support
//!   this project cannot assume; the chunked pool path already makes a hop rare. Revisit if a
//!   measurement shows the pool, not the copy, is the bottleneck.
//! - *Reading straight into the caller's buffer*: impossible across threads without
//!   borrowing it for an unbounded time (the caller may drop the future mid-read); the copy
//!   out of read-ahead costs far less than the hop it saves.
//! - *An async mutex around every `File` operation (tokio)*: `poll_*` take `&mut self`, so
//!   they reach the state through `Mutex::get_mut` with no locking; only the `&self`
//!   methods (`sync_all`, `set_len`, `metadata`, …) lock.

mod dir_builder;
mod file;
mod file_times;
mod open_options;
mod ops;
mod read_dir;
mod write_behind;

pub use dir_builder::DirBuilder;
pub use file::File;
pub use file_times::FileTimes;
pub use open_options::OpenOptions;
#[cfg(unix)]
pub use ops::symlink;
pub use ops::{
    canonicalize, copy, create_dir, create_dir_all, hard_link, metadata, read, read_link, read_to_string, remove_dir,
    remove_dir_all, remove_file, rename, set_permissions, symlink_metadata, try_exists, write,
};
pub use read_dir::{read_dir, DirEntry, ReadDir};

use std::io;

/// Runs `f` on the blocking pool and awaits its result; a closure that never ran (runtime
/// shutting down) or panicked becomes an `io::Error`, as in tokio.
pub(crate) async fn asyncify<F, T>(f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    match crate::task::spawn_blocking(f).await {
        Ok(res) => res,
        Err(_) => Err(background_failed()),
    }
}

/// The error a hop reports when its closure was cancelled or panicked (tokio's wording).
pub(crate) fn background_failed() -> io::Error {
    io::Error::other("background task failed")
}
