//! `weft-lab fuzz`: runs every cargo-fuzz target in `fuzz/` (libFuzzer, nightly) for a fixed
//! time and reports executions, corpus growth and findings.
//!
//! The targets, one per parser of untrusted input, each asserting its invariant (see each
//! file's comment): `search_query` (the query language), `search_record` (JSONL session files,
//! prefilter on = off), `agent_stream` (Ollama NDJSON and OpenAI SSE bodies), `env_config`
//! (`WEFT_*` variables), `metrics_http` (the metrics endpoint over TCP), `sim_request` (the
//! Ollama simulator's request bodies, and the agents client's round-tripped). The corpora live in
//! `fuzz/corpus/TARGET/` (committed); a run grows a copy under `--out`, so the repository's
//! seeds change only when someone copies new ones in. A finding is a crash file libFuzzer
//! leaves in `fuzz/artifacts/TARGET/`; the command fails if any target finds one. CI runs each
//! target 60 s, all six at once (`--seconds 60 --jobs 6`); the lab default is 10 minutes each.
//!
//! Needs the nightly toolchain and `cargo-fuzz` (`cargo install cargo-fuzz`); `.ci/run`
//! installs it when missing.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use serde::Serialize;

/// Where the instrumented builds go (under the workspace's `target/`, which CI keeps warm).
const TARGET_DIR: &str = "target/fuzz";

/// Every target in `fuzz/Cargo.toml`.
pub const TARGETS: [&str; 7] =
    ["search_query", "search_record", "agent_stream", "env_config", "metrics_http", "sim_request", "actor_wire"];

/// One target's run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FuzzRow {
    pub target: String,
    pub seconds: u64,
    pub executions: u64,
    pub corpus_before: usize,
    pub corpus_after: usize,
    /// Crash/timeout/leak files libFuzzer wrote.
    pub findings: Vec<String>,
}

/// `weft-lab fuzz`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Seconds per target.
    #[arg(long, default_value_t = 600)]
    pub seconds: u64,
    /// Targets to run (comma-separated; default: all).
    #[arg(long, value_delimiter = ',')]
    pub targets: Vec<String>,
    /// Targets run at once (each is one libFuzzer process).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Writes OUT/fuzz.md, OUT/fuzz.json and the grown corpora (OUT/corpus/TARGET/).
    #[arg(long, default_value = "lab-results/fuzz")]
    pub out: PathBuf,
}

/// The repository root (this crate's parent).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("lab/ has a parent").to_path_buf()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// The executions libFuzzer reports in its last `Done N runs` line.
pub fn executions(log: &str) -> Option<u64> {
    log.lines().rev().find_map(|l| l.strip_prefix("Done ")?.split_whitespace().next()?.parse().ok())
}

fn check_tools() -> Result<(), String> {
    let ok = |args: &[&str]| {
        Command::new("cargo").args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    };
    if !ok(&["+nightly", "--version"]) {
        return Err("the nightly toolchain is missing: rustup toolchain install nightly".into());
    }
    if !ok(&["+nightly", "fuzz", "--version"]) {
        return Err("cargo-fuzz is missing: cargo install cargo-fuzz".into());
    }
    Ok(())
}

/// Starts one target: `cargo +nightly fuzz run -O TARGET OUT/corpus/TARGET -- -max_total_time=S`.
fn start(target: &str, seconds: u64, corpus: &Path, log: &Path) -> Result<std::process::Child, String> {
    let log_file = std::fs::File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
    Command::new("cargo")
        .current_dir(repo())
        .args(["+nightly", "fuzz", "run", "-O", "--target-dir", TARGET_DIR, target])
        .arg(corpus)
        .args(["--", &format!("-max_total_time={seconds}"), "-timeout=10", "-rss_limit_mb=4096"])
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file)
        .spawn()
        .map_err(|e| format!("starting cargo fuzz for {target}: {e}"))
}

/// Runs the targets, `jobs` at a time; one row per target.
pub fn measure(args: &Args, targets: &[String]) -> Result<Vec<FuzzRow>, String> {
    let repo = repo();
    let status = Command::new("cargo")
        .current_dir(&repo)
        .args(["+nightly", "fuzz", "build", "-O", "--target-dir", TARGET_DIR])
        .status()
        .map_err(|e| format!("cargo fuzz build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo +nightly fuzz build -O failed ({status})"));
    }
    let mut rows = Vec::new();
    for batch in targets.chunks(args.jobs.max(1)) {
        let mut running = Vec::new();
        for target in batch {
            let corpus = args.out.join("corpus").join(target);
            std::fs::create_dir_all(&corpus).map_err(|e| format!("creating {}: {e}", corpus.display()))?;
            for seed in files_in(&repo.join("fuzz/corpus").join(target)) {
                std::fs::copy(repo.join("fuzz/corpus").join(target).join(&seed), corpus.join(&seed))
                    .map_err(|e| format!("copying the {target} seed {seed}: {e}"))?;
            }
            let before = files_in(&corpus).len();
            let artifacts = files_in(&repo.join("fuzz/artifacts").join(target));
            let log = args.out.join(format!("{target}.log"));
            running.push((target, before, artifacts, log.clone(), start(target, args.seconds, &corpus, &log)?));
        }
        for (target, before, old_artifacts, log, mut child) in running {
            child.wait().map_err(|e| format!("waiting for {target}: {e}"))?;
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let findings: Vec<String> = files_in(&repo.join("fuzz/artifacts").join(target))
                .into_iter()
                .filter(|f| !old_artifacts.contains(f))
                .map(|f| format!("fuzz/artifacts/{target}/{f}"))
                .collect();
            let executions = executions(&text);
            if executions.is_none() && findings.is_empty() {
                return Err(format!("{target}: libFuzzer reported no run (see {})", log.display()));
            }
            rows.push(FuzzRow {
                target: target.clone(),
                seconds: args.seconds,
                executions: executions.unwrap_or(0),
                corpus_before: before,
                corpus_after: files_in(&args.out.join("corpus").join(target)).len(),
                findings,
            });
        }
    }
    Ok(rows)
}

/// The table as Markdown.
pub fn markdown(rows: &[FuzzRow]) -> String {
    let mut s = String::from("# Fuzzing (cargo-fuzz, libFuzzer, AddressSanitizer)\n\n");
    s.push_str("| target | seconds | executions | corpus before → after | findings |\n|---|---|---|---|---|\n");
    for r in rows {
        let findings = if r.findings.is_empty() { "none".to_string() } else { r.findings.join(", ") };
        s.push_str(&format!(
            "| {} | {} | {} | {} → {} | {} |\n",
            r.target, r.seconds, r.executions, r.corpus_before, r.corpus_after, findings
        ));
    }
    s
}

/// `weft-lab fuzz`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let targets: Vec<String> =
        if args.targets.is_empty() { TARGETS.iter().map(|t| t.to_string()).collect() } else { args.targets.clone() };
    if let Some(t) = targets.iter().find(|t| !TARGETS.contains(&t.as_str())) {
        return Err(format!("unknown fuzz target {t:?}; the targets are {}", TARGETS.join(", ")));
    }
    check_tools()?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("creating {}: {e}", args.out.display()))?;
    let rows = measure(&args, &targets)?;
    crate::framework::selection::write_md_json(&args.out, "fuzz", &markdown(&rows), &rows)?;
    let found: Vec<&str> = rows.iter().filter(|r| !r.findings.is_empty()).map(|r| r.target.as_str()).collect();
    if !found.is_empty() {
        return Err(format!("findings in {} (crash inputs under fuzz/artifacts/)", found.join(", ")));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_its_file_its_seeds_and_its_manifest_entry() {
        let manifest = std::fs::read_to_string(repo().join("fuzz/Cargo.toml")).unwrap();
        for t in TARGETS {
            assert!(repo().join(format!("fuzz/fuzz_targets/{t}.rs")).is_file(), "{t}: no target file");
            assert!(manifest.contains(&format!("name = \"{t}\"")), "{t}: not in fuzz/Cargo.toml");
            assert!(!files_in(&repo().join("fuzz/corpus").join(t)).is_empty(), "{t}: no seed corpus");
        }
        let files = files_in(&repo().join("fuzz/fuzz_targets"));
        assert_eq!(files.len(), TARGETS.len(), "fuzz/fuzz_targets holds a target this list lacks: {files:?}");
    }

    #[test]
    fn executions_are_read_from_libfuzzers_last_done_line() {
        assert_eq!(executions("#1\tINITED\n#4442\tDONE cov: 1\nDone 4442 runs in 21 second(s)\n"), Some(4442));
        assert_eq!(executions("==1== ERROR: libFuzzer: deadly signal\n"), None);
    }

    #[test]
    fn an_unknown_target_is_refused_before_any_build() {
        let args = Args { seconds: 1, targets: vec!["nope".into()], jobs: 1, out: std::env::temp_dir() };
        let err = run(args).unwrap_err();
        assert!(err.contains("unknown fuzz target \"nope\""), "{err}");
    }

    #[test]
    fn markdown_lists_findings() {
        let row = |t: &str, f: Vec<String>| FuzzRow {
            target: t.into(),
            seconds: 60,
            executions: 10,
            corpus_before: 3,
            corpus_after: 9,
            findings: f,
        };
        let md = markdown(&[row("a", vec![]), row("b", vec!["fuzz/artifacts/b/crash-1".into()])]);
        assert!(md.contains("| a | 60 | 10 | 3 → 9 | none |"), "{md}");
        assert!(md.contains("| b | 60 | 10 | 3 → 9 | fuzz/artifacts/b/crash-1 |"), "{md}");
    }
}
