//! Running a search over files on the weft runtime: which files, in what order, on which
//! threads, and how a scan in flight is cancelled.
//!
//! A scan is `threads` closures on weft's blocking pool, each taking the next file index from a
//! shared counter (largest files first, so the last file to finish is a small one), reading the
//! file whole and feeding it to [`FileSearch`]. Each finished file goes to the async side over a
//! weft channel, so a caller can merge as results arrive (the CLI) or show them as they stream
//! in (the TUI). Dropping or [`Scan::cancel`]ling a scan stops every closure at its next line
//! boundary check; nothing from a cancelled scan is delivered after `cancel` returns, because
//! the receiver is dropped with it.
//!
//! # Rejected alternatives
//! - A task per file with its own `spawn_blocking` (the lab's `weft` engine): the same speed on
//!   the study's corpus, but a cancelled scan leaves up to one closure per file queued.
//! - An async read per line (`BufReader::lines`): the original tool's shape; report 002 (ccms's
//!   *Final Optimization Summary*, docs/notes/reference-reports.md) measured it several times
//!   slower than whole-file reads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use std::path::Path;

use crate::files::{describe_io, mtime, FileSet};
use crate::search::{FileOutcome, FileSearch, Job, MAX_LINE};

/// Which files a scan reads first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOrder {
    /// Largest first: the whole scan ends soonest (the CLI, which prints at the end).
    LargestFirst,
    /// Most recently modified first: the newest sessions' hits show first (the TUI).
    NewestFirst,
}

/// What one file gave: its index in the [`FileSet`] and its outcome or the read error.
pub struct FileResult {
    pub file: u32,
    pub outcome: Result<FileOutcome, String>,
}

/// A scan in flight; results arrive on [`Scan::next`].
pub struct Scan {
    cancelled: Arc<AtomicBool>,
    rx: weft::sync::mpsc::UnboundedReceiver<FileResult>,
}

impl Scan {
    /// Starts searching `files` with `threads` closures on the current runtime's blocking pool.
    ///
    /// # Panics
    /// Outside a weft runtime (call it inside `block_on` or a task).
    pub fn start(files: Arc<FileSet>, job: Arc<Job>, threads: usize, order: FileOrder) -> Scan {
        let cancelled = Arc::new(AtomicBool::new(false));
        let (tx, rx) = weft::sync::mpsc::unbounded_channel();
        let order_by = order;
        let mut order: Vec<u32> = (0..files.len() as u32).collect();
        match order_by {
            FileOrder::LargestFirst => order.sort_by_key(|&i| std::cmp::Reverse(files.sizes[i as usize])),
            FileOrder::NewestFirst => order.sort_by_key(|&i| std::cmp::Reverse(files.mtimes[i as usize])),
        }
        let order: Arc<[u32]> = order.into();
        let next = Arc::new(AtomicUsize::new(0));
        for _ in 0..threads.clamp(1, files.len().max(1)) {
            let (files, job, order, next, tx, cancelled) =
                (files.clone(), job.clone(), order.clone(), next.clone(), tx.clone(), cancelled.clone());
            // The closure's JoinHandle is dropped: results travel on `tx`, and a panic in the
            // search (a bug) shows up as a file that never reports, which `collect` turns into an
            // error rather than a hang because every sender is then gone.
            drop(weft::task::spawn_blocking(move || loop {
                if cancelled.load(Ordering::Relaxed) {
                    return;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { return };
                let outcome = search_file(&files.paths[i as usize], i, &job, &cancelled);
                if tx.send(FileResult { file: i, outcome }).is_err() {
                    return;
                }
            }));
        }
        Scan { cancelled, rx }
    }

    /// The next finished file, or `None` once every file has reported (or the scan stopped).
    pub async fn next(&mut self) -> Option<FileResult> {
        self.rx.recv().await
    }

    /// Non-blocking [`Scan::next`] for a UI loop: `Ok(None)` when nothing is ready yet,
    /// `Err(())` once the scan is over.
    #[allow(clippy::result_unit_err)]
    pub fn try_next(&mut self) -> Result<Option<FileResult>, ()> {
        use weft::sync::mpsc::error::TryRecvError;
        match self.rx.try_recv() {
            Ok(r) => Ok(Some(r)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(()),
        }
    }

    /// Stops the scan: closures stop at their next check and nothing more is delivered.
    pub fn cancel(&mut self) {
        self.cancelled.store(true, Ordering::Relaxed);
        self.rx.close();
    }
}

impl Drop for Scan {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

/// Bytes read per chunk: files up to this size are read whole in one call; larger ones in
/// chunks of whole lines, so memory stays bounded by a chunk plus the longest line.
const CHUNK: u64 = 8 << 20;

fn search_file(path: &Path, file: u32, job: &Job, cancelled: &AtomicBool) -> Result<FileOutcome, String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| describe_io(&e))?;
    let meta = f.metadata().map_err(|e| describe_io(&e))?;
    let mut s = FileSearch::new(job, file, mtime(&meta));
    let mut buf = Vec::with_capacity((meta.len() + 1).min(CHUNK) as usize);
    // Inside a line longer than MAX_LINE: its length so far (its bytes are dropped).
    let mut oversized: Option<u64> = None;
    loop {
        if cancelled.load(Ordering::Relaxed) {
            break;
        }
        let before = buf.len();
        let n = (&mut f).take(CHUNK).read_to_end(&mut buf).map_err(|e| describe_io(&e))?;
        if n == 0 {
            match oversized {
                Some(len) => s.oversized(len),
                None if !buf.is_empty() => s.bytes(&buf, cancelled),
                None => {}
            }
            break;
        }
        if let Some(len) = oversized {
            match memchr::memchr(b'\n', &buf[before..]) {
                None => {
                    oversized = Some(len + n as u64);
                    buf.clear();
                    continue;
                }
                Some(i) => {
                    s.oversized(len + i as u64);
                    buf.drain(..=before + i);
                    oversized = None;
                }
            }
        }
        match memchr::memrchr(b'\n', &buf) {
            Some(i) => {
                s.bytes(&buf[..=i], cancelled);
                buf.drain(..=i);
            }
            None if buf.len() > MAX_LINE => {
                oversized = Some(buf.len() as u64);
                buf.clear();
            }
            None => {}
        }
    }
    Ok(s.finish())
}

/// The number of threads a scan uses by default: one per core.
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}
