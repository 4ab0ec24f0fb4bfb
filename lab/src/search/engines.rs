//! The engines: the same search ([`FileSearch`]) driven six ways, differing only in how file
//! bytes reach it and on which threads the parse runs. Every engine returns the per-file
//! outcomes in file order, and [`merge`] turns them into one [`Answer`], so "identical
//! results" is a plain equality check.
//!
//! - `sequential`: one thread, `std::fs::read` + search per file (the floor for the work).
//! - `rayon`: `par_iter` over the files on a pool of `--pool` (default: cores) threads.
//! - `weft`: a task per file; each runs read + parse + match in one `spawn_blocking` closure.
//! - `weft-inline`: a task per file; the whole-file read is `weft::fs::read` (one pool hop),
//!   parse + match run inline on the worker.
//! - `tokio`: the original tool's shape: `tokio::fs::File` + 8 KB `BufReader`, a line per await
//!   (`read_until`, not `next_line`: `next_line` fails the rest of a file at the first line of
//!   invalid UTF-8, and every engine must skip and count such a line instead).
//! - `tokio-tuned`: `spawn_blocking` per file with `max_blocking_threads = cores`.
//! - `smol`, `smol-tuned`: `blocking::unblock` per file; the pool size comes from the
//!   `BLOCKING_MAX_THREADS` environment variable, read once per process, so the bench runs each
//!   in its own child process (`smol-tuned` sets it to the cores).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use weft_search::answer::Answer;
pub use weft_search::files::describe_io;
use weft_search::files::Skipped;
use weft_search::search::{FileOutcome, FileSearch, Job as SearchJob};

/// An engine by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Engine {
    Sequential,
    Rayon,
    Weft,
    WeftInline,
    Tokio,
    TokioTuned,
    Smol,
    SmolTuned,
}

impl Engine {
    pub const ALL: [Engine; 8] = [
        Engine::Weft,
        Engine::WeftInline,
        Engine::Tokio,
        Engine::TokioTuned,
        Engine::Smol,
        Engine::SmolTuned,
        Engine::Rayon,
        Engine::Sequential,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Sequential => "sequential",
            Engine::Rayon => "rayon",
            Engine::Weft => "weft",
            Engine::WeftInline => "weft-inline",
            Engine::Tokio => "tokio",
            Engine::TokioTuned => "tokio-tuned",
            Engine::Smol => "smol",
            Engine::SmolTuned => "smol-tuned",
        }
    }

    pub fn parse(s: &str) -> Result<Engine, String> {
        Engine::ALL.into_iter().find(|e| e.name() == s).ok_or_else(|| {
            format!(
                "unknown engine `{s}` (known: {})",
                Engine::ALL.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// Whether `--pool` means something for this engine (the blocking pool or rayon's threads).
    pub fn has_pool(self) -> bool {
        !matches!(self, Engine::Sequential)
    }
}

/// Whether every file was read: the lab's "complete" (invalid lines are expected in
/// transcripts and only counted, unlike the `weft-search` command's `--strict`).
pub fn read_every_file(answer: &Answer) -> bool {
    answer.skipped_files.is_empty() && answer.oversized_lines == 0
}

/// Every `*.jsonl` file under `root`, sorted by path, and the entries that were skipped.
pub fn list_files(root: &Path) -> io::Result<(Vec<PathBuf>, Vec<Skipped>)> {
    let set = weft_search::files::list_files(root)?;
    Ok((set.paths, set.skipped))
}

/// What every file of a run is searched for: weft-search's own per-file search.
struct Job(Arc<SearchJob>);

impl Job {
    fn search(&self, index: usize, mtime: i64) -> FileSearch<'_> {
        FileSearch::new(&self.0, index as u32, mtime)
    }

    /// Searches one file read whole (the unit of work of every whole-file engine).
    fn file(&self, path: &Path, index: usize) -> io::Result<FileOutcome> {
        let data = std::fs::read(path)?;
        Ok(self.bytes(&data, index, mtime(&std::fs::metadata(path)?)))
    }

    fn bytes(&self, data: &[u8], index: usize, mtime: i64) -> FileOutcome {
        let mut s = self.search(index, mtime);
        s.bytes(data, &AtomicBool::new(false));
        s.finish()
    }
}

/// A file's modification time in Unix seconds (summaries without a time of their own use it).
fn mtime(m: &std::fs::Metadata) -> i64 {
    m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs() as i64)
}

/// Combines per-file outcomes (in file order) into weft-search's answer, as the command
/// merges them.
pub fn merge(
    files: &[PathBuf],
    skipped_files: Vec<Skipped>,
    outcomes: Vec<io::Result<FileOutcome>>,
    job: &SearchJob,
) -> Answer {
    let mut out = Answer { skipped_files, ..Answer::default() };
    for (path, r) in files.iter().zip(outcomes) {
        // The root only names projects in `--stats` answers, which the lab's jobs never ask for.
        out.add(path, Path::new(""), job, r.map_err(|e| describe_io(&e)));
    }
    out.finish();
    out
}

/// How to run one engine.
#[derive(Clone, Debug)]
pub struct RunSpec {
    pub engine: Engine,
    /// Blocking-pool size (rayon: threads); None = the engine's default.
    pub pool: Option<usize>,
    /// Async worker threads (default: cores).
    pub workers: usize,
    pub limit: usize,
}

pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Lists and searches `root` with one engine; returns the answer and the time taken (listing
/// included, runtime start-up and teardown included, as a CLI user would feel it).
pub fn run(spec: &RunSpec, root: &Path, query: &str) -> io::Result<(Answer, Duration)> {
    let start = Instant::now();
    let (files, skipped) = list_files(root)?;
    let job = search_job(query, spec.limit).map_err(io::Error::other)?;
    let outcomes = run_files(spec, &files, job.clone())?;
    let out = merge(&files, skipped, outcomes, &job);
    Ok((out, start.elapsed()))
}

/// Searches `files` (in this order) with one engine.
/// weft-search's job for `query` (all projects, no filters, newest first).
pub fn search_job(query: &str, limit: usize) -> Result<Arc<SearchJob>, String> {
    let q = weft_search::query::Query::parse(query).map_err(|e| e.to_string())?;
    Ok(Arc::new(SearchJob::new(q, Default::default(), limit, false, false)))
}

pub fn run_files(spec: &RunSpec, files: &[PathBuf], job: Arc<SearchJob>) -> io::Result<Vec<io::Result<FileOutcome>>> {
    let job = Arc::new(Job(job));
    let files: Arc<[PathBuf]> = files.into();
    Ok(match spec.engine {
        Engine::Sequential => files.iter().enumerate().map(|(i, p)| job.file(p, i)).collect(),
        Engine::Rayon => {
            use rayon::prelude::*;
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(spec.pool.unwrap_or_else(cores))
                .build()
                .map_err(io::Error::other)?;
            pool.install(|| files.par_iter().enumerate().map(|(i, p)| job.file(p, i)).collect())
        }
        Engine::Weft | Engine::WeftInline => {
            let mut b = weft::runtime::Builder::new_multi_thread();
            b.worker_threads(spec.workers).enable_all();
            if let Some(n) = spec.pool {
                b.max_blocking_threads(n);
            }
            let rt = b.build()?;
            let inline = spec.engine == Engine::WeftInline;
            rt.block_on(async move {
                let tasks: Vec<_> = (0..files.len())
                    .map(|i| {
                        let (files, job) = (files.clone(), job.clone());
                        weft::spawn(async move {
                            if inline {
                                let data = weft::fs::read(&files[i]).await?;
                                let m = mtime(&weft::fs::metadata(&files[i]).await?);
                                Ok(job.bytes(&data, i, m))
                            } else {
                                weft::task::spawn_blocking(move || job.file(&files[i], i)).await?
                            }
                        })
                    })
                    .collect();
                let mut out = Vec::with_capacity(tasks.len());
                for t in tasks {
                    out.push(t.await.map_err(io::Error::other).and_then(|r| r));
                }
                out
            })
        }
        Engine::Tokio | Engine::TokioTuned => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(spec.workers).enable_all();
            match (spec.pool, spec.engine) {
                (Some(n), _) => {
                    b.max_blocking_threads(n);
                }
                (None, Engine::TokioTuned) => {
                    b.max_blocking_threads(cores());
                }
                _ => {}
            }
            let rt = b.build()?;
            let tuned = spec.engine == Engine::TokioTuned;
            rt.block_on(async move {
                let tasks: Vec<_> = (0..files.len())
                    .map(|i| {
                        let (files, job) = (files.clone(), job.clone());
                        tokio::spawn(async move {
                            if tuned {
                                tokio::task::spawn_blocking(move || job.file(&files[i], i)).await?
                            } else {
                                tokio_lines(&files[i], i, &job).await
                            }
                        })
                    })
                    .collect();
                let mut out = Vec::with_capacity(tasks.len());
                for t in tasks {
                    out.push(t.await.map_err(io::Error::other).and_then(|r| r));
                }
                out
            })
        }
        Engine::Smol | Engine::SmolTuned => futures_lite::future::block_on(async move {
            let tasks: Vec<_> = (0..files.len())
                .map(|i| {
                    let (files, job) = (files.clone(), job.clone());
                    blocking::unblock(move || job.file(&files[i], i))
                })
                .collect();
            let mut out = Vec::with_capacity(tasks.len());
            for t in tasks {
                out.push(t.await);
            }
            out
        }),
    })
}

/// The original tool's tokio reader: 8 KB `BufReader`, one line per await.
async fn tokio_lines(path: &Path, index: usize, job: &Job) -> io::Result<FileOutcome> {
    use tokio::io::AsyncBufReadExt;
    let file = tokio::fs::File::open(path).await?;
    let m = mtime(&file.metadata().await?);
    let mut reader = tokio::io::BufReader::with_capacity(8 * 1024, file);
    let mut s = job.search(index, m);
    let never = AtomicBool::new(false);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
        }
        // The line keeps its `\n`, so byte and line counts equal the whole-file engines'.
        s.bytes(&line, &never);
    }
    Ok(s.finish())
}
