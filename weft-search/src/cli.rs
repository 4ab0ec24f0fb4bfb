//! The command line: `weft-search [QUERY] [FLAGS]`, with ccms's flag names (and shorter
//! spellings as aliases), no subcommands (so no query word is ever taken for one).

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

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
