//! `weft-lab search tui-latency`: keystroke-to-first-result of weft-search's interactive search,
//! measured in a real terminal. tmux runs `weft-search --all-projects` on the bench corpus
//! (`search versus`'s, so the page cache is warm after one pass), the lab types each query key
//! by key with `send-keys` at a fixed interval, and weft-search's own log
//! (`WEFT_SEARCH_TUI_LOG`: `first` once a search's first hit is drawn, `done`, `cancelled`)
//! gives, per keystroke, the time from the key to its first hit on screen.
//!
//! A keystroke whose search was cancelled by the next key before showing a hit is *censored*
//! (its latency is above the interval): counted and reported, never dropped silently.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use clap::Args;

use super::corpus;
use crate::framework::stats::Summary;

#[derive(Args, Debug)]
pub struct TuiLatencyArgs {
    /// The weft-search binary (default: next to this executable).
    #[arg(long)]
    pub weft_search: Option<PathBuf>,
    #[arg(long, default_value_t = 2700)]
    pub files: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where the corpus is (shared with `search versus`).
    #[arg(long, default_value = "lab-results/search-versus")]
    pub out: PathBuf,
    /// Milliseconds between keystrokes.
    #[arg(long, default_value_t = 250)]
    pub interval_ms: u64,
    /// Queries typed one after another (the box is cleared with Ctrl+U between them).
    #[arg(long, value_delimiter = ',', default_value = "deadlock,tokio spawn,error,mutex,thread pool")]
    pub queries: Vec<String>,
}

fn tmux(socket: &str, args: &[&str]) -> Result<std::process::Output, String> {
    Command::new("tmux").args(["-L", socket]).args(args).output().map_err(|e| format!("tmux: {e} (install tmux)"))
}

pub fn command(args: TuiLatencyArgs) -> Result<ExitCode, String> {
    let bin = super::weft_search_bin(args.weft_search.as_deref())?;
    let home = args.out.join("home");
    let projects = home.join(".claude/projects");
    if !projects.exists() {
        eprintln!("generating {} files into {} …", args.files, projects.display());
        let spec = corpus::CorpusSpec { files: args.files, seed: args.seed, total_mb: None };
        corpus::generate(&spec, &projects).map_err(|e| format!("generating the corpus: {e}"))?;
    }
    // Warm the page cache the way a user's earlier searches would.
    Command::new(&bin)
        .env("HOME", &home)
        .args(["--all-projects", "-n", "1", "zzzz"])
        .output()
        .map_err(|e| e.to_string())?;
    let log = std::env::temp_dir().join(format!("weft-search-tui-latency-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let socket = format!("weft-lab-tui-latency-{}", std::process::id());
    let cmd = format!(
        "env HOME={} WEFT_SEARCH_TUI_LOG={} {} --all-projects",
        home.canonicalize().map_err(|e| e.to_string())?.display(),
        log.display(),
        bin.canonicalize().map_err(|e| e.to_string())?.display()
    );
    tmux(&socket, &["new-session", "-d", "-s", "t", "-x", "200", "-y", "50", &cmd])?;
    let result = drive(&socket, &args, &log);
    let _ = tmux(&socket, &["kill-server"]);
    let (md, _) = result?;
    println!("{md}");
    Ok(ExitCode::SUCCESS)
}

fn wait_done(log: &PathBuf, query: &str, deadline: Duration) -> Result<(), String> {
    let start = Instant::now();
    let want = format!("done query={query:?}");
    while start.elapsed() < deadline {
        if std::fs::read_to_string(log).unwrap_or_default().lines().any(|l| l.starts_with(&want)) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!("the search for {query:?} did not finish within {deadline:?}"))
}

fn drive(socket: &str, args: &TuiLatencyArgs, log: &PathBuf) -> Result<(String, Vec<f64>), String> {
    wait_done(log, "", Duration::from_secs(120))?;
    let mut typed = 0usize;
    for q in &args.queries {
        tmux(socket, &["send-keys", "-t", "t", "C-u"])?;
        wait_done(log, "", Duration::from_secs(120))?;
        for c in q.chars() {
            let key = c.to_string();
            tmux(socket, &["send-keys", "-t", "t", "-l", &key])?;
            typed += 1;
            std::thread::sleep(Duration::from_millis(args.interval_ms));
        }
        wait_done(log, q, Duration::from_secs(120))?;
    }
    let text = std::fs::read_to_string(log).map_err(|e| e.to_string())?;
    // Per typed prefix (non-empty query), its first-hit time, if any.
    let firsts: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("first ") && !l.contains("query=\"\""))
        .filter_map(|l| l.rsplit("ms=").next().and_then(|v| v.trim().parse().ok()))
        .collect();
    let cancelled_before_first = typed.saturating_sub(firsts.len());
    let s = Summary::of(&firsts);
    let p99 = percentile(&firsts, 0.99);
    let md = format!(
        "# weft-search interactive latency\n\n{} files, keys every {} ms, {} keystrokes over {} queries ({:?}).\n\n\
         | keystrokes with a first hit | p50 ms | p99 ms | max ms | censored (cancelled by the next key before a hit, or no hit) |\n|---:|---:|---:|---:|---:|\n\
         | {} | {:.1} | {:.1} | {:.1} | {} |\n",
        args.files,
        args.interval_ms,
        typed,
        args.queries.len(),
        args.queries,
        firsts.len(),
        s.median,
        p99,
        s.max,
        cancelled_before_first
    );
    Ok((md, firsts))
}

fn percentile(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[((s.len() as f64 - 1.0) * p).round() as usize]
}
