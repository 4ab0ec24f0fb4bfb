//! The command line: `weft-search [QUERY] [FLAGS]`, with ccms's flag names (and shorter
//! spellings as aliases), no subcommands (so no query word is ever taken for one), and what
//! the flags mean once checked against each other and the clock: a [`Config`]. `main.rs` only
//! runs a `Config`.

use std::path::{Component, Path, PathBuf};

use clap::{Parser, ValueEnum};

use crate::output::{self, Style};
use crate::project::{self, Source};
use crate::query::Query;
use crate::record::Kind;
use crate::search::Filter;
use crate::when;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "weft-search",
    version,
    about = "Search your Claude Code sessions (~/.claude/projects/**/*.jsonl)",
    long_about = "Search your Claude Code sessions (~/.claude/projects/**/*.jsonl).\n\n\
        Without a QUERY on a terminal, opens the interactive search.\n\n\
        QUERY: words and \"phrases\" or 'phrases' (case-insensitive substrings), /regex/flags \
        (flags i, m, s, u, x), AND, OR, NOT, parentheses; words side by side mean AND. \
        Inside a phrase, \\\" \\' and \\\\ stand for the quote or backslash itself.\n\n\
        Exit status as grep: 0 hits found, 1 no hits, 2 error (or an incomplete answer with --strict).",
    after_help = "Examples:\n  weft-search 'tokio AND spawn' --since '2 days ago'\n  \
        weft-search '/dead+lock/i' -r assistant -n 20 -f jsonl\n  weft-search --stats error --all-projects"
)]
pub struct Cli {
    /// The query. Without one (and on a terminal), the interactive search opens.
    pub query: Option<String>,

    /// Only messages of this role: user, assistant, system or summary.
    #[arg(short, long, value_enum)]
    pub role: Option<Role>,

    /// Only this session (its id, the transcript's file name).
    #[arg(short = 's', long = "session", visible_alias = "session-id")]
    pub session: Option<String>,

    /// Only the message with this uuid.
    #[arg(long)]
    pub message_id: Option<String>,

    /// Only sessions whose working directory is PATH or below it (default: the current
    /// directory's; with no sessions there, an error that suggests --all-projects).
    #[arg(long, value_name = "PATH", conflicts_with = "all_projects")]
    pub project: Option<PathBuf>,

    /// Search every project, not just the current directory's.
    #[arg(long)]
    pub all_projects: bool,

    /// Only messages after this time: RFC 3339, a date, "YYYY-MM-DD HH:MM", Unix seconds.
    #[arg(long, value_name = "TIME")]
    pub after: Option<String>,

    /// Only messages before this time (same forms as --after).
    #[arg(long, value_name = "TIME")]
    pub before: Option<String>,

    /// Only messages since a span before now: "2h", "1 day ago", "3 weeks", "yesterday".
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,

    /// Print at most N hits (the newest, or the oldest with --oldest-first).
    #[arg(short = 'n', long = "limit", visible_alias = "max-results", default_value_t = 200, value_name = "N")]
    pub limit: usize,

    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Print each hit's whole searched text, not a snippet.
    #[arg(long)]
    pub full_text: bool,

    /// Print each hit's JSON line as it is in the file.
    #[arg(long, conflicts_with = "full_text")]
    pub raw: bool,

    /// Print counts by role, type, session, project and the time range instead of hits.
    #[arg(long)]
    pub stats: bool,

    /// No colors (also when NO_COLOR is set or stdout is not a terminal).
    #[arg(long)]
    pub no_color: bool,

    /// Oldest hits first.
    #[arg(long)]
    pub oldest_first: bool,

    /// Exit 2 when the answer is incomplete (lines or files skipped), not only warn.
    #[arg(long)]
    pub strict: bool,

    /// Where to search: a directory, a .jsonl file, or a glob such as
    /// '~/.claude/projects/**/*.jsonl' (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects).
    #[arg(short = 'p', long = "pattern", visible_alias = "path", value_name = "PATH|GLOB")]
    pub pattern: Option<String>,

    /// Print a completion script for this shell and exit.
    #[arg(long, value_enum, visible_alias = "completion", value_name = "SHELL")]
    pub completions: Option<clap_complete::Shell>,

    /// Search threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    User,
    Assistant,
    System,
    Summary,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::User, Role::Assistant, Role::System, Role::Summary];

    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Summary => "summary",
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    /// One hit per line, then a `_metadata` line (`json-l` is ccms's spelling).
    #[value(alias = "json-l")]
    Jsonl,
}

/// What the flags ask for, checked: a contradiction or an unreadable date is an error here,
/// before any file is opened.
#[derive(Debug)]
pub struct Config {
    pub filter: Filter,
    pub source: Source,
    /// The project whose sessions are searched (absolute), or `None` for every project.
    pub project: Option<PathBuf>,
    /// `project` as Claude Code names its directory.
    pub encoded: Option<String>,
    /// `None` for the interactive search (no QUERY, no `--stats`, no `--message-id`).
    pub query: Option<Query>,
    /// Hits to print (0 with `--stats`).
    pub limit: usize,
    pub threads: usize,
    pub style: Style,
}

impl Cli {
    /// The checked configuration, with relative dates read against `now` and paths against the
    /// current directory.
    pub fn config(&self, now: &jiff::Zoned, stdout_is_terminal: bool) -> Result<Config, String> {
        let after = match (&self.after, &self.since) {
            (Some(_), Some(_)) => return Err("give --after or --since, not both".into()),
            (Some(a), None) => Some(when::parse("--after", a, now).map_err(|e| e.to_string())?),
            (None, Some(s)) => Some(when::parse("--since", s, now).map_err(|e| e.to_string())?),
            (None, None) => None,
        };
        let before =
            self.before.as_deref().map(|b| when::parse("--before", b, now)).transpose().map_err(|e| e.to_string())?;
        let filter = Filter {
            role: self.role.map(Role::kind),
            session: self.session.clone(),
            message_id: self.message_id.clone(),
            window: when::Window { after, before },
        };
        let source = Source::new(self.pattern.as_deref())?;
        let project = match (&self.project, self.all_projects) {
            (_, true) => None,
            (Some(p), false) => Some(absolute(p)?),
            // A given --pattern, and a message id, search everywhere unless --project narrows it.
            (None, false) if source.explicit || self.message_id.is_some() => None,
            (None, false) => Some(absolute(Path::new("."))?),
        };
        let encoded = project.as_ref().map(|p| project::encode(p.to_string_lossy().trim_end_matches('/')));
        let query = match &self.query {
            Some(q) => Some(Query::parse(q).map_err(|e| e.to_string())?),
            None if self.stats || self.message_id.is_some() => Some(Query::all()),
            // The interactive search.
            None => None,
        };
        let style = Style {
            color: output::use_color(self.no_color, stdout_is_terminal),
            full_text: self.full_text || (self.message_id.is_some() && !self.raw),
            raw: self.raw,
        };
        Ok(Config {
            filter,
            source,
            project,
            encoded,
            query,
            limit: if self.stats { 0 } else { self.limit },
            threads: self.threads.unwrap_or_else(crate::scan::cores).max(1),
            style,
        })
    }
}

impl Role {
    /// The record kind this role selects.
    pub fn kind(self) -> Kind {
        match self {
            Role::User => Kind::User,
            Role::Assistant => Kind::Assistant,
            Role::System => Kind::System,
            Role::Summary => Kind::Summary,
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Cli;

    fn config(args: &[&str]) -> Result<super::Config, String> {
        let cli = Cli::try_parse_from(std::iter::once("weft-search").chain(args.iter().copied())).unwrap();
        cli.config(&crate::when::now(), false)
    }

    #[test]
    fn contradictions_and_bad_dates_are_errors_before_any_file_is_read() {
        let both = config(&["x", "--after", "2026-01-01", "--since", "1 day ago", "--pattern", "/nonexistent"]);
        assert_eq!(both.unwrap_err(), "give --after or --since, not both");
        let bad = config(&["x", "--before", "the day after never", "--pattern", "/nonexistent"]).unwrap_err();
        assert!(bad.contains("--before"), "{bad}");
    }

    #[test]
    fn stats_prints_no_hits_and_a_message_id_shows_full_text_everywhere() {
        let stats = config(&["--stats", "error", "--pattern", "/nonexistent"]).unwrap();
        assert_eq!((stats.limit, stats.query.is_none(), stats.project), (0, false, None));
        let id = config(&["--message-id", "m1", "--pattern", "/nonexistent"]).unwrap();
        assert!(id.style.full_text && id.project.is_none() && id.query.is_some());
        let tui = config(&["--pattern", "/nonexistent"]).unwrap();
        assert!(tui.query.is_none());
    }
}
