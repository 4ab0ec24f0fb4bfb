//! The raw-byte prefilter: find the lines that *could* match before paying for a JSON parse.
//!
//! From a query we derive a *cover*: a set of short ASCII byte strings (*fragments*) such that
//! any line whose searched text matches the query contains, in its raw bytes, one of them (ASCII
//! case-insensitively) or one of the *triggers* below. The search then jumps from occurrence to
//! occurrence (one Aho-Corasick pass over the file, SIMD for a few patterns) and parses only
//! the lines they fall in; every other line is skipped without a parse, an allocation, or even
//! a look at its bytes beyond the newline count.
//!
//! # Why a fragment found in the searched text is in the raw line
//! The searched text is made of decoded JSON strings of the line, joined and decorated by
//! [`crate::record`] with *joints*: `\n`, ` `, `: `, `...`, `[`, `]`, `(`, `)`, and the
//! placeholder words of `[Image]` and `[Tool Result: ID - JSON value (error)]`. A fragment is
//! cut from a query literal at every joint character, at `"` and `\` (which JSON escapes), at
//! control characters and at non-ASCII bytes. So an occurrence of a fragment in the searched text
//! lies inside one decoded string or inside one placeholder word, never across a joint. Inside a
//! decoded string, each ASCII character is in the raw line as itself unless it was written as an
//! escape: `\/` for `/` and `\u00XX` for any printable ASCII character. Lower-casing maps only two
//! non-ASCII characters to ASCII letters: KELVIN SIGN to `k`, and LATIN CAPITAL I WITH DOT ABOVE to
//! `i` plus a combining mark. Hence the triggers, which make a line a candidate on their own:
//! `\u0020`…`\u007f`, `\u212a` and `\u0130` (the escapes that can hide a fragment's character),
//! `\/` when a fragment has a `/`, the UTF-8 of those two letters when a fragment has `k` or `i`,
//! and `tool_result` when a fragment could lie inside `JSON value` or `error` (placeholders come
//! only from `tool_result` parts; `[Image]` and `Tool Result` are in the raw type names).
//!
//! A regex contributes the prefixes its matches must start with (regex-syntax's extractor),
//! each reduced to its longest fragment; `NOT`, a regex without finite prefixes and a literal
//! without a fragment of [`MIN_FRAGMENT`] bytes make the line set unbounded: no prefilter.
//!
//! # Rejected alternatives
//! - Matching the query on the raw line: JSON escapes and the joints change the text, so hits
//!   would be lost (the 1% that report 002, ccms's *Final Optimization Summary*,
//!   docs/notes/reference-reports.md, found missing on its independent corpus).
//! - A per-line `memmem` before the parse: still touches every line and pays a call per line;
//!   the whole-buffer scan skips runs of lines at memory speed.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor};

use crate::query::{Expr, Query};

/// Shorter fragments would make nearly every line a candidate: not worth a pass.
pub const MIN_FRAGMENT: usize = 2;

/// A set of fragments, any of which a matching line must contain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Cover {
    /// Lower-case ASCII.
    fragments: Vec<Vec<u8>>,
}

impl Cover {
    fn score(&self) -> (usize, std::cmp::Reverse<usize>) {
        let shortest = self.fragments.iter().map(Vec::len).min().unwrap_or(0);
        (shortest, std::cmp::Reverse(self.fragments.len()))
    }
}

fn is_fragment_byte(b: u8) -> bool {
    b.is_ascii_graphic() && !matches!(b, b':' | b'.' | b'[' | b']' | b'(' | b')' | b'"' | b'\\')
}

/// The longest fragment of `literal`, lower-cased, if it is long enough.
fn best_fragment(literal: &[u8]) -> Option<Vec<u8>> {
    literal
        .split(|&b| !is_fragment_byte(b))
        .max_by_key(|f| f.len())
        .filter(|f| f.len() >= MIN_FRAGMENT)
        .map(|f| f.to_ascii_lowercase())
}

fn literal_cover(lower: &str) -> Option<Cover> {
    best_fragment(lower.as_bytes()).map(|f| Cover { fragments: vec![f] })
}

fn regex_cover(pattern: &str, flags: &str) -> Option<Cover> {
    let mut parser = regex_syntax::ParserBuilder::new();
    for f in flags.chars() {
        match f {
            'i' => parser.case_insensitive(true),
            'm' => parser.multi_line(true),
            's' => parser.dot_matches_new_line(true),
            'x' => parser.ignore_whitespace(true),
            _ => &mut parser,
        };
    }
    let hir = parser.build().parse(pattern).ok()?;
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let literals = seq.literals()?;
    if literals.is_empty() {
        // A regex that can match nothing: no line can match, but keep it simple and scan.
        return None;
    }
    let mut fragments = Vec::new();
    for lit in literals {
        let f = best_fragment(lit.as_bytes())?;
        if !fragments.contains(&f) {
            fragments.push(f);
        }
    }
    Some(Cover { fragments })
}

fn cover(e: &Expr) -> Option<Cover> {
    match e {
        Expr::All | Expr::Not(_) => None,
        Expr::Substring(_, lower) => literal_cover(lower),
        Expr::Regex(_, pattern, flags) => regex_cover(pattern, flags),
        Expr::And(a, b) => match (cover(a), cover(b)) {
            (Some(x), Some(y)) => Some(if y.score() > x.score() { y } else { x }),
            (x, y) => x.or(y),
        },
        Expr::Or(a, b) => {
            let (mut x, y) = (cover(a)?, cover(b)?);
            for f in y.fragments {
                if !x.fragments.contains(&f) {
                    x.fragments.push(f);
                }
            }
            Some(x)
        }
    }
}

/// Finds candidate lines in raw bytes: a fragment (one Aho-Corasick pass) or a trigger
/// (`memmem` passes; kept apart because their first byte, `\\`, is in every escaped string and
/// would make the automaton verify at nearly every escape).
#[derive(Debug, Clone)]
pub struct Prefilter {
    finder: Fragments,
    /// Triggers beside the `\\u` escapes: `\\/`, and the UTF-8 of KELVIN SIGN and I WITH DOT.
    extra: Vec<memchr::memmem::Finder<'static>>,
    fragments: Vec<Vec<u8>>,
}

/// Finds any of a few lower-case ASCII byte strings, ASCII case-insensitively.
///
/// Teddy (aho-corasick's packed SIMD searcher) looks for every case variant of each string's
/// first (up to) three bytes, and a candidate is verified with `eq_ignore_ascii_case`. The
/// case-insensitive automaton (rare-byte prefilter, then verification) is a visible share of
/// a common-word search under `perf` on the bench corpus: letters are not rare bytes
/// (docs/notes/performance-figures.md, "Session search").
#[derive(Debug, Clone)]
enum Fragments {
    Teddy { searcher: aho_corasick::packed::Searcher, patterns: Vec<Vec<u8>> },
    Automaton(AhoCorasick),
}

impl Fragments {
    fn new(patterns: Vec<Vec<u8>>) -> Option<Fragments> {
        let mut prefixes: Vec<Vec<u8>> = Vec::new();
        for p in &patterns {
            let n = p.len().min(3);
            for mask in 0..(1u32 << n) {
                let v: Vec<u8> = p[..n]
                    .iter()
                    .enumerate()
                    .map(|(k, &b)| if mask >> k & 1 == 1 { b.to_ascii_uppercase() } else { b })
                    .collect();
                if !prefixes.contains(&v) {
                    prefixes.push(v);
                }
            }
        }
        let teddy = (prefixes.len() <= 64)
            .then(|| {
                let mut b = aho_corasick::packed::Config::new()
                    .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
                    .builder();
                for p in &prefixes {
                    b.add(p);
                }
                b.build()
            })
            .flatten();
        match teddy {
            Some(searcher) => Some(Fragments::Teddy { searcher, patterns }),
            None => AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostFirst)
                .build(&patterns)
                .ok()
                .map(Fragments::Automaton),
        }
    }

    #[inline]
    fn find(&self, hay: &[u8]) -> Option<usize> {
        match self {
            Fragments::Automaton(ac) => ac.find(hay).map(|m| m.start()),
            Fragments::Teddy { searcher, patterns } => {
                let mut from = 0;
                while let Some(m) = searcher.find_in(hay, aho_corasick::Span::from(from..hay.len())) {
                    let at = m.start();
                    // Any fragment whose prefix starts here may match in full.
                    if patterns.iter().any(|p| hay.get(at..at + p.len()).is_some_and(|w| w.eq_ignore_ascii_case(p))) {
                        return Some(at);
                    }
                    from = at + 1;
                }
                None
            }
        }
    }
}

/// Whether the escape at the start of `s` (`\\uXXXX`) could hide a fragment character: a
/// printable ASCII character, KELVIN SIGN (U+212A) or I WITH DOT ABOVE (U+0130).
fn hides_fragment_char(s: &[u8]) -> bool {
    let Some(hex) = s.get(2..6) else { return true };
    let Ok(text) = std::str::from_utf8(hex) else { return true };
    match u32::from_str_radix(text, 16) {
        Ok(c) => (0x20..0x80).contains(&c) || c == 0x212a || c == 0x130,
        Err(_) => true,
    }
}

impl Prefilter {
    /// The prefilter for `query`, or `None` when the query could match a line with none of its
    /// text in it (a `NOT`, a match-everything query, a regex with no fixed prefix).
    pub fn new(query: &Query) -> Option<Prefilter> {
        let cover = cover(&query.expr)?;
        let mut patterns: Vec<Vec<u8>> = cover.fragments.clone();
        let any = |p: &dyn Fn(&[u8]) -> bool| cover.fragments.iter().any(|f| p(f));
        let mut extra = Vec::new();
        if any(&|f| f.contains(&b'/')) {
            extra.push(memchr::memmem::Finder::new(b"\\/").into_owned());
        }
        if any(&|f| f.contains(&b'k')) {
            extra.push(memchr::memmem::Finder::new("\u{212a}".as_bytes()).into_owned());
        }
        if any(&|f| f.contains(&b'i')) {
            extra.push(memchr::memmem::Finder::new("\u{130}".as_bytes()).into_owned());
        }
        let placeholder_words: [&[u8]; 3] = [b"json", b"value", b"error"];
        if any(&|f| placeholder_words.iter().any(|w| w.windows(f.len()).any(|x| x == f))) {
            patterns.push(b"tool_result".to_vec());
        }
        let finder = Fragments::new(patterns)?;
        Some(Prefilter { finder, extra, fragments: cover.fragments })
    }

    /// The offset of the first fragment in `hay` (ASCII case-insensitively).
    #[inline]
    pub fn find_fragment(&self, hay: &[u8]) -> Option<usize> {
        self.finder.find(hay)
    }

    /// The offset of the first trigger in `hay`: an escape or letter that could hide a fragment.
    pub fn find_trigger(&self, hay: &[u8]) -> Option<usize> {
        let escape = memchr::memmem::find_iter(hay, b"\\u").find(|&i| hides_fragment_char(&hay[i..]));
        self.extra.iter().filter_map(|f| f.find(hay)).chain(escape).min()
    }

    /// The offset of the first candidate byte in `hay`: the line holding it must be searched.
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        [self.find_fragment(hay), self.find_trigger(hay)].into_iter().flatten().min()
    }

    pub fn fragments(&self) -> impl Iterator<Item = &str> {
        self.fragments.iter().map(|f| std::str::from_utf8(f).unwrap_or("?"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frags(q: &str) -> Option<Vec<String>> {
        Prefilter::new(&Query::parse(q).unwrap()).map(|p| p.fragments().map(String::from).collect())
    }

    #[test]
    fn covers_follow_the_query_structure() {
        assert_eq!(frags("Tokio"), Some(vec!["tokio".into()]));
        assert_eq!(frags("\"thread pool\""), Some(vec!["thread".into()]));
        assert_eq!(frags("main.rs"), Some(vec!["main".into()]));
        assert_eq!(frags("tokio AND spawner"), Some(vec!["spawner".into()]));
        assert_eq!(frags("tokio OR smol"), Some(vec!["tokio".into(), "smol".into()]));
        assert_eq!(frags("tokio OR NOT smol"), None);
        assert_eq!(frags("NOT smol"), None);
        assert_eq!(frags("a.b"), None);
        assert_eq!(frags("/dead+lock/i"), Some(vec!["dead".into()]));
        assert_eq!(frags("/(foo|barx)baz/"), Some(vec!["foobaz".into(), "barxbaz".into()]));
        assert_eq!(frags("/.*x/"), None);
    }

    #[test]
    fn only_two_non_ascii_characters_lower_case_into_ascii() {
        let found: Vec<char> = (0..=0x10ffff_u32)
            .filter_map(char::from_u32)
            .filter(|c| !c.is_ascii() && c.to_lowercase().any(|l| l.is_ascii()))
            .collect();
        assert_eq!(found, ['\u{130}', '\u{212a}']);
    }

    #[test]
    fn escapes_and_special_letters_make_candidates() {
        let p = Prefilter::new(&Query::parse("kit/x").unwrap()).unwrap();
        assert!(p.find(br#"{"t":"KIT/X"}"#).is_some());
        assert!(p.find(br#"{"t":"\u004bit\/x"}"#).is_some());
        assert!(p.find("{\"t\":\"\u{212a}it/x\"}".as_bytes()).is_some());
        assert!(p.find(br#"{"t":"kit\/x"}"#).is_some());
        assert!(p.find(br#"{"t":"kat"}"#).is_none());
        let e = Prefilter::new(&Query::parse("error").unwrap()).unwrap();
        assert!(e.find(br#"{"type":"tool_result","content":{}}"#).is_some());
    }
}
