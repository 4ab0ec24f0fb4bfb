//! The query language of the session search (the language of ccms, the tool of report 002, *Final
//! Optimization Summary*, docs/notes/reference-reports.md): case-insensitive words and `"quoted
//! phrases"` (substring matches), `/regex/flags`, `AND` / `OR` / `NOT` (upper case), parentheses,
//! and juxtaposition as `AND`.
//!
//! Precedence, loosest first: `OR`, `AND` (explicit or implicit), `NOT`. Parsing is a small
//! recursive descent over a token list, so every malformed query becomes a [`QueryError`] that
//! says what was expected where, never a panic. Matching runs against one line's searched text.
//!
//! Words and phrases match as ccms matches them: `text.to_lowercase()` contains
//! `word.to_lowercase()`. For an ASCII word that is a search of the text with only its ASCII
//! letters lower-cased (a fast copy), except where the text holds one of the two non-ASCII
//! letters that lower-case to ASCII (KELVIN SIGN, CAPITAL I WITH DOT ABOVE); such a line, and any
//! line tested against a non-ASCII word, gets a fully lower-cased copy. [`Matcher`] makes each
//! copy at most once per line.
//! Regexes see the text as it is.

use std::fmt;

use memchr::memmem;
use regex::{Regex, RegexBuilder};

/// A parsed query.
#[derive(Debug)]
pub struct Query {
    pub(crate) expr: Expr,
    /// Case-insensitive regexes of the positive terms, for highlighting.
    highlighters: Vec<Regex>,
}

#[derive(Debug)]
pub(crate) enum Expr {
    /// Every line (the empty query of `--stats`, the TUI's empty search box).
    All,
    /// A word or phrase, lower-cased; `ascii` is its case-insensitive finder when it is ASCII,
    /// `finder` searches a lower-cased copy of the text.
    Substring(Box<Substring>, String),
    /// A regex, with the pattern and flags it was built from (for the prefilter).
    Regex(Regex, String, String),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
}

#[derive(Debug)]
pub(crate) struct Substring {
    ascii: bool,
    finder: memmem::Finder<'static>,
}

impl Substring {
    fn new(lower: &str) -> Result<Substring, QueryError> {
        Ok(Substring { ascii: lower.is_ascii(), finder: memmem::Finder::new(lower.as_bytes()).into_owned() })
    }
}

/// Why a query could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError(pub String);

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid query: {}", self.0)
    }
}

impl std::error::Error for QueryError {}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Open,
    Close,
    And,
    Or,
    Not,
    /// A word or a quoted phrase (already unquoted).
    Text(String),
    /// `/pattern/flags`.
    Regex(String, String),
}

fn describe(t: Option<&Token>) -> String {
    match t {
        None => "the end of the query".into(),
        Some(Token::Open) => "`(`".into(),
        Some(Token::Close) => "`)`".into(),
        Some(Token::And) => "`AND`".into(),
        Some(Token::Or) => "`OR`".into(),
        Some(Token::Not) => "`NOT`".into(),
        Some(Token::Text(s)) => format!("`{s}`"),
        Some(Token::Regex(p, f)) => format!("`/{p}/{f}`"),
    }
}

/// Whether `s` (starting with `/`) holds a closing unescaped `/`: `/re/` is a regex, while a
/// lone `/tmp` is the word `/tmp` (as in ccms).
fn regex_ahead(s: &str) -> bool {
    let mut escaped = false;
    for c in s[1..].chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '/' => return true,
            _ => {}
        }
    }
    false
}

fn tokenize(src: &str) -> Result<Vec<Token>, QueryError> {
    let mut out = Vec::new();
    let mut chars = src.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' => {
                chars.next();
                out.push(Token::Open);
            }
            ')' => {
                chars.next();
                out.push(Token::Close);
            }
            '"' | '\'' => {
                chars.next();
                let mut phrase = String::new();
                let mut closed = false;
                while let Some((_, ch)) = chars.next() {
                    match ch {
                        '\\' => match chars.next().map(|(_, n)| n) {
                            Some('n') => phrase.push('\n'),
                            Some('r') => phrase.push('\r'),
                            Some('t') => phrase.push('\t'),
                            Some('\\') => phrase.push('\\'),
                            Some(q) if q == c => phrase.push(q),
                            // Any other pair stays as written (ccms does the same).
                            Some(other) => {
                                phrase.push('\\');
                                phrase.push(other);
                            }
                            None => break,
                        },
                        ch if ch == c => {
                            closed = true;
                            break;
                        }
                        ch => phrase.push(ch),
                    }
                }
                if !closed {
                    return Err(QueryError(format!("unclosed {c} quote starting at column {}", i + 1)));
                }
                out.push(Token::Text(phrase));
            }
            '/' if regex_ahead(&src[i..]) => {
                chars.next();
                let mut pattern = String::new();
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\\' if chars.peek().map(|&(_, n)| n) == Some('/') => {
                            chars.next();
                            pattern.push('/');
                        }
                        '\\' => {
                            pattern.push('\\');
                            if let Some((_, n)) = chars.next() {
                                pattern.push(n);
                            }
                        }
                        '/' => break,
                        c => pattern.push(c),
                    }
                }
                let mut flags = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c.is_alphanumeric() {
                        flags.push(c);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push(Token::Regex(pattern, flags));
            }
            _ => {
                let mut word = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c.is_whitespace() || c == '(' || c == ')' {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                out.push(match word.as_str() {
                    "AND" => Token::And,
                    "OR" => Token::Or,
                    "NOT" => Token::Not,
                    _ => Token::Text(word),
                });
            }
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    highlighters: Vec<Regex>,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn or(&mut self, negated: bool) -> Result<Expr, QueryError> {
        let mut left = self.and(negated)?;
        while self.peek() == Some(&Token::Or) {
            self.pos += 1;
            let right = self.and(negated)?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self, negated: bool) -> Result<Expr, QueryError> {
        let mut left = self.unary(negated)?;
        loop {
            match self.peek() {
                Some(Token::And) => {
                    self.pos += 1;
                }
                Some(Token::Open | Token::Not | Token::Text(_) | Token::Regex(..)) => {}
                _ => return Ok(left),
            }
            let right = self.unary(negated)?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self, negated: bool) -> Result<Expr, QueryError> {
        if self.peek() == Some(&Token::Not) {
            self.pos += 1;
            return Ok(Expr::Not(Box::new(self.unary(!negated)?)));
        }
        self.primary(negated)
    }

    fn primary(&mut self, negated: bool) -> Result<Expr, QueryError> {
        let at = self.pos;
        match self.tokens.get(at).cloned() {
            Some(Token::Open) => {
                self.pos += 1;
                let inner = self.or(negated)?;
                if self.peek() != Some(&Token::Close) {
                    return Err(QueryError(format!(
                        "expected `)` to close the `(` of token {}, found {}",
                        at + 1,
                        describe(self.peek())
                    )));
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(Token::Text(s)) => {
                self.pos += 1;
                if !negated {
                    self.highlighters.push(
                        RegexBuilder::new(&regex::escape(&s))
                            .case_insensitive(true)
                            .build()
                            .map_err(|e| QueryError(e.to_string()))?,
                    );
                }
                let lower = s.to_lowercase();
                Ok(Expr::Substring(Box::new(Substring::new(&lower)?), lower))
            }
            Some(Token::Regex(pattern, flags)) => {
                self.pos += 1;
                let mut b = RegexBuilder::new(&pattern);
                for f in flags.chars() {
                    match f {
                        'i' => b.case_insensitive(true),
                        'm' => b.multi_line(true),
                        's' => b.dot_matches_new_line(true),
                        'x' => b.ignore_whitespace(true),
                        // Unicode is always on; accepted because ccms accepts it.
                        'u' => &mut b,
                        other => {
                            return Err(QueryError(format!(
                                "unknown regex flag `{other}` in /{pattern}/{flags} (known: i, m, s, u, x)"
                            )))
                        }
                    };
                }
                let re = b.build().map_err(|e| QueryError(format!("bad regex /{pattern}/: {e}")))?;
                if !negated {
                    self.highlighters.push(re.clone());
                }
                Ok(Expr::Regex(re, pattern, flags))
            }
            other => Err(QueryError(format!(
                "expected a word, \"phrase\", /regex/ or `(` at token {}, found {}",
                at + 1,
                describe(other.as_ref())
            ))),
        }
    }
}

impl Query {
    /// Parses `src`; every malformed query is an error that names the problem.
    pub fn parse(src: &str) -> Result<Query, QueryError> {
        let tokens = tokenize(src)?;
        if tokens.is_empty() {
            return Err(QueryError("the query is empty".into()));
        }
        let mut p = Parser { tokens, pos: 0, highlighters: Vec::new() };
        let expr = p.or(false)?;
        if p.pos != p.tokens.len() {
            return Err(QueryError(format!("unexpected {} at token {}", describe(p.peek()), p.pos + 1)));
        }
        Ok(Query { expr, highlighters: p.highlighters })
    }

    /// The query every line matches.
    pub fn all() -> Query {
        Query { expr: Expr::All, highlighters: Vec::new() }
    }

    /// Whether `text` matches (lower-cases a copy when the query has words or phrases).
    pub fn is_match(&self, text: &str) -> bool {
        let mut scratch = String::new();
        Matcher::new(self).is_match(text, &mut scratch)
    }

    /// The first span of `text` matched by a positive (not negated) term, for highlighting.
    pub fn highlight(&self, text: &str) -> Option<(usize, usize)> {
        self.highlighters.iter().filter_map(|re| re.find(text)).map(|m| (m.start(), m.end())).min()
    }
}

/// Evaluates a query against lines, reusing one lower-case buffer.
pub struct Matcher<'q> {
    query: &'q Query,
    ascii_lower: Vec<u8>,
}

/// The text being matched and its lower-cased copies, made on first need.
struct Text<'t> {
    text: &'t str,
    lower: &'t mut String,
    made: bool,
    /// The text with ASCII letters lower-cased (other bytes as they are).
    ascii_lower: &'t mut Vec<u8>,
    ascii_made: bool,
    /// Whether the text holds a letter that lower-cases into ASCII from outside it.
    special: Option<bool>,
}

impl Text<'_> {
    fn lower(&mut self) -> &str {
        if !self.made {
            self.lower.clear();
            if self.text.is_ascii() {
                self.lower.push_str(self.text);
                self.lower.make_ascii_lowercase();
            } else {
                self.lower.push_str(&self.text.to_lowercase());
            }
            self.made = true;
        }
        self.lower
    }

    fn ascii_lower(&mut self) -> &[u8] {
        if !self.ascii_made {
            self.ascii_lower.clear();
            self.ascii_lower.extend_from_slice(self.text.as_bytes());
            self.ascii_lower.make_ascii_lowercase();
            self.ascii_made = true;
        }
        self.ascii_lower
    }

    fn special(&mut self) -> bool {
        *self.special.get_or_insert_with(|| {
            let b = self.text.as_bytes();
            !self.text.is_ascii()
                && (memmem::find(b, "\u{212a}".as_bytes()).is_some() || memmem::find(b, "\u{130}".as_bytes()).is_some())
        })
    }
}

impl<'q> Matcher<'q> {
    pub fn new(query: &'q Query) -> Matcher<'q> {
        Matcher { query, ascii_lower: Vec::new() }
    }

    /// Whether `text` matches; `lower` is scratch space kept between calls.
    pub fn is_match(&mut self, text: &str, lower: &mut String) -> bool {
        let mut t =
            Text { text, lower, made: false, ascii_lower: &mut self.ascii_lower, ascii_made: false, special: None };
        eval(&self.query.expr, &mut t)
    }
}

fn eval(e: &Expr, t: &mut Text<'_>) -> bool {
    match e {
        Expr::All => true,
        // An ASCII word in a text without the two special letters: the ASCII-lower-cased copy
        // (a vectorised pass) searched with `memmem` beats a case-insensitive automaton over
        // the text (perf on the bench corpus: the automaton's verification dominated).
        Expr::Substring(s, _) => {
            if s.ascii && !t.special() {
                s.finder.find(t.ascii_lower()).is_some()
            } else {
                s.finder.find(t.lower().as_bytes()).is_some()
            }
        }
        Expr::Regex(re, ..) => re.is_match(t.text),
        Expr::And(a, b) => eval(a, t) && eval(b, t),
        Expr::Or(a, b) => eval(a, t) || eval(b, t),
        Expr::Not(a) => !eval(a, t),
    }
}
