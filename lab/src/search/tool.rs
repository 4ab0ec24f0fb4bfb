//! `weft-lab search QUERY`: the search as a tool. Prints `timestamp  project/session  snippet`
//! per hit (newest first, the match highlighted on a terminal), then a summary line that says
//! whether the answer is complete.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;

use super::engines::{self, Engine, RunSpec};
use super::query::Query;
use super::record::JsonParser;

#[derive(Args, Debug)]
pub struct ToolArgs {
    /// The query: words, "phrases", /regex/i, AND, OR, NOT, parentheses.
    pub query: Option<String>,
    /// Directory (or file) to search; default ~/.claude/projects.
    #[arg(long)]
    pub path: Option<PathBuf>,
    #[arg(long, default_value = "weft")]
    pub engine: String,
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// JSON parser: serde-json or sonic-rs.
    #[arg(long, default_value = "serde-json")]
    pub parser: String,
    /// Print the answer as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn command(args: ToolArgs) -> Result<ExitCode, String> {
    let q = args.query.ok_or("give a QUERY (or a subcommand: gen-corpus, bench); see --help")?;
    let query = Arc::new(Query::parse(&q).map_err(|e| e.to_string())?);
    let engine = Engine::parse(&args.engine)?;
    let parser = JsonParser::parse(&args.parser)?;
    let root = match args.path {
        Some(p) => p,
        None => {
            let home = std::env::var_os("HOME").ok_or("HOME is not set; give --path")?;
            let p = PathBuf::from(home).join(".claude/projects");
            if !p.is_dir() {
                return Err(format!("{} does not exist; give --path DIR", p.display()));
            }
            p
        }
    };
    if engine == Engine::SmolTuned && std::env::var_os("BLOCKING_MAX_THREADS").is_none() {
        // Still single-threaded here: the blocking crate has not read its environment yet.
        std::env::set_var("BLOCKING_MAX_THREADS", engines::cores().to_string());
    }
    let start = Instant::now();
    let (files, skipped) =
        engines::list_files(&root).map_err(|e| format!("{}: {}", root.display(), engines::describe_io(&e)))?;
    let spec = RunSpec { engine, pool: None, workers: engines::cores(), limit: args.limit, parser };
    let outcomes = engines::run_files(&spec, &files, query).map_err(|e| e.to_string())?;
    let out = engines::merge(&files, skipped, outcomes, args.limit);
    let elapsed = start.elapsed();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
        return Ok(if out.complete() { ExitCode::SUCCESS } else { ExitCode::from(2) });
    }
    let color = std::io::stdout().is_terminal();
    for hit in &out.hits {
        let path = &files[hit.file as usize];
        let session = path.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default();
        let project = path.parent().and_then(|p| p.file_name()).map(|s| s.to_string_lossy()).unwrap_or_default();
        let snippet = match hit.match_range {
            Some((a, b)) if color => {
                let (a, b) = (a as usize, b as usize);
                format!("{}\x1b[1;31m{}\x1b[0m{}", &hit.snippet[..a], &hit.snippet[a..b], &hit.snippet[b..])
            }
            _ => hit.snippet.clone(),
        };
        println!("{}  {project}/{session}:{}  {snippet}", hit.timestamp, hit.line);
    }
    println!(
        "{} of {} hits in {} files ({:.1} MB) in {:.0} ms with {}; {} invalid lines skipped",
        out.hits.len(),
        out.total_hits,
        out.files_searched,
        out.bytes as f64 / 1e6,
        elapsed.as_secs_f64() * 1e3,
        engine.name(),
        out.invalid_lines
    );
    for s in &out.skipped_files {
        eprintln!("skipped {}: {}", s.path, s.reason);
    }
    if out.oversized_lines > 0 {
        eprintln!("skipped {} lines longer than {} MB", out.oversized_lines, super::record::MAX_LINE >> 20);
    }
    if !out.complete() {
        eprintln!("INCOMPLETE: {} files and {} lines were not searched", out.skipped_files.len(), out.oversized_lines);
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
