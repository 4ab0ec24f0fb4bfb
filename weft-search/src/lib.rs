//! weft-search: search Claude Code session transcripts (`~/.claude/projects/**/*.jsonl`) with
//! ccms's query language, filters and outputs, on the weft runtime.
//!
//! # Map
//! - [`query`]: the query language; [`record`]: what text of a line is searched;
//!   [`prefilter`]: which lines could match, from raw bytes; [`search`]: one file's search;
//!   [`files`]: which transcripts a search covers; [`scan`]: files on weft's blocking pool,
//!   streamed and cancellable; [`project`]: where sessions are; [`when`]: time filters; [`answer`]: merging files into the answer;
//!   [`output`]: text, JSON, JSONL and stats; [`tui`]: the interactive search; [`cli`]: flags.
//!
//! # Glossary
//! - *searched text*: what a query sees of a line (ccms's: content text, session id, uuid).
//! - *hit*: a message line whose searched text matches and which passes the filters.
//! - *candidate*: a line the prefilter could not rule out; only candidates are parsed.
//! - *incomplete*: some file or candidate line could not be read; the answer says so.

pub mod answer;
pub mod cli;
pub mod files;
pub mod output;
pub mod prefilter;
pub mod project;
pub mod query;
pub mod record;
pub mod scan;
pub mod search;
pub(crate) mod shape;
pub mod tui;
pub mod when;
