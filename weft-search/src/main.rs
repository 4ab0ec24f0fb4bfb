//! `weft-search`: the command line. See the crate documentation and `weft-search --help`.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{CommandFactory, Parser};

use weft_search::cli::{Cli, Format};
use weft_search::output;
use weft_search::project::Source;
use weft_search::search::Job;
use weft_search::{answer, files, tui, when};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("weft-search: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    if let Some(shell) = cli.completions {
        clap_complete::generate(shell, &mut Cli::command(), "weft-search", &mut std::io::stdout());
        return Ok(ExitCode::SUCCESS);
    }
    let start = Instant::now();
    let config = cli.config(&when::now(), std::io::stdout().is_terminal())?;
    let root = config.source.root.clone();
    let Some(query) = config.query else {
        if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
            return Err("give a QUERY: without one the interactive search opens, and that needs a terminal".into());
        }
        let files = list(&config.source, config.encoded.as_deref(), config.project.as_deref())?;
        return tui::run(tui::Setup { files: Arc::new(files), root, filter: config.filter, threads: config.threads })
            .map_err(|e| format!("terminal: {e}"));
    };
    let files = list(&config.source, config.encoded.as_deref(), config.project.as_deref())?;
    let job = Arc::new(Job::new(query, config.filter, config.limit, cli.oldest_first, cli.stats));
    let files = Arc::new(files);
    let rt = weft::runtime::Builder::new_current_thread()
        .max_blocking_threads(config.threads)
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let answer = rt.block_on(answer::collect(files.clone(), &root, job, config.threads));
    drop(rt);
    let elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
    let style = config.style;

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let printed = if cli.stats {
        output::print_stats(&mut out, &answer, cli.format != Format::Text)
    } else {
        match cli.format {
            Format::Text => output::print_text(&mut out, &answer, &files.paths, &root, style),
            Format::Json | Format::Jsonl => output::print_json(
                &mut out,
                &answer,
                &files.paths,
                &root,
                style,
                elapsed_ms,
                cli.format == Format::Jsonl,
            ),
        }
    };
    match printed.and_then(|()| out.flush()) {
        Ok(()) => {}
        // `weft-search … | head`: the reader left; that is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        Err(e) => return Err(format!("writing the answer: {e}")),
    }
    drop(out);
    if cli.format == Format::Text && !cli.raw {
        let shown = if cli.stats { String::new() } else { format!("{} of ", answer.hits.len()) };
        eprintln!(
            "{shown}{} hits in {} files ({:.1} MB) in {:.0} ms",
            answer.total_hits,
            answer.files_searched,
            answer.bytes as f64 / 1e6,
            elapsed_ms
        );
    }
    if !answer.complete() {
        for s in &answer.skipped_files {
            eprintln!("weft-search: skipped {}: {}", s.path, s.reason);
        }
        let mut places =
            answer.invalid_at.iter().map(|p| format!("{}:{}", p.path, p.line)).collect::<Vec<_>>().join(", ");
        if !places.is_empty() {
            places = format!(" (first at {places})");
        }
        eprintln!(
            "INCOMPLETE: {} files not read, {} lines that could match not read ({} not valid JSON/UTF-8{places}, {} longer than {} MB)",
            answer.skipped_files.len(),
            answer.invalid_lines + answer.oversized_lines,
            answer.invalid_lines,
            answer.oversized_lines,
            weft_search::search::MAX_LINE >> 20,
        );
        if cli.strict {
            return Ok(ExitCode::from(2));
        }
    }
    Ok(if answer.total_hits > 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Lists the files to search; a missing root or an empty project is an error that says what to
/// do.
fn list(source: &Source, encoded: Option<&str>, project: Option<&Path>) -> Result<files::FileSet, String> {
    if !source.root.exists() {
        return Err(format!(
            "{} does not exist: no Claude Code sessions here (give --pattern DIR, or set CLAUDE_CONFIG_DIR)",
            source.root.display()
        ));
    }
    let files = source.list(encoded)?;
    if files.is_empty() {
        if let (Some(p), Some(e)) = (project, encoded) {
            return Err(format!(
                "no sessions for project {} (no directory {}/{e}*); use --all-projects or --project PATH",
                p.display(),
                source.root.display()
            ));
        }
    }
    Ok(files)
}
