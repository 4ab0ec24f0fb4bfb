//! `weft-lab search versus --ccms PATH`: the weft-search binary against ccms, the tool of report
//! 002 (*Final Optimization Summary*, docs/notes/reference-reports.md), as a user runs them: whole
//! processes, warm page cache, one generated corpus laid out as `~/.claude/projects` (both read it
//! through `HOME`), the same queries and filters, every contender once per round in rotating order,
//! the first round discarded. Every sample's hit count is compared with the others'; any difference
//! fails the run.
//!
//! Contenders: `weft-search`, `ccms` (its default smol engine) and `ccms --engine rayon`; the
//! ratio per query is ccms's *best* engine's median over weft-search's. Peak RSS comes from
//! `wait4`'s rusage. A startup row times weft-search on a one-file corpus with no hits.
//!
//! ccms has no implicit AND and reads `--after` only as RFC 3339, so the queries here use
//! explicit `AND` and RFC 3339 times (weft-search reads both either way).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Args;
use serde::Serialize;

use super::corpus;
use crate::framework::stats::Summary;

#[derive(Args, Debug)]
pub struct VersusArgs {
    /// The ccms binary (build it from github.com/mkusaka/ccms with `cargo build --release`).
    #[arg(long)]
    pub ccms: PathBuf,
    /// The weft-search binary (default: next to this executable; `cargo build --release -p weft-search`).
    #[arg(long)]
    pub weft_search: Option<PathBuf>,
    #[command(flatten)]
    pub corpus: corpus::CorpusSpec,
    /// Counted rounds (after one warm-up round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Cases as `LABEL=QUERY` or `LABEL=QUERY|FLAGS` (FLAGS given to both tools).
    #[arg(long = "case")]
    pub cases: Vec<String>,
    #[arg(long, default_value = "lab-results/search-versus")]
    pub out: PathBuf,
}

/// The default cases: literal and regex queries of varied selectivity, and filters.
const CASES: &[(&str, &str, &str)] = &[
    ("literal, common", "error", ""),
    ("literal, rare", "deadlock", ""),
    ("phrase", "\"thread pool\"", ""),
    ("AND", "tokio AND spawn", ""),
    ("OR", "mutex OR semaphore", ""),
    ("non-ASCII", "café", ""),
    ("regex", "/dead+lock/i", ""),
    ("regex, class", "/fn [a-z_]+\\(/", ""),
    ("role filter", "error", "-r assistant"),
    ("time filter", "test", "--after 2025-06-01T00:00:00Z"),
];

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub case: String,
    pub query: String,
    pub flags: String,
    pub hits: u64,
    pub weft_ms: f64,
    pub ccms_ms: f64,
    pub ccms_rayon_ms: f64,
    /// Best ccms median ÷ weft-search median.
    pub speedup: f64,
    pub weft_rss_mb: f64,
    pub ccms_rss_mb: f64,
}

struct Sample {
    ms: f64,
    rss_kb: u64,
    stdout: String,
}

/// Runs `cmd` to completion; wall time and the child's peak RSS (from `wait4`).
fn sample(mut cmd: Command, timeout: Duration) -> Result<Sample, String> {
    let start = Instant::now();
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("{cmd:?}: {e}"))?;
    let reader = super::read_all(child.stdout.take().expect("piped"));
    let err_reader = super::read_all(child.stderr.take().expect("piped"));
    let pid = child.id() as libc::pid_t;
    let deadline = start + timeout;
    let (status, rusage) = loop {
        let mut status = 0;
        // SAFETY: `rusage` is plain data that wait4 fills; zeroed is a valid value for it.
        let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our child (not yet reaped: `child.wait` is never called); the
        // pointers are to live locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut rusage) };
        if r == pid {
            break (status, rusage);
        }
        if r < 0 {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return Err(format!("{cmd:?} did not finish within {timeout:?}"));
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let code = libc::WEXITSTATUS(status);
    if !libc::WIFEXITED(status) || code > 1 {
        return Err(format!("{cmd:?} failed (status {status:#x}): {}", stderr.trim()));
    }
    Ok(Sample { ms, rss_kb: rusage.ru_maxrss as u64, stdout })
}

fn weft_cmd(bin: &Path, home: &Path, query: &str, flags: &str) -> Command {
    let mut c = Command::new(bin);
    c.env("HOME", home).env_remove("CLAUDE_CONFIG_DIR").args(["--all-projects", "-f", "json", "-n", "50", query]);
    c.args(flags.split_whitespace());
    c
}

fn ccms_cmd(bin: &Path, home: &Path, query: &str, flags: &str, rayon: bool) -> Command {
    let mut c = Command::new(bin);
    // `--project /` is every project (ccms filters on the encoded prefix `-`).
    c.env("HOME", home).args(["--project", "/", "-f", "json", "-n", "50", query]);
    if rayon {
        c.args(["--engine", "rayon"]);
    }
    c.args(flags.split_whitespace());
    c
}

fn weft_hits(s: &Sample) -> Result<u64, String> {
    let v: serde_json::Value = serde_json::from_str(&s.stdout).map_err(|e| format!("weft-search output: {e}"))?;
    // The corpus has truncated lines (counted as unreadable, as ccms skips them silently); a
    // file that could not be read would make the comparison meaningless.
    if v["skipped_files"].as_array().is_none_or(|a| !a.is_empty()) {
        return Err(format!("weft-search skipped files: {}", v["skipped_files"]));
    }
    v["total_hits"].as_u64().ok_or_else(|| "weft-search output has no total_hits".into())
}

fn ccms_hits(s: &Sample) -> Result<u64, String> {
    let out = s.stdout.trim();
    if out.is_empty() || out.starts_with("No results") {
        return Ok(0);
    }
    let v: serde_json::Value = serde_json::from_str(out).map_err(|e| format!("ccms output: {e}"))?;
    v["summary"]["total_count"].as_u64().ok_or_else(|| "ccms output has no summary.total_count".into())
}

pub fn command(args: VersusArgs) -> Result<ExitCode, String> {
    let weft = super::weft_search_bin(args.weft_search.as_deref())?;
    if !args.ccms.exists() {
        return Err(format!("{} not found: build ccms from github.com/mkusaka/ccms", args.ccms.display()));
    }
    let home = args.out.join("home");
    let projects = home.join(".claude/projects");
    let stamp =
        format!("files={} seed={} total_mb={:?} shape=2\n", args.corpus.files, args.corpus.seed, args.corpus.total_mb);
    let stamp_file = args.out.join("corpus.spec");
    if std::fs::read_to_string(&stamp_file).ok().as_deref() != Some(stamp.as_str()) {
        let _ = std::fs::remove_dir_all(&home);
        eprintln!("generating {} files into {} …", args.corpus.files, projects.display());
        let spec = args.corpus.clone();
        corpus::generate(&spec, &projects).map_err(|e| format!("generating the corpus: {e}"))?;
        std::fs::write(&stamp_file, &stamp).map_err(|e| e.to_string())?;
    }
    let cases: Vec<(String, String, String)> = if args.cases.is_empty() {
        CASES.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect()
    } else {
        args.cases
            .iter()
            .map(|c| {
                let (label, rest) = c.split_once('=').ok_or(format!("--case {c:?}: write LABEL=QUERY[|FLAGS]"))?;
                let (q, f) = rest.split_once('|').unwrap_or((rest, ""));
                Ok((label.to_owned(), q.to_owned(), f.to_owned()))
            })
            .collect::<Result<_, String>>()?
    };
    let timeout = Duration::from_secs(600);
    let mut rows = Vec::new();
    for (label, query, flags) in &cases {
        // [weft, ccms, ccms rayon] samples.
        let mut ms: [Vec<f64>; 3] = Default::default();
        let mut rss = [0u64; 3];
        let mut hits: Option<u64> = None;
        for round in 0..=args.rounds {
            for k in 0..3 {
                let i = (k + round) % 3;
                let cmd = match i {
                    0 => weft_cmd(&weft, &home, query, flags),
                    1 => ccms_cmd(&args.ccms, &home, query, flags, false),
                    _ => ccms_cmd(&args.ccms, &home, query, flags, true),
                };
                let s = sample(cmd, timeout)?;
                let n = if i == 0 { weft_hits(&s)? } else { ccms_hits(&s)? };
                match hits {
                    None => hits = Some(n),
                    Some(h) if h != n => {
                        return Err(format!(
                            "{label} ({query} {flags}): {} found {n} hits, another tool {h}",
                            ["weft-search", "ccms", "ccms --engine rayon"][i]
                        ))
                    }
                    Some(_) => {}
                }
                if round > 0 {
                    ms[i].push(s.ms);
                    rss[i] = rss[i].max(s.rss_kb);
                }
            }
        }
        let med = |v: &Vec<f64>| Summary::of(v).median;
        let (w, c, r) = (med(&ms[0]), med(&ms[1]), med(&ms[2]));
        let row = Row {
            case: label.clone(),
            query: query.clone(),
            flags: flags.clone(),
            hits: hits.unwrap_or(0),
            weft_ms: w,
            ccms_ms: c,
            ccms_rayon_ms: r,
            speedup: c.min(r) / w,
            weft_rss_mb: rss[0] as f64 / 1024.0,
            ccms_rss_mb: rss[1].min(rss[2]) as f64 / 1024.0,
        };
        eprintln!(
            "{label}: {} hits, weft-search {w:.1} ms, ccms {c:.1} ms, ccms rayon {r:.1} ms: {:.2}×",
            row.hits, row.speedup
        );
        rows.push(row);
    }
    // Startup: one tiny file, a query with no hits.
    let tiny = args.out.join("tiny/.claude/projects/-tiny");
    std::fs::create_dir_all(&tiny).map_err(|e| e.to_string())?;
    std::fs::write(
        tiny.join("s.jsonl"),
        "{\"type\":\"user\",\"uuid\":\"u\",\"sessionId\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\n",
    )
    .map_err(|e| e.to_string())?;
    let tiny_home = args.out.join("tiny");
    let mut startup = Vec::new();
    for _ in 0..=args.rounds * 4 {
        startup.push(sample(weft_cmd(&weft, &tiny_home, "zzzzzz", ""), timeout)?.ms);
    }
    startup.remove(0);
    let startup_ms = Summary::of(&startup).median;
    let md = markdown(&rows, startup_ms, &args);
    std::fs::create_dir_all(&args.out).map_err(|e| e.to_string())?;
    let json = serde_json::json!({ "rows": rows, "startup_ms": startup_ms, "files": args.corpus.files, "rounds": args.rounds, "cores": super::engines::cores() });
    std::fs::write(args.out.join("results.json"), serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("report.md"), &md).map_err(|e| e.to_string())?;
    println!("{md}");
    Ok(ExitCode::SUCCESS)
}

fn markdown(rows: &[Row], startup_ms: f64, args: &VersusArgs) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# weft-search vs ccms\n\n{} files (seed {}), {} cores, {} rounds after a warm-up, median whole-process wall time; every sample's hit count identical across the three.\n",
        args.corpus.files,
        args.corpus.seed,
        super::engines::cores(),
        args.rounds
    );
    let _ = writeln!(s, "| case | query | flags | hits | weft-search ms | ccms ms | ccms rayon ms | speed-up vs best ccms | weft RSS MB | ccms RSS MB (best) |");
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {:.1} | {:.1} | {:.1} | {:.2}× | {:.0} | {:.0} |",
            r.case,
            r.query.replace('|', "\\|"),
            r.flags,
            r.hits,
            r.weft_ms,
            r.ccms_ms,
            r.ccms_rayon_ms,
            r.speedup,
            r.weft_rss_mb,
            r.ccms_rss_mb
        );
    }
    let _ = writeln!(s, "\nweft-search startup (one tiny file, no hits): {startup_ms:.1} ms median");
    s
}
