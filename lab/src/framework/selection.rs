//! What every measuring subcommand shares on its command line: which workloads and runtimes
//! ([`Selection`]), where this binary is (samples and servers run as child processes of it),
//! and writing a study's Markdown table beside its JSON rows.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::runtimes::RuntimeId;

/// The `--filter`, `--runtimes`, `--workers`, `--quiet` and `--sample-timeout` flags.
#[derive(Args, Debug, Clone, Default)]
pub struct Selection {
    /// Only workloads whose name contains one of these (comma-separated) substrings, or is
    /// exactly one written `=NAME`.
    #[arg(long, value_delimiter = ',')]
    pub filter: Vec<String>,
    /// Runtimes to measure (comma-separated; default: all six).
    #[arg(long, value_delimiter = ',')]
    pub runtimes: Vec<String>,
    /// Worker threads for every multi-thread runtime (default: the machine's cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Hide the progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Seconds after which a sample counts as hung.
    #[arg(long, default_value_t = 120)]
    pub sample_timeout: u64,
}

impl Selection {
    /// The runtimes named by `--runtimes`, or `default` when none is named.
    pub fn runtimes(&self, default: &[RuntimeId]) -> Result<Vec<RuntimeId>, String> {
        if self.runtimes.is_empty() {
            return Ok(default.to_vec());
        }
        self.runtimes.iter().map(|name| runtime_by_name(name.trim())).collect()
    }

    /// The runtimes to measure (`default` unless `--runtimes` names some) and the worker count.
    pub fn resolve(&self, default: &[RuntimeId]) -> Result<(Vec<RuntimeId>, usize), String> {
        Ok((self.runtimes(default)?, self.workers()))
    }

    /// `--workers`, or the machine's cores.
    pub fn workers(&self) -> usize {
        self.workers.unwrap_or_else(super::results::default_workers)
    }
}

/// The `--runtime NAME --workers N` every hidden child entry point takes from its parent.
#[derive(Args, Debug, Clone)]
pub struct ChildRuntime {
    #[arg(long)]
    pub runtime: String,
    #[arg(long)]
    pub workers: usize,
}

impl ChildRuntime {
    /// The runtime named by `--runtime`.
    pub fn id(&self) -> Result<RuntimeId, String> {
        runtime_by_name(&self.runtime)
    }
}

/// The runtime called `name`, or an error naming it.
pub fn runtime_by_name(name: &str) -> Result<RuntimeId, String> {
    RuntimeId::by_name(name).ok_or_else(|| format!("unknown runtime {name:?}"))
}

/// This binary, for the child processes (samples, servers, holders) a study starts.
pub fn this_exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find the weft-lab binary: {e}"))
}

/// Prints `md`, then writes `OUT/STEM.md` and `OUT/STEM.json` (the rows, pretty-printed).
pub fn write_md_json<T: Serialize>(out: &Path, stem: &str, md: &str, rows: &T) -> Result<(), String> {
    print!("{md}");
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    std::fs::write(out.join(format!("{stem}.md")), md).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(rows).map_err(|e| e.to_string())?;
    std::fs::write(out.join(format!("{stem}.json")), json).map_err(|e| e.to_string())?;
    println!("\nwrote {}/{stem}.{{md,json}}", out.display());
    Ok(())
}

/// Whether `name` passes the filters: substrings, or exact names written `=NAME`.
pub fn selected(name: &str, filter: &[String]) -> bool {
    filter.is_empty()
        || filter.iter().any(|f| match f.strip_prefix('=') {
            Some(exact) => name == exact,
            None => name.contains(f.as_str()),
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn filters_match_substrings_or_exact_names() {
        let f = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        assert!(super::selected("chained_spawn", &f("spawn")));
        assert!(!super::selected("chained_spawn", &f("=spawn")));
        assert!(super::selected("spawn", &f("=spawn,ring")));
        assert!(super::selected("anything", &[]));
    }
}
