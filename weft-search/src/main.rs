//! `weft-search`: the command line. See the crate documentation and `weft-search --help`.

use std::io::{IsTerminal, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{CommandFactory, Parser};

use weft_search::cli::{Cli, Format, Role};
use weft_search::output::{self, Style};
use weft_search::project::{self, Source};
use weft_search::query::Query;
use weft_search::record::Kind;
use weft_search::search::{Filter, Job};
use weft_search::{answer, tui, when};
use weft_search::{files, scan};

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

/// `path` made absolute against the current directory, `.` and `..` resolved by name (Claude
/// Code records the working directory as the shell had it, so links are not followed).
fn absolute(path: &Path) -> Result<PathBuf, String> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

fn kind_of(r: Role) -> Kind {
    match r {
        Role::User => Kind::User,
        Role::Assistant => Kind::Assistant,
        Role::System => Kind::System,
        Role::Summary => Kind::Summary,
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    if let Some(shell) = cli.completions {
        clap_complete::generate(shell, &mut Cli::command(), "weft-search", &mut std::io::stdout());
        return Ok(ExitCode::SUCCESS);
    }
    let start = Instant::now();
    let now = when::now();
    let after = match (&cli.after, &cli.since) {
        (Some(_), Some(_)) => return Err("give --after or --since, not both".into()),
        (Some(a), None) => Some(when::parse("--after", a, &now).map_err(|e| e.to_string())?),
        (None, Some(s)) => Some(when::parse("--since", s, &now).map_err(|e| e.to_string())?),
        (None, None) => None,
    };
    let before =
        cli.before.as_deref().map(|b| when::parse("--before", b, &now)).transpose().map_err(|e| e.to_string())?;
    let filter = Filter {
        role: cli.role.map(kind_of),
        session: cli.session.clone(),
        message_id: cli.message_id.clone(),
        window: when::Window { after, before },
    };
    let source = Source::new(cli.pattern.as_deref())?;
    let project = match (&cli.project, cli.all_projects) {
        (_, true) => None,
        (Some(p), false) => Some(absolute(p)?),
        // A given --pattern, and a message id, search everywhere unless --project narrows it.
        (None, false) if source.explicit || cli.message_id.is_some() => None,
        (None, false) => Some(absolute(Path::new("."))?),
    };
    let encoded = project.as_ref().map(|p| project::encode(p.to_string_lossy().trim_end_matches('/')));

    let interactive = cli.query.is_none() && !cli.stats && cli.message_id.is_none();
    if interactive {
        if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
            return Err("give a QUERY: without one the interactive search opens, and that needs a terminal".into());
        }
        let files = list(&source, encoded.as_deref(), project.as_deref())?;
        return tui::run(tui::Setup {
            files: Arc::new(files),
            root: source.root.clone(),
            filter,
            threads: cli.threads.unwrap_or_else(scan::cores),
        })
        .map_err(|e| format!("terminal: {e}"));
    }
    let query = match &cli.query {
        Some(q) => Query::parse(q).map_err(|e| e.to_string())?,
        None => Query::all(),
    };
    let files = list(&source, encoded.as_deref(), project.as_deref())?;
    let limit = if cli.stats { 0 } else { cli.limit };
    let job = Arc::new(Job::new(query, filter, limit, cli.oldest_first, cli.stats));
    let threads = cli.threads.unwrap_or_else(scan::cores).max(1);
    let files = Arc::new(files);
    let rt = weft::runtime::Builder::new_current_thread()
        .max_blocking_threads(threads)
        .build()
        .map_err(|e| format!("starting the runtime: {e}"))?;
    let root = source.root.clone();
    let answer = rt.block_on(answer::collect(files.clone(), &root, job, threads));
    drop(rt);
    let elapsed_ms = start.elapsed().as_secs_f64() * 1e3;

    let style = Style {
        color: output::use_color(cli.no_color, std::io::stdout().is_terminal()),
        full_text: cli.full_text || (cli.message_id.is_some() && !cli.raw),
        raw: cli.raw,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let printed = if cli.stats {
        output::print_stats(&mut out, &answer, cli.format != Format::Text)
    } else {
        match cli.format {
            Format::Text => output::print_text(&mut out, &answer, &files.paths, &root, style),
            Format::Json => output::print_json(&mut out, &answer, &files.paths, &root, style, elapsed_ms),
            Format::Jsonl => output::print_jsonl(&mut out, &answer, &files.paths, &root, style, elapsed_ms),
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
