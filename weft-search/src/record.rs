//! One line of a Claude Code transcript: which lines are messages, and what text of a message
//! is searched. This is where weft-search agrees with ccms, hit for hit.
//!
//! # What is searched (ccms's `get_searchable_text`)
//! The *content text*, then a space and the `sessionId`, then a space and the `uuid` (a
//! summary has no session: `summary`, a space, `leafUuid`). The content text is, by `type`:
//! - `summary`: `summary`; `system`: the top-level `content` string;
//! - `user` / `assistant`: `message.content` when it is a string; when it is parts, each part's
//!   text joined by `\n`: `text`; `thinking`; `image` → `[Image]`; `tool_use` → its `name`, plus
//!   `": "` and one input field when `input` is an object: Bash `command` (first 50 characters,
//!   `...` if longer than 50 bytes), Read/Write/Edit the last `/` segment of `file_path`, Grep
//!   `pattern` (30), any other tool `description` (40); `tool_result` → its content string, or
//!   the `text` of every element joined by `\n` when every element has string `type` and
//!   `text`, else a placeholder `[Tool Result: ID]`, `[Tool Result: ID - JSON value]` for an
//!   object or a mixed array, with ` (error)` before the `]` when `is_error`.
//!
//! Lines of any other `type` (`file-history-snapshot`, …) are not messages: skipped, not
//! counted as invalid. A line that is not UTF-8 or not JSON is invalid (counted).
//!
//! # Deliberate differences from ccms
//! ccms drops, silently, a message line that lacks a field it does not search (`version`,
//! `usage`, a thinking `signature`) or has a content part of a type it does not know
//! (`redacted_thinking`, `server_tool_use`); weft-search searches such a line (unknown parts add
//! no text). On lines Claude Code writes, the two agree.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::shape::{Content, ContentPart, Input, Item, ResultContent, Str};

/// The four message types; a line's `type`, which is also its role for `-r` (as in ccms: a
/// summary is role `summary`, `message.role` is not consulted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    User,
    Assistant,
    System,
    Summary,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::User, Kind::Assistant, Kind::System, Kind::Summary];

    pub fn name(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Assistant => "assistant",
            Kind::System => "system",
            Kind::Summary => "summary",
        }
    }

    fn from_type(t: &str) -> Option<Kind> {
        Some(match t {
            "user" => Kind::User,
            "assistant" => Kind::Assistant,
            "system" => Kind::System,
            "summary" => Kind::Summary,
            _ => return None,
        })
    }
}

/// What a message is mostly made of, for `--stats`: its first content part's type (`text` for
/// string content, `summary` and `system` for those lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Text,
    Thinking,
    ToolUse,
    ToolResult,
    Image,
    Summary,
    System,
    Other,
}

impl Part {
    pub fn name(self) -> &'static str {
        match self {
            Part::Text => "text",
            Part::Thinking => "thinking",
            Part::ToolUse => "tool_use",
            Part::ToolResult => "tool_result",
            Part::Image => "image",
            Part::Summary => "summary",
            Part::System => "system",
            Part::Other => "other",
        }
    }
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow)]
    summary: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "leafUuid")]
    leaf_uuid: Option<Cow<'a, str>>,
    /// A system line's text.
    #[serde(borrow)]
    content: Option<Str<'a>>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    content: Option<Content<'a>>,
}

/// A parsed message line: its fields; its text is in the buffer given to [`parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub kind: Kind,
    pub part: Part,
    /// `None` for a summary.
    pub session_id: Option<Cow<'a, str>>,
    /// A summary's `leafUuid`.
    pub uuid: Option<Cow<'a, str>>,
    /// `None` for a summary (its time comes from its file; see `search`).
    pub timestamp: Option<Cow<'a, str>>,
    pub cwd: Option<Cow<'a, str>>,
    /// Bytes of the buffer that are the content text (the rest is the ids).
    pub content_len: usize,
}

/// Why a line was not searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Not UTF-8 or not JSON (or JSON of the wrong shape for a message).
    Invalid,
    /// Valid JSON, but not one of the four message types.
    NotAMessage,
}

fn sep(text: &mut String, first: &mut bool) {
    if !*first {
        text.push('\n');
    }
    *first = false;
}

/// Pushes at most `n` characters of `s`, then `...` when `s` is longer than `n` bytes (ccms
/// compares the byte length, so a short non-ASCII string can get `...` too).
fn push_truncated(text: &mut String, s: &str, n: usize) {
    match s.char_indices().nth(n) {
        Some((i, _)) => text.push_str(&s[..i]),
        None => text.push_str(s),
    }
    if s.len() > n {
        text.push_str("...");
    }
}

fn placeholder(text: &mut String, id: &str, json_value: bool, error: bool) {
    text.push_str("[Tool Result: ");
    text.push_str(id);
    if json_value {
        text.push_str(" - JSON value");
    }
    if error {
        text.push_str(" (error)");
    }
    text.push(']');
}

fn tool_use(text: &mut String, name: &str, input: Option<&Input<'_>>) {
    text.push_str(name);
    let Some(Input::Object { command, file_path, pattern, description }) = input else { return };
    let field = match name {
        "Bash" => command,
        "Read" | "Write" | "Edit" => file_path,
        "Grep" => pattern,
        _ => description,
    };
    let Some(Str::S(value)) = field else { return };
    text.push_str(": ");
    match name {
        "Bash" => push_truncated(text, value, 50),
        "Read" | "Write" | "Edit" => text.push_str(value.rsplit('/').next().unwrap_or(value)),
        "Grep" => push_truncated(text, value, 30),
        _ => push_truncated(text, value, 40),
    }
}

/// Appends `s`; a large decoded string that would be the whole text so far is moved in, not
/// copied (copies are a large share of a search under `perf`, the biggest strings being tool
/// outputs; docs/notes/performance-figures.md, "Session search").
fn put(text: &mut String, s: &mut Cow<'_, str>) {
    match s {
        Cow::Owned(o) if text.is_empty() && o.len() >= 4096 => *text = std::mem::take(o),
        s => text.push_str(s),
    }
}

fn tool_result(text: &mut String, part: &mut ContentPart<'_>) {
    let id = part.tool_use_id.as_ref().and_then(Str::as_str).unwrap_or("");
    let error = part.is_error.unwrap_or(false);
    match &mut part.content {
        None => placeholder(text, id, false, error),
        Some(ResultContent::S(s)) if s.is_empty() => placeholder(text, id, false, error),
        Some(ResultContent::S(s)) => put(text, s),
        Some(ResultContent::Value) => placeholder(text, id, true, error),
        Some(ResultContent::Items(items)) if items.is_empty() => placeholder(text, id, false, error),
        // ccms's untagged enum: all elements {type: string, text: string} → their texts; else
        // all elements {type, source{type}} → an image array (plain placeholder); else a JSON
        // value.
        Some(ResultContent::Items(items)) => {
            if items.iter().all(Item::is_text) {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        text.push('\n');
                    }
                    text.push_str(item.text.as_ref().and_then(Str::as_str).unwrap_or(""));
                }
            } else {
                placeholder(text, id, !items.iter().all(Item::is_image), error);
            }
        }
    }
}

fn parts(text: &mut String, parts: &mut [ContentPart<'_>]) -> Part {
    let mut first = true;
    let mut kind = Part::Other;
    for (i, part) in parts.iter_mut().enumerate() {
        let this = match part.kind.as_ref().and_then(Str::as_str) {
            Some("text") => {
                sep(text, &mut first);
                text.push_str(part.text.as_ref().and_then(Str::as_str).unwrap_or(""));
                Part::Text
            }
            Some("thinking") => {
                sep(text, &mut first);
                text.push_str(part.thinking.as_ref().and_then(Str::as_str).unwrap_or(""));
                Part::Thinking
            }
            Some("image") => {
                sep(text, &mut first);
                text.push_str("[Image]");
                Part::Image
            }
            Some("tool_use") => {
                sep(text, &mut first);
                tool_use(text, part.name.as_ref().and_then(Str::as_str).unwrap_or(""), part.input.as_ref());
                Part::ToolUse
            }
            Some("tool_result") => {
                sep(text, &mut first);
                tool_result(text, part);
                Part::ToolResult
            }
            _ => Part::Other,
        };
        if i == 0 {
            kind = this;
        }
    }
    kind
}

/// Parses one line (UTF-8 checked by the caller) and writes its searched text into `text`
/// (cleared first): the content text, then the ids.
pub fn parse<'a>(line: &'a str, text: &mut String) -> Result<Record<'a>, Unread> {
    text.clear();
    let mut parsed: Line<'a> = serde_json::from_str(line).map_err(|_| Unread::Invalid)?;
    let kind = parsed.kind.as_deref().and_then(Kind::from_type).ok_or(Unread::NotAMessage)?;
    let part = match kind {
        Kind::Summary => {
            text.push_str(parsed.summary.as_deref().unwrap_or(""));
            Part::Summary
        }
        Kind::System => {
            text.push_str(parsed.content.as_ref().and_then(Str::as_str).unwrap_or(""));
            Part::System
        }
        Kind::User | Kind::Assistant => match parsed.message.as_mut().and_then(|m| m.content.as_mut()) {
            Some(Content::S(s)) => {
                put(text, s);
                Part::Text
            }
            Some(Content::Parts(p)) => parts(text, p),
            _ => Part::Other,
        },
    };
    let content_len = text.len();
    let (session_id, uuid, timestamp, cwd) = match kind {
        Kind::Summary => (None, parsed.leaf_uuid, None, None),
        _ => (parsed.session_id, parsed.uuid, parsed.timestamp, parsed.cwd),
    };
    for id in [&session_id, &uuid].into_iter().flatten() {
        text.push(' ');
        text.push_str(id);
    }
    Ok(Record { kind, part, session_id, uuid, timestamp, cwd, content_len })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(line: &str) -> String {
        let mut t = String::new();
        parse(line, &mut t).unwrap();
        t
    }

    const BASE: &str = r#""sessionId":"S","uuid":"U","timestamp":"2025-06-01T00:00:00Z","cwd":"/w""#;

    #[test]
    fn string_and_part_contents() {
        assert_eq!(
            text_of(&format!(r#"{{"type":"user",{BASE},"message":{{"role":"user","content":"hi"}}}}"#)),
            "hi S U"
        );
        let line = format!(
            r#"{{"type":"assistant",{BASE},"message":{{"content":[{{"type":"thinking","thinking":"hm","signature":"x"}},{{"type":"text","text":"a\nb"}},{{"type":"image","source":{{"type":"base64"}}}}]}}}}"#
        );
        assert_eq!(text_of(&line), "hm\na\nb\n[Image] S U");
    }

    #[test]
    fn tool_use_shows_one_field_truncated_like_ccms() {
        let tu = |name: &str, input: &str| {
            text_of(&format!(
                r#"{{"type":"assistant",{BASE},"message":{{"content":[{{"type":"tool_use","id":"t","name":"{name}","input":{input}}}]}}}}"#
            ))
        };
        let long = "x".repeat(60);
        assert_eq!(
            tu("Bash", &format!(r#"{{"command":"{long}","description":"d"}}"#)),
            format!("Bash: {}... S U", &long[..50])
        );
        assert_eq!(tu("Bash", r#"{"command":"ls"}"#), "Bash: ls S U");
        assert_eq!(tu("Read", r#"{"file_path":"/a/b/c.rs"}"#), "Read: c.rs S U");
        assert_eq!(tu("Grep", r#"{"pattern":"é"}"#), "Grep: é S U");
        assert_eq!(tu("Task", r#"{"prompt":"secret","description":"find it"}"#), "Task: find it S U");
        assert_eq!(tu("Task", r#"{"prompt":"secret"}"#), "Task S U");
        assert_eq!(tu("Bash", r#""not an object""#), "Bash S U");
        assert_eq!(tu("Bash", r#"{"command":7}"#), "Bash S U");
        // 20 two-byte characters are 40 bytes, under Grep's 30 characters but over 30 bytes.
        assert_eq!(
            tu("Grep", &format!(r#"{{"pattern":"{}"}}"#, "é".repeat(20))),
            format!("Grep: {}... S U", "é".repeat(20))
        );
    }

    #[test]
    fn tool_results_in_every_shape() {
        let tr = |content: &str| {
            text_of(&format!(
                r#"{{"type":"user",{BASE},"message":{{"content":[{{"type":"tool_result","tool_use_id":"T","is_error":true{content}}}]}}}}"#
            ))
        };
        assert_eq!(tr(r#","content":"out""#), "out S U");
        assert_eq!(tr(r#","content":"""#), "[Tool Result: T (error)] S U");
        assert_eq!(tr(""), "[Tool Result: T (error)] S U");
        assert_eq!(tr(r#","content":null"#), "[Tool Result: T (error)] S U");
        assert_eq!(tr(r#","content":[]"#), "[Tool Result: T (error)] S U");
        assert_eq!(tr(r#","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#), "a\nb S U");
        assert_eq!(tr(r#","content":{"k":1}"#), "[Tool Result: T - JSON value (error)] S U");
        assert_eq!(
            tr(r#","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64"}}]"#),
            "[Tool Result: T - JSON value (error)] S U"
        );
        assert_eq!(tr(r#","content":[{"type":"image","source":{"type":"base64"}}]"#), "[Tool Result: T (error)] S U");
    }

    #[test]
    fn summary_system_and_other_types() {
        assert_eq!(text_of(r#"{"type":"summary","summary":"Fix it","leafUuid":"L"}"#), "Fix it L");
        assert_eq!(
            text_of(&format!(r#"{{"type":"system",{BASE},"content":"hook ran","isMeta":false}}"#)),
            "hook ran S U"
        );
        let mut t = String::new();
        assert_eq!(parse(r#"{"type":"file-history-snapshot","uuid":"x"}"#, &mut t), Err(Unread::NotAMessage));
        assert_eq!(parse(r#"{"type":"user""#, &mut t), Err(Unread::Invalid));
        assert_eq!(parse(r#"{"type":"user","uuid":"\ud83d"}"#, &mut t), Err(Unread::Invalid));
        let r = parse(r#"{"type":"summary","summary":"s","leafUuid":"L"}"#, &mut t).unwrap();
        assert_eq!((r.kind, r.session_id, r.uuid.as_deref(), r.timestamp), (Kind::Summary, None, Some("L"), None));
    }
}
