//! The search of one file: candidate lines (from the [`Prefilter`]) parsed, matched, filtered,
//! and kept as the file's best hits; counted for `--stats`.
//!
//! # Invariants
//! - Answers do not depend on the prefilter: a line it skips cannot match (see `prefilter`),
//!   and `WEFT_SEARCH_NO_PREFILTER=1` turns it off to prove it (the tests compare both ways).
//! - Hit order is total: timestamp text descending (ccms compares the strings), then file
//!   index (sorted path order), then line number; `--oldest-first` reverses all three.
//! - A file keeps at most `limit` hits (the global best `limit` are among the files' best), and
//!   each hit its snippet only; `--full-text` and `--raw` re-read the few lines printed.
//! - Nothing is skipped silently: an unreadable candidate line is counted (`invalid_lines`),
//!   a line over [`MAX_LINE`] too (`oversized_lines`); lines the prefilter skipped could not
//!   have matched, so they are not part of the answer either way.
//!
//! # A summary's time (as ccms)
//! A summary line has no `timestamp`. When the file's first message line is a summary and a
//! message with a timestamp came before this summary, the summary takes the first such
//! timestamp; otherwise it takes the file's modification time (`YYYY-MM-DDTHH:MM:SS+00:00`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::prefilter::Prefilter;
use crate::query::{Matcher, Query};
use crate::record::{self, Kind, Part, Record, Unread};
use crate::when::Window;

/// Lines longer than this are skipped and counted, so one giant line cannot take the memory.
pub const MAX_LINE: usize = 64 << 20;

/// Characters of context before and after the match in a snippet.
const SNIPPET_BEFORE: usize = 50;
const SNIPPET_AFTER: usize = 100;

/// The per-line filters (`-r`, `-s`, `--message-id`, time).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub role: Option<Kind>,
    pub session: Option<String>,
    pub message_id: Option<String>,
    pub window: Window,
}

impl Filter {
    fn accepts(&self, r: &Record<'_>, timestamp: &str) -> bool {
        self.role.is_none_or(|k| k == r.kind)
            && self.session.as_deref().is_none_or(|s| r.session_id.as_deref() == Some(s))
            && self.message_id.as_deref().is_none_or(|m| r.uuid.as_deref() == Some(m))
            && (self.window.is_open() || self.window.contains(Some(timestamp)))
    }
}

/// Everything a scan needs to search one file.
#[derive(Debug)]
pub struct Job {
    pub query: Query,
    pub prefilter: Option<Prefilter>,
    pub filter: Filter,
    /// Hits kept per file (and printed).
    pub limit: usize,
    pub oldest_first: bool,
    /// Count every hit by role, part, session and time (`--stats`).
    pub stats: bool,
    /// Build each kept hit's snippet and ids while searching (the TUI shows hits as they come);
    /// otherwise only the printed hits get them, from [`fill_details`] (the CLI: a common word
    /// has ~100,000 hits of which 200 are printed).
    pub details: bool,
}

impl Job {
    /// A job whose prefilter follows the query (off when `WEFT_SEARCH_NO_PREFILTER` is set).
    pub fn new(query: Query, filter: Filter, limit: usize, oldest_first: bool, stats: bool) -> Job {
        let prefilter =
            if std::env::var_os("WEFT_SEARCH_NO_PREFILTER").is_some() { None } else { Prefilter::new(&query) };
        Job { query, prefilter, filter, limit, oldest_first, stats, details: false }
    }

    /// The same job, building every kept hit's snippet and ids as it goes.
    pub fn with_details(mut self) -> Job {
        self.details = true;
        self
    }

    /// The same job with no prefilter: every line parsed (the tests prove answers identical).
    pub fn without_prefilter(mut self) -> Job {
        self.prefilter = None;
        self
    }

    /// Whether `a` goes before `b` in the answer.
    pub fn order(&self, a: &Hit, b: &Hit) -> std::cmp::Ordering {
        let newest_first = b.timestamp.cmp(&a.timestamp).then(a.file.cmp(&b.file)).then(a.line.cmp(&b.line));
        if self.oldest_first {
            newest_first.reverse()
        } else {
            newest_first
        }
    }
}

/// One matching message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// The message's `timestamp` (a summary's: see the module comment).
    pub timestamp: String,
    /// Index of the file in the scan's file list.
    pub file: u32,
    /// 1-based line number.
    pub line: u32,
    /// Byte offset of the line in the file, and its length (to re-read it for `--raw`).
    pub offset: u64,
    pub len: u32,
    pub kind: Kind,
    pub part: Part,
    pub session_id: String,
    pub uuid: String,
    pub cwd: String,
    /// Up to ~150 characters of the content text around the first match, on one line.
    pub snippet: String,
    /// The match within `snippet`, in bytes.
    pub match_range: Option<(u32, u32)>,
}

/// Counts for `--stats`, per file and merged.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub by_role: HashMap<Kind, u64>,
    pub by_part: HashMap<Part, u64>,
    pub by_session: HashMap<String, u64>,
    pub first: Option<String>,
    pub last: Option<String>,
}

impl Stats {
    fn add(&mut self, hit: &Hit) {
        *self.by_role.entry(hit.kind).or_default() += 1;
        *self.by_part.entry(hit.part).or_default() += 1;
        *self.by_session.entry(hit.session_id.clone()).or_default() += 1;
        self.widen(Some(&hit.timestamp), Some(&hit.timestamp));
    }

    fn widen(&mut self, first: Option<&String>, last: Option<&String>) {
        if let Some(f) = first.filter(|t| !t.is_empty()) {
            if self.first.as_ref().is_none_or(|x| f < x) {
                self.first = Some(f.clone());
            }
        }
        if let Some(l) = last.filter(|t| !t.is_empty()) {
            if self.last.as_ref().is_none_or(|x| l > x) {
                self.last = Some(l.clone());
            }
        }
    }

    pub fn merge(&mut self, other: Stats) {
        for (k, n) in other.by_role {
            *self.by_role.entry(k).or_default() += n;
        }
        for (k, n) in other.by_part {
            *self.by_part.entry(k).or_default() += n;
        }
        for (k, n) in other.by_session {
            *self.by_session.entry(k).or_default() += n;
        }
        self.widen(other.first.as_ref(), other.last.as_ref());
    }
}

/// What one file contributed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOutcome {
    /// This file's best `limit` hits, in answer order.
    pub hits: Vec<Hit>,
    pub total_hits: u64,
    pub lines: u64,
    /// Candidate lines that are not UTF-8 or not JSON of a message's shape.
    pub invalid_lines: u64,
    /// Line numbers of the first few invalid lines, to name the place.
    pub invalid_examples: Vec<u32>,
    pub oversized_lines: u64,
    pub bytes: u64,
    pub stats: Option<Stats>,
}

/// How a file's summaries get their time.
#[derive(Debug, Clone, Default)]
struct SummaryTime {
    /// The file's modification time, formatted as ccms formats it.
    mtime: String,
    /// When the first message line is a summary: the first timestamped line (number, time).
    first_stamped: Option<(u32, String)>,
    first_is_summary: Option<bool>,
}

impl SummaryTime {
    /// Whether the head has been read far enough to know the above.
    fn decided(&self) -> bool {
        self.first_is_summary == Some(false) || self.first_stamped.is_some()
    }
}

/// The search of one file, fed in whole lines (chunk by chunk).
pub struct FileSearch<'j> {
    job: &'j Job,
    matcher: Matcher<'j>,
    file: u32,
    line_no: u32,
    offset: u64,
    text: String,
    lower: String,
    summary_time: SummaryTime,
    out: FileOutcome,
}

impl<'j> FileSearch<'j> {
    /// `mtime`: the file's modification time in Unix seconds (a summary's fallback time).
    pub fn new(job: &'j Job, file: u32, mtime: i64) -> FileSearch<'j> {
        let mtime = jiff::Timestamp::from_second(mtime)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S+00:00").to_string())
            .unwrap_or_default();
        FileSearch {
            job,
            matcher: Matcher::new(&job.query),
            file,
            line_no: 0,
            offset: 0,
            text: String::new(),
            lower: String::new(),
            summary_time: SummaryTime { mtime, ..SummaryTime::default() },
            out: FileOutcome { stats: job.stats.then(Stats::default), ..FileOutcome::default() },
        }
    }

    /// Reads the file's first lines for summary times: whether its first message is a summary,
    /// and if so its first timestamped message. Runs over each chunk until that is decided.
    fn head(&mut self, data: &[u8]) {
        let mut line_no = self.line_no;
        for line in data.split(|&b| b == b'\n') {
            line_no += 1;
            let Ok(s) = std::str::from_utf8(line) else { continue };
            let Ok(r) = record::parse(s, &mut self.text) else { continue };
            match self.summary_time.first_is_summary {
                None if r.kind != Kind::Summary => {
                    self.summary_time.first_is_summary = Some(false);
                    return;
                }
                None => self.summary_time.first_is_summary = Some(true),
                Some(_) => {}
            }
            if let Some(ts) = r.timestamp {
                self.summary_time.first_stamped = Some((line_no, ts.into_owned()));
                return;
            }
        }
    }

    /// Searches `data`, which holds whole lines (a final line may lack its `\n`).
    pub fn bytes(&mut self, data: &[u8], cancelled: &AtomicBool) {
        if !self.summary_time.decided() {
            self.head(data);
        }
        let mut pos = 0;
        // The next trigger at or after `pos` (absolute), found once per stretch of the buffer:
        // `Some(None)` means none in the rest of it.
        let mut trigger: Option<Option<usize>> = None;
        while pos < data.len() {
            if cancelled.load(Ordering::Relaxed) {
                return;
            }
            let start = match &self.job.prefilter {
                None => pos,
                Some(p) => {
                    let t = match trigger {
                        Some(t) if t.is_none_or(|t| t >= pos) => t,
                        _ => {
                            let t = p.find_trigger(&data[pos..]).map(|i| pos + i);
                            trigger = Some(t);
                            t
                        }
                    };
                    // Look for a fragment only before the trigger (if any): past it, the
                    // trigger's line comes first.
                    let end = t.unwrap_or(data.len());
                    let at = p.find_fragment(&data[pos..end]).map(|i| pos + i).or(t);
                    match at {
                        None => {
                            self.skip(&data[pos..]);
                            break;
                        }
                        Some(at) => {
                            let start = memchr::memrchr(b'\n', &data[pos..at]).map_or(pos, |i| pos + i + 1);
                            self.skip(&data[pos..start]);
                            start
                        }
                    }
                }
            };
            let end = memchr::memchr(b'\n', &data[start..]).map_or(data.len(), |i| start + i);
            self.line(&data[start..end]);
            self.offset += (end - start) as u64 + 1;
            pos = end + 1;
        }
        self.out.bytes += data.len() as u64;
    }

    /// Accounts for whole lines the prefilter skipped.
    fn skip(&mut self, data: &[u8]) {
        let n = memchr::memchr_iter(b'\n', data).count();
        self.line_no += n as u32;
        self.out.lines += n as u64;
        self.offset += data.len() as u64;
    }

    /// Counts a line that was too long to hold (the reader skipped its bytes).
    pub fn oversized(&mut self, len: u64) {
        self.line_no += 1;
        self.out.lines += 1;
        self.out.oversized_lines += 1;
        self.offset += len + 1;
    }

    fn line(&mut self, raw: &[u8]) {
        self.line_no += 1;
        self.out.lines += 1;
        // A reader that holds whole lines (a file read whole, or a long line that ends inside
        // the chunk that crosses MAX_LINE) passes it here: skipped and counted all the same.
        if raw.len() > MAX_LINE {
            self.out.oversized_lines += 1;
            return;
        }
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.trim_ascii().is_empty() {
            return;
        }
        let invalid = |out: &mut FileOutcome, line: u32| {
            out.invalid_lines += 1;
            if out.invalid_examples.len() < 3 {
                out.invalid_examples.push(line);
            }
        };
        let Ok(s) = simdutf8::basic::from_utf8(raw) else {
            invalid(&mut self.out, self.line_no);
            return;
        };
        let record = match record::parse(s, &mut self.text) {
            Ok(r) => r,
            Err(Unread::NotAMessage) => return,
            Err(Unread::Invalid) => {
                invalid(&mut self.out, self.line_no);
                return;
            }
        };
        if !self.matcher.is_match(&self.text, &mut self.lower) {
            return;
        }
        let timestamp: String = match &record.timestamp {
            Some(t) => t.as_ref().to_owned(),
            None => match &self.summary_time.first_stamped {
                Some((line, t)) if *line < self.line_no => t.clone(),
                _ => self.summary_time.mtime.clone(),
            },
        };
        if !self.job.filter.accepts(&record, &timestamp) {
            return;
        }
        self.out.total_hits += 1;
        let keep = self.out.stats.is_none() && self.job.limit > 0;
        if keep && self.out.hits.len() == self.job.limit {
            // Full: only a hit that sorts before the worst kept one gets in. Its timestamp
            // decides unless equal (then the earlier line wins, and this line is later).
            let worst = self.out.hits.last().expect("limit > 0");
            let before = if self.job.oldest_first { timestamp < worst.timestamp } else { timestamp > worst.timestamp };
            if !before {
                return;
            }
            self.out.hits.pop();
        }
        let details = keep && self.job.details;
        let (snippet, match_range) =
            if details { snippet(&self.job.query, &self.text[..record.content_len]) } else { (String::new(), None) };
        let id = |v: &Option<std::borrow::Cow<'_, str>>| {
            if details {
                v.as_deref().unwrap_or("").to_owned()
            } else {
                String::new()
            }
        };
        let hit = Hit {
            timestamp,
            file: self.file,
            line: self.line_no,
            offset: self.offset,
            len: raw.len() as u32,
            kind: record.kind,
            part: record.part,
            session_id: if self.out.stats.is_some() {
                record.session_id.as_deref().unwrap_or("").to_owned()
            } else {
                id(&record.session_id)
            },
            uuid: id(&record.uuid),
            cwd: id(&record.cwd),
            snippet,
            match_range,
        };
        if let Some(stats) = &mut self.out.stats {
            stats.add(&hit);
            return;
        }
        if !keep {
            return;
        }
        let at = self.out.hits.partition_point(|h| self.job.order(h, &hit).is_lt());
        self.out.hits.insert(at, hit);
    }

    pub fn finish(self) -> FileOutcome {
        self.out
    }
}

/// An excerpt of the content text around the first positive match (or its start), whitespace
/// runs collapsed to one space, `...` where it was cut.
pub fn snippet(query: &Query, text: &str) -> (String, Option<(u32, u32)>) {
    let found = query.highlight(text);
    let (start, end) = found.unwrap_or((0, 0));
    let mut from = start.saturating_sub(SNIPPET_BEFORE);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = if found.is_some() { (end + SNIPPET_AFTER).min(text.len()) } else { 150.min(text.len()) };
    while !text.is_char_boundary(to) {
        to += 1;
    }
    let mut out = String::with_capacity(to - from + 8);
    if from > 0 {
        out.push_str("...");
    }
    let mut range = None;
    let mut last_space = out.ends_with(' ');
    let mut mark_start = 0;
    for (i, c) in text[from..to].char_indices() {
        let at = from + i;
        if found.is_some() && at == start {
            mark_start = out.len();
        }
        if found.is_some() && at == end {
            range = Some((mark_start as u32, out.len() as u32));
        }
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    if found.is_some() && range.is_none() && end >= start {
        range = Some((mark_start as u32, out.len() as u32));
    }
    if to < text.len() {
        out.push_str("...");
    }
    (out, range.filter(|(a, b)| b > a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_marks_the_match_and_collapses_whitespace() {
        let q = Query::parse("needle").unwrap();
        let text = format!("{}\n\n  NEEDLE in\ta {}", "a ".repeat(40), "b".repeat(200));
        let (s, r) = snippet(&q, &text);
        let (a, b) = r.unwrap();
        assert_eq!(&s[a as usize..b as usize], "NEEDLE");
        assert!(s.starts_with("...") && s.ends_with("..."), "{s}");
        assert!(!s.contains('\n') && !s.contains("  "), "{s}");
        let (s, r) = snippet(&Query::parse("NOT zzz").unwrap(), "short text");
        assert_eq!((s.as_str(), r), ("short text", None));
    }
}
