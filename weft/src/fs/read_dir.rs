//! `read_dir`, `ReadDir`, `DirEntry`: a directory listing fetched in batches of
//! [`BATCH`] entries per blocking-pool hop.
//!
//! Each hop also records every entry's file type (`d_type` from `getdents`, free on most
//! filesystems), so `DirEntry::file_type` is answered from memory. `metadata` still takes a
//! hop: it is a `stat` per entry, which a walk may not need.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{FileType, Metadata};
use std::future::{poll_fn, Future};
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::{asyncify, background_failed};
use crate::loom::sync::Arc;
use crate::task::JoinHandle;

/// Entries fetched per hop (tokio fetches 32).
const BATCH: usize = 256;

/// Lists the entries of `path` (not `.` or `..`), in the order the OS returns them.
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref().to_owned();
    let std = asyncify(move || std::fs::read_dir(path)).await?;
    Ok(ReadDir { state: State::Idle(Some(Batch { entries: VecDeque::new(), std, done: false })) })
}

struct Batch {
    entries: VecDeque<io::Result<DirEntry>>,
    std: std::fs::ReadDir,
    /// The OS listing is exhausted; what is in `entries` is all that is left.
    done: bool,
}

enum State {
    /// `None` once a hop failed (the listing is over).
    Idle(Option<Batch>),
    Pending(JoinHandle<Batch>),
}

/// A directory listing in progress (`read_dir`'s result).
pub struct ReadDir {
    state: State,
}

impl ReadDir {
    /// The next entry, `Ok(None)` at the end. Cancel-safe: dropping the future loses nothing.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Polls for the next entry; `Ready(Ok(None))` at the end.
    pub fn poll_next_entry(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        loop {
            match &mut self.state {
                State::Idle(batch) => {
                    let Some(b) = batch.as_mut() else { return Poll::Ready(Ok(None)) };
                    if let Some(entry) = b.entries.pop_front() {
                        return Poll::Ready(entry.map(Some));
                    }
                    if b.done {
                        return Poll::Ready(Ok(None));
                    }
                    let mut b = batch.take().expect("checked above");
                    self.state = State::Pending(crate::task::spawn_blocking(move || {
                        fill(&mut b);
                        b
                    }));
                }
                State::Pending(handle) => {
                    let res = ready!(Pin::new(handle).poll(cx));
                    match res {
                        Ok(b) => self.state = State::Idle(Some(b)),
                        Err(_) => {
                            self.state = State::Idle(None);
                            return Poll::Ready(Err(background_failed()));
                        }
                    }
                }
            }
        }
    }
}

/// Runs on the pool: moves up to `BATCH` entries (and their file types) into `b.entries`.
fn fill(b: &mut Batch) {
    for _ in 0..BATCH {
        match b.std.next() {
            Some(Ok(std)) => {
                let file_type = std.file_type().ok();
                b.entries.push_back(Ok(DirEntry { std: Arc::new(std), file_type }));
            }
            Some(Err(e)) => b.entries.push_back(Err(e)),
            None => {
                b.done = true;
                return;
            }
        }
    }
}

impl std::fmt::Debug for ReadDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadDir").finish_non_exhaustive()
    }
}

/// One entry of a [`ReadDir`].
#[derive(Debug)]
pub struct DirEntry {
    std: Arc<std::fs::DirEntry>,
    file_type: Option<FileType>,
}

impl DirEntry {
    /// The full path: the directory given to `read_dir` joined with the file name.
    pub fn path(&self) -> PathBuf {
        self.std.path()
    }

    /// The bare file name.
    pub fn file_name(&self) -> OsString {
        self.std.file_name()
    }

    /// The inode number (`d_ino`).
    #[cfg(unix)]
    pub fn ino(&self) -> u64 {
        std::os::unix::fs::DirEntryExt::ino(&*self.std)
    }

    /// The entry's metadata (a `stat` that does not follow a symlink), in one hop.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let std = self.std.clone();
        asyncify(move || std.metadata()).await
    }

    /// The entry's file type: from the listing itself when the filesystem reported it (no
    /// hop), else one `lstat` hop.
    pub async fn file_type(&self) -> io::Result<FileType> {
        if let Some(t) = self.file_type {
            return Ok(t);
        }
        let std = self.std.clone();
        asyncify(move || std.file_type()).await
    }
}
