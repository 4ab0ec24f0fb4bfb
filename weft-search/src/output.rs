//! Printing an answer: text (for people), JSON and JSONL (for scripts), raw lines, stats.
//!
//! Hits go to stdout; the summary line, warnings and INCOMPLETE go to stderr, so a pipe gets
//! only hits. Text output is colored only on a terminal, and never with `--no-color` or
//! `NO_COLOR` set (to anything non-empty).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::answer::{self, Answer};
use crate::project;
use crate::record::Kind;
use crate::search::Hit;

/// How to print.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
    pub full_text: bool,
    pub raw: bool,
}

/// Whether to color: a terminal, no `--no-color`, no `NO_COLOR`.
pub fn use_color(no_color_flag: bool, stdout_is_terminal: bool) -> bool {
    !no_color_flag && stdout_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A timestamp in the local zone as `YYYY-MM-DD HH:MM:SS` (the text as given if unparsable).
pub fn local_time(ts: &str) -> String {
    match ts.parse::<jiff::Timestamp>() {
        Ok(t) => t.to_zoned(crate::when::now().time_zone().clone()).strftime("%Y-%m-%d %H:%M:%S").to_string(),
        Err(_) => ts.to_owned(),
    }
}

/// A hit as scripts get it (`-f json` / `-f jsonl`).
#[derive(Serialize)]
pub struct JsonHit<'a> {
    pub file: String,
    pub project: &'a str,
    pub session_id: &'a str,
    pub uuid: &'a str,
    pub role: &'static str,
    #[serde(rename = "type")]
    pub part: &'static str,
    pub timestamp: &'a str,
    pub line: u32,
    pub cwd: &'a str,
    pub snippet: &'a str,
    /// `[start, end)` byte offsets of the match within `snippet`.
    #[serde(rename = "match")]
    pub match_range: Option<(u32, u32)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<serde_json::Value>,
}

/// Builds a hit's JSON form; `--full-text` and `--raw` re-read its line.
pub fn json_hit<'a>(hit: &'a Hit, path: &'a Path, root: &Path, style: Style) -> io::Result<JsonHit<'a>> {
    let text = if style.full_text { Some(answer::full_text(path, hit)?) } else { None };
    let raw = if style.raw {
        Some(serde_json::from_str(&answer::reread(path, hit)?).map_err(io::Error::other)?)
    } else {
        None
    };
    Ok(JsonHit {
        file: path.display().to_string(),
        project: project::project_dir(path, root).unwrap_or(""),
        session_id: &hit.session_id,
        uuid: &hit.uuid,
        role: hit.kind.name(),
        part: hit.part.name(),
        timestamp: &hit.timestamp,
        line: hit.line,
        cwd: &hit.cwd,
        snippet: &hit.snippet,
        match_range: hit.match_range,
        text,
        raw,
    })
}

/// The counts of an answer, as the JSON summary and JSONL's last line carry them.
pub fn summary_json(a: &Answer, elapsed_ms: f64) -> serde_json::Value {
    json!({
        "total_hits": a.total_hits,
        "returned": a.hits.len(),
        "files_searched": a.files_searched,
        "bytes": a.bytes,
        "skipped_files": a.skipped_files,
        "invalid_lines": a.invalid_lines,
        "invalid_at": a.invalid_at,
        "oversized_lines": a.oversized_lines,
        "complete": a.complete(),
        "elapsed_ms": (elapsed_ms * 10.0).round() / 10.0,
    })
}

/// The answer as JSON: one pretty document (`--format json`), or with `one_per_line` one hit per
/// line and then a `_metadata` line (`--format jsonl`).
pub fn print_json(
    out: &mut impl Write,
    a: &Answer,
    paths: &[PathBuf],
    root: &Path,
    style: Style,
    elapsed_ms: f64,
    one_per_line: bool,
) -> io::Result<()> {
    if one_per_line {
        for h in &a.hits {
            serde_json::to_writer(&mut *out, &json_hit(h, &paths[h.file as usize], root, style)?)
                .map_err(io::Error::other)?;
            writeln!(out)?;
        }
        // The last line, as ccms's `_metadata`: a script can tell a complete answer from a cut one.
        serde_json::to_writer(&mut *out, &json!({ "_metadata": summary_json(a, elapsed_ms) }))
            .map_err(io::Error::other)?;
        return writeln!(out);
    }
    let hits =
        a.hits.iter().map(|h| json_hit(h, &paths[h.file as usize], root, style)).collect::<io::Result<Vec<_>>>()?;
    let mut doc = summary_json(a, elapsed_ms);
    doc["hits"] = serde_json::to_value(hits).map_err(io::Error::other)?;
    serde_json::to_writer_pretty(&mut *out, &doc).map_err(io::Error::other)?;
    writeln!(out)
}

const BOLD_RED: &str = "\x1b[1;31m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn role_color(k: Kind) -> &'static str {
    match k {
        Kind::User => "\x1b[32m",
        Kind::Assistant => "\x1b[36m",
        Kind::System => "\x1b[33m",
        Kind::Summary => "\x1b[35m",
    }
}

/// `TIME  ROLE  PROJECT/SESSION:LINE  UUID`, then the snippet (or the whole text) indented.
pub fn print_text(out: &mut impl Write, a: &Answer, paths: &[PathBuf], root: &Path, style: Style) -> io::Result<()> {
    for h in &a.hits {
        let path = &paths[h.file as usize];
        if style.raw {
            writeln!(out, "{}", answer::reread(path, h)?)?;
            continue;
        }
        let project = project::project_dir(path, root).unwrap_or("");
        let session = path.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default();
        let time = local_time(&h.timestamp);
        let (c, d, r) = if style.color { (role_color(h.kind), DIM, RESET) } else { ("", "", "") };
        writeln!(out, "{d}{time}{r} {c}{:<9}{r} {project}/{session}:{} {d}{}{r}", h.kind.name(), h.line, h.uuid)?;
        if style.full_text {
            for l in answer::full_text(path, h)?.lines() {
                writeln!(out, "  {l}")?;
            }
            writeln!(out)?;
            continue;
        }
        match h.match_range {
            Some((s, e)) if style.color => {
                let (s, e) = (s as usize, e as usize);
                writeln!(out, "  {}{BOLD_RED}{}{RESET}{}", &h.snippet[..s], &h.snippet[s..e], &h.snippet[e..])?
            }
            _ => writeln!(out, "  {}", h.snippet)?,
        }
    }
    Ok(())
}

/// `--stats`: counts by role, type, session and project, and the time range.
pub fn print_stats(out: &mut impl Write, a: &Answer, json_out: bool) -> io::Result<()> {
    let stats = a.stats.clone().unwrap_or_default();
    let mut roles: Vec<_> = stats.by_role.iter().map(|(k, n)| (k.name(), *n)).collect();
    let mut parts: Vec<_> = stats.by_part.iter().map(|(k, n)| (k.name(), *n)).collect();
    let mut sessions: Vec<_> = stats.by_session.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    let mut projects: Vec<_> = a.by_project.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    for v in [&mut roles, &mut parts, &mut sessions, &mut projects] {
        v.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    }
    if json_out {
        let doc = json!({
            "total_hits": a.total_hits,
            "files_searched": a.files_searched,
            "by_role": roles.iter().map(|(k, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "by_type": parts.iter().map(|(k, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "by_session": sessions.iter().map(|(k, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "by_project": projects.iter().map(|(k, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "first": stats.first,
            "last": stats.last,
            "complete": a.complete(),
        });
        serde_json::to_writer_pretty(&mut *out, &doc).map_err(io::Error::other)?;
        return writeln!(out);
    }
    let total = a.total_hits.max(1) as f64;
    writeln!(
        out,
        "{} messages in {} sessions, {} projects, {} files searched",
        a.total_hits,
        sessions.len(),
        projects.len(),
        a.files_searched
    )?;
    if let (Some(f), Some(l)) = (&stats.first, &stats.last) {
        writeln!(out, "from {} to {}", local_time(f), local_time(l))?;
    }
    for (title, rows, max) in [
        ("by role", &roles, usize::MAX),
        ("by type", &parts, usize::MAX),
        ("by project", &projects, 10),
        ("by session (top 10)", &sessions, 10),
    ] {
        writeln!(out, "\n{title}:")?;
        for (name, n) in rows.iter().take(max) {
            let name = if name.is_empty() { "(none)" } else { name };
            writeln!(out, "  {:>8}  {:>5.1}%  {name}", n, *n as f64 * 100.0 / total)?;
        }
        if rows.len() > max {
            writeln!(out, "  … and {} more", rows.len() - max)?;
        }
    }
    Ok(())
}
