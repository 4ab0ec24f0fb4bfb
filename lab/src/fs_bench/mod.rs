//! `weft-lab fs-bench`: `weft::fs` against `tokio::fs` with the same code.
//!
//! Three workloads over a generated JSONL corpus (`--mb` megabytes in `--files` files spread
//! over 16 sub-directories, generated once into `DIR/corpus` and reused): `lines` (a task
//! per file, `BufReader::new(File::open(..)).lines()` — the shape tokio issues #3664/#2700
//! complain about), `read` (a task per file, `fs::read`), `walk` (a recursive `read_dir` with
//! `file_type` per entry). Each workload is written once in a macro and instantiated for
//! each crate (their `fs` APIs are identical), validated every sample against counts the
//! generator recorded, and timed on a fresh multi-thread runtime per sample, runtimes
//! interleaved round by round; the table reports medians and the paired tokio/weft ratio.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::framework::stats;

/// `weft-lab fs-bench`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Corpus size in MB.
    #[arg(long, default_value_t = 300)]
    mb: usize,
    /// Number of files.
    #[arg(long, default_value_t = 400)]
    files: usize,
    /// Interleaved rounds (one sample per workload and runtime each).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Worker threads of each runtime.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Where the corpus lives (generated if missing or of another size).
    #[arg(long, default_value = "lab-results/fs-bench")]
    dir: PathBuf,
}

/// What the generator wrote; every sample must reproduce it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Expect {
    files: u64,
    dirs: u64,
    lines: u64,
    bytes: u64,
}

/// Deterministic JSONL shaped like a chat transcript (varied line lengths, a long tail).
fn generate(corpus: &Path, mb: usize, files: usize) -> std::io::Result<Expect> {
    let _ = std::fs::remove_dir_all(corpus);
    let mut rng = stats::SplitMix64::new(1);
    let per_file = mb * 1024 * 1024 / files.max(1);
    let mut e = Expect { files: files as u64, dirs: 16, lines: 0, bytes: 0 };
    let words = ["search", "runtime", "tokio", "weft", "file", "buffer", "thread", "pool", "async", "line"];
    for d in 0..16 {
        std::fs::create_dir_all(corpus.join(format!("project-{d:02}")))?;
    }
    for f in 0..files {
        let mut text = String::with_capacity(per_file + 4096);
        let mut i = 0u64;
        while text.len() < per_file {
            let n = if rng.index(50) == 0 { 2000 + rng.index(30_000) } else { 20 + rng.index(300) };
            let body: String = (0..n / 6).map(|k| words[(k + rng.index(10)) % 10]).collect::<Vec<_>>().join(" ");
            text.push_str(&format!("{{\"type\":\"user\",\"n\":{i},\"file\":{f},\"message\":\"{body}\"}}\n"));
            i += 1;
        }
        e.lines += i;
        e.bytes += text.len() as u64;
        std::fs::write(corpus.join(format!("project-{:02}/session-{f:05}.jsonl", f % 16)), text)?;
    }
    std::fs::write(corpus.join("EXPECT"), format!("{mb} {files} {} {}", e.lines, e.bytes))?;
    Ok(e)
}

fn corpus(args: &Args) -> Result<(PathBuf, Expect), String> {
    let corpus = args.dir.join("corpus");
    let recorded = std::fs::read_to_string(corpus.join("EXPECT")).unwrap_or_default();
    let nums: Vec<u64> = recorded.split_whitespace().filter_map(|s| s.parse().ok()).collect();
    if nums.len() == 4 && nums[0] == args.mb as u64 && nums[1] == args.files as u64 {
        let e = Expect { files: nums[1], dirs: 16, lines: nums[2], bytes: nums[3] };
        return Ok((corpus, e));
    }
    eprintln!("generating {} MB in {} files under {}", args.mb, args.files, corpus.display());
    let e = generate(&corpus, args.mb, args.files).map_err(|err| format!("generating the corpus: {err}"))?;
    Ok((corpus, e))
}

/// Counts seen by one sample (compared with `Expect`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Seen {
    files: u64,
    dirs: u64,
    lines: u64,
    bytes: u64,
}

/// The workloads, written once against a tokio-shaped crate `$rt`.
macro_rules! fs_workloads {
    ($module:ident, $rt:ident) => {
        mod $module {
            use std::path::PathBuf;

            use $rt::io::AsyncBufReadExt;

            use super::Seen;

            pub fn runtime(workers: usize) -> $rt::runtime::Runtime {
                $rt::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().unwrap()
            }

            /// Every regular file under `root` (directories walked with `read_dir`).
            pub async fn walk(root: PathBuf) -> std::io::Result<(Vec<PathBuf>, Seen)> {
                let (mut files, mut seen, mut stack) = (Vec::new(), Seen::default(), vec![root]);
                while let Some(dir) = stack.pop() {
                    let mut rd = $rt::fs::read_dir(&dir).await?;
                    while let Some(entry) = rd.next_entry().await? {
                        let ty = entry.file_type().await?;
                        if ty.is_dir() {
                            seen.dirs += 1;
                            stack.push(entry.path());
                        } else if entry.path().extension().is_some_and(|e| e == "jsonl") {
                            seen.files += 1;
                            files.push(entry.path());
                        }
                    }
                }
                files.sort();
                Ok((files, seen))
            }

            pub async fn lines(files: Vec<PathBuf>) -> std::io::Result<Seen> {
                let tasks: Vec<_> = files
                    .into_iter()
                    .map(|path| {
                        $rt::spawn(async move {
                            let file = $rt::fs::File::open(&path).await?;
                            let mut lines = $rt::io::BufReader::new(file).lines();
                            let mut seen = Seen { files: 1, ..Seen::default() };
                            while let Some(line) = lines.next_line().await? {
                                seen.lines += 1;
                                seen.bytes += line.len() as u64 + 1;
                            }
                            Ok::<_, std::io::Error>(seen)
                        })
                    })
                    .collect();
                sum(tasks).await
            }

            pub async fn read(files: Vec<PathBuf>) -> std::io::Result<Seen> {
                let tasks: Vec<_> = files
                    .into_iter()
                    .map(|path| {
                        $rt::spawn(async move {
                            let data = $rt::fs::read(&path).await?;
                            let lines = data.iter().filter(|&&b| b == b'\n').count() as u64;
                            Ok::<_, std::io::Error>(Seen { files: 1, dirs: 0, lines, bytes: data.len() as u64 })
                        })
                    })
                    .collect();
                sum(tasks).await
            }

            async fn sum(tasks: Vec<$rt::task::JoinHandle<std::io::Result<Seen>>>) -> std::io::Result<Seen> {
                let mut total = Seen::default();
                for t in tasks {
                    let s = t.await.map_err(std::io::Error::other)??;
                    total.files += s.files;
                    total.lines += s.lines;
                    total.bytes += s.bytes;
                }
                Ok(total)
            }
        }
    };
}

fs_workloads!(on_weft, weft);
fs_workloads!(on_tokio, tokio);

const WORKLOADS: [&str; 3] = ["lines", "read", "walk"];
const RUNTIMES: [&str; 2] = ["weft", "tokio"];

/// One timed sample in seconds (fresh runtime; the file list comes from an untimed walk).
fn sample(runtime: &str, workload: &str, corpus: &Path, workers: usize, e: Expect) -> Result<f64, String> {
    macro_rules! run {
        ($m:ident) => {{
            let rt = $m::runtime(workers);
            let (files, walked) = rt.block_on($m::walk(corpus.to_owned())).map_err(|e| e.to_string())?;
            let start = Instant::now();
            let seen = match workload {
                "lines" => rt.block_on($m::lines(files)),
                "read" => rt.block_on($m::read(files)),
                _ => rt.block_on($m::walk(corpus.to_owned())).map(|(_, s)| s),
            }
            .map_err(|e| e.to_string())?;
            let secs = start.elapsed().as_secs_f64();
            drop(rt);
            (secs, seen, walked)
        }};
    }
    let (secs, seen, walked) = if runtime == "weft" { run!(on_weft) } else { run!(on_tokio) };
    let want = if workload == "walk" {
        Seen { files: e.files, dirs: e.dirs, lines: 0, bytes: 0 }
    } else {
        Seen { files: e.files, dirs: 0, lines: e.lines, bytes: e.bytes }
    };
    if walked.files != e.files || seen != want {
        return Err(format!("{runtime}/{workload}: saw {seen:?}, expected {want:?}"));
    }
    Ok(secs)
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (corpus, e) = corpus(&args)?;
    println!(
        "fs-bench: {} files, {:.0} MB, {} lines; {} rounds, {} workers",
        e.files,
        e.bytes as f64 / 1e6,
        e.lines,
        args.rounds,
        args.workers
    );
    // One untimed warm-up pass per runtime puts the corpus in the page cache.
    for rt in RUNTIMES {
        sample(rt, "read", &corpus, args.workers, e)?;
    }
    let mut times = vec![vec![Vec::new(); RUNTIMES.len()]; WORKLOADS.len()];
    for round in 0..args.rounds {
        for (w, workload) in WORKLOADS.iter().enumerate() {
            for (r, rt) in RUNTIMES.iter().enumerate() {
                times[w][r].push(sample(rt, workload, &corpus, args.workers, e)?);
            }
        }
        eprintln!("round {}/{} done", round + 1, args.rounds);
    }
    println!("{:<8} {:>12} {:>12} {:>22}", "workload", "weft ms", "tokio ms", "tokio/weft [95% CI]");
    for (w, workload) in WORKLOADS.iter().enumerate() {
        let (weft, tokio) = (&times[w][0], &times[w][1]);
        let ratio = stats::paired_ratio(tokio, weft, 7);
        println!(
            "{:<8} {:>12.1} {:>12.1} {:>9.2}x [{:.2}, {:.2}]",
            workload,
            stats::median(weft) * 1e3,
            stats::median(tokio) * 1e3,
            ratio.median,
            ratio.ci95.0,
            ratio.ci95.1
        );
    }
    Ok(ExitCode::SUCCESS)
}
