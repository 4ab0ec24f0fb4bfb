//! One line of a session transcript: what is searched in it, and the per-file search that every
//! engine shares (so the engines differ only in how bytes reach [`FileSearch`]).
//!
//! The searched text of a line is, joined by newlines: the message content when it is a string;
//! of content parts, `text`, `thinking`, and `tool_result` content when it is a string; the
//! `summary`; the `sessionId`; the `uuid`. A line that is not valid UTF-8 or not valid JSON is
//! skipped and counted; a line longer than [`MAX_LINE`] is skipped and counted separately.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::query::{Matcher, Query};

/// Lines longer than this are skipped (and counted), so one giant line cannot make an engine
/// hold it in memory several times over.
pub const MAX_LINE: usize = 64 << 20;

/// Characters of context on each side of the highlighted match in a snippet.
const SNIPPET_CONTEXT: usize = 60;

/// Which JSON parser reads the lines. Both deserialize the same serde structs below, so the
/// searched text, and therefore every answer, is the same; only the speed differs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum JsonParser {
    /// `serde_json` (the default).
    #[default]
    SerdeJson,
    /// `sonic-rs` (SIMD), which reference report 002 credits for rayon's speed.
    SonicRs,
}

impl JsonParser {
    pub const ALL: [JsonParser; 2] = [JsonParser::SerdeJson, JsonParser::SonicRs];

    pub fn name(self) -> &'static str {
        match self {
            JsonParser::SerdeJson => "serde-json",
            JsonParser::SonicRs => "sonic-rs",
        }
    }

    pub fn parse(s: &str) -> Result<JsonParser, String> {
        JsonParser::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown JSON parser `{s}` (known: serde-json, sonic-rs)"))
    }
}

/// A line's fields that the search reads; `R` is the parser's raw (undecoded) JSON value, so a
/// `content` is decoded only after its first byte says whether it is a string or parts.
#[derive(Deserialize)]
struct Line<'a, R> {
    #[serde(borrow, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    summary: Option<Cow<'a, str>>,
    message: Option<Message<R>>,
}

#[derive(Deserialize)]
struct Message<R> {
    content: Option<R>,
}

#[derive(Deserialize)]
struct Part<'a, R> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    content: Option<R>,
}

/// One JSON parser behind [`JsonParser`]: deserializes borrowed serde types and exposes its raw
/// value's text.
trait Backend {
    type Raw<'s>: Deserialize<'s>;
    fn from_str<'s, T: Deserialize<'s>>(s: &'s str) -> Result<T, ()>;
    fn raw<'r>(r: &'r Self::Raw<'_>) -> &'r str;
}

struct SerdeJson;

impl Backend for SerdeJson {
    type Raw<'s> = &'s RawValue;
    fn from_str<'s, T: Deserialize<'s>>(s: &'s str) -> Result<T, ()> {
        serde_json::from_str(s).map_err(drop)
    }
    fn raw<'r>(r: &'r &RawValue) -> &'r str {
        r.get()
    }
}

struct SonicRs;

impl Backend for SonicRs {
    type Raw<'s> = sonic_rs::LazyValue<'s>;
    fn from_str<'s, T: Deserialize<'s>>(s: &'s str) -> Result<T, ()> {
        sonic_rs::from_str(s).map_err(drop)
    }
    fn raw<'r>(r: &'r sonic_rs::LazyValue<'_>) -> &'r str {
        r.as_raw_str()
    }
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// The line's `timestamp` ("" when it has none: such lines sort last).
    pub timestamp: String,
    /// Index of the file in the sorted file list.
    pub file: u32,
    /// 1-based line number.
    pub line: u32,
    /// Up to ~120 characters around the first match, the match marked by `match_range`.
    pub snippet: String,
    pub match_range: Option<(u32, u32)>,
}

/// Newest first; ties by file order, then line order.
pub fn hit_order(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    b.timestamp.cmp(&a.timestamp).then(a.file.cmp(&b.file)).then(a.line.cmp(&b.line))
}

/// What one file contributed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOutcome {
    /// This file's best `limit` hits in [`hit_order`].
    pub hits: Vec<Hit>,
    pub total_hits: u64,
    pub lines: u64,
    pub invalid_lines: u64,
    pub oversized_lines: u64,
    pub bytes: u64,
}

/// The search of one file, fed line by line or as a whole buffer.
pub struct FileSearch<'q> {
    query: &'q Query,
    matcher: Matcher<'q>,
    parser: JsonParser,
    limit: usize,
    file: u32,
    line_no: u32,
    text: String,
    lower: String,
    out: FileOutcome,
}

impl<'q> FileSearch<'q> {
    pub fn new(query: &'q Query, parser: JsonParser, file: u32, limit: usize) -> FileSearch<'q> {
        FileSearch {
            query,
            matcher: Matcher::new(query),
            parser,
            limit,
            file,
            line_no: 0,
            text: String::new(),
            lower: String::new(),
            out: FileOutcome::default(),
        }
    }

    /// Searches a whole file's bytes.
    pub fn bytes(&mut self, data: &[u8]) {
        let mut rest = data;
        while !rest.is_empty() {
            let (line, next) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &rest[rest.len()..]),
            };
            self.line(line);
            rest = next;
        }
    }

    /// Searches one line (without its `\n`; a trailing `\r` is tolerated by the JSON parser).
    pub fn line(&mut self, line: &[u8]) {
        self.line_no += 1;
        self.out.bytes += line.len() as u64 + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.out.lines += 1;
        if line.len() > MAX_LINE {
            self.out.oversized_lines += 1;
            return;
        }
        let Ok(s) = std::str::from_utf8(line) else {
            self.out.invalid_lines += 1;
            return;
        };
        self.text.clear();
        let parsed = match self.parser {
            JsonParser::SerdeJson => extract::<SerdeJson>(s, &mut self.text),
            JsonParser::SonicRs => extract::<SonicRs>(s, &mut self.text),
        };
        let Ok(timestamp) = parsed else {
            self.out.invalid_lines += 1;
            return;
        };
        if !self.matcher.is_match(&self.text, &mut self.lower) {
            return;
        }
        self.out.total_hits += 1;
        let timestamp = timestamp.as_deref().unwrap_or("");
        if self.out.hits.len() == self.limit {
            // Full: only a hit newer than the worst kept one gets in (later lines lose ties).
            match self.out.hits.last() {
                Some(worst) if timestamp > worst.timestamp.as_str() => {
                    self.out.hits.pop();
                }
                _ => return,
            }
        }
        let (snippet, match_range) = snippet(self.query, &self.text);
        let hit = Hit { timestamp: timestamp.to_owned(), file: self.file, line: self.line_no, snippet, match_range };
        let at = self.out.hits.partition_point(|h| hit_order(h, &hit).is_lt());
        self.out.hits.insert(at, hit);
    }

    pub fn finish(self) -> FileOutcome {
        self.out
    }
}

fn push(text: &mut String, s: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(s);
}

/// Parses one line with backend `B` and appends its searched text to `text`; returns the line's
/// timestamp, or `Err` when the line is not JSON of the expected shape.
fn extract<'s, B: Backend>(line: &'s str, text: &mut String) -> Result<Option<Cow<'s, str>>, ()> {
    let parsed: Line<'s, B::Raw<'s>> = B::from_str(line)?;
    if let Some(content) = parsed.message.as_ref().and_then(|m| m.content.as_ref()) {
        let raw = B::raw(content);
        match raw.as_bytes().first() {
            Some(b'"') => push(text, &B::from_str::<Cow<'_, str>>(raw)?),
            Some(b'[') => {
                for part in B::from_str::<Vec<Part<'_, B::Raw<'_>>>>(raw)? {
                    for s in [&part.text, &part.thinking].into_iter().flatten() {
                        push(text, s);
                    }
                    if let Some(c) = part.content.as_ref().map(B::raw).filter(|c| c.starts_with('"')) {
                        push(text, &B::from_str::<Cow<'_, str>>(c)?);
                    }
                }
            }
            _ => {}
        }
    }
    for s in [&parsed.summary, &parsed.session_id, &parsed.uuid].into_iter().flatten() {
        push(text, s);
    }
    Ok(parsed.timestamp)
}

/// A one-line excerpt around the first positive match (or the start of the text).
fn snippet(query: &Query, text: &str) -> (String, Option<(u32, u32)>) {
    let (start, end) = query.highlight(text).unwrap_or((0, 0));
    let mut from = start.saturating_sub(SNIPPET_CONTEXT);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (end + SNIPPET_CONTEXT).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    let flat = |s: &str| s.replace(['\n', '\r', '\t'], " ");
    let (pre, mid, post) = (flat(&text[from..start]), flat(&text[start..end]), flat(&text[end..to]));
    let range = (end > start).then(|| (pre.len() as u32, (pre.len() + mid.len()) as u32));
    (format!("{pre}{mid}{post}"), range)
}
