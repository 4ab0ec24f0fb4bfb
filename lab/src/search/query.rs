//! The query language of the session search (the language of the tool in reference report
//! 002): case-insensitive words and `"quoted phrases"` (substring matches), `/regex/flags`,
//! `AND` / `OR` / `NOT` (upper case), parentheses, and juxtaposition as `AND`.
//!
//! Precedence, loosest first: `OR`, `AND` (explicit or implicit), `NOT`. Parsing is a small
//! recursive descent over a token list, so every malformed query becomes a [`QueryError`] that
//! says what was expected where, never a panic. Matching runs against one line's searched text;
//! substrings are compared against a lower-cased copy made once per line by [`Matcher`].

use std::fmt;

use memchr::memmem;
use regex::{Regex, RegexBuilder};

/// A parsed query.
#[derive(Debug)]
pub struct Query {
    expr: Expr,
    /// Whether any term needs the lower-cased text (a word or phrase).
    needs_lower: bool,
    /// Case-insensitive regexes of the positive terms, for highlighting.
    highlighters: Vec<Regex>,
}

#[derive(Debug)]
enum Expr {
    /// A lower-cased substring.
    Substring(Box<memmem::Finder<'static>>),
    Regex(Regex),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
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
            '"' => {
                chars.next();
                let mut phrase = String::new();
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    if c == '"' {
                        closed = true;
                        break;
                    }
                    phrase.push(c);
                }
                if !closed {
                    return Err(QueryError(format!("unclosed quote starting at column {}", i + 1)));
                }
                if phrase.is_empty() {
                    return Err(QueryError(format!("empty phrase \"\" at column {}", i + 1)));
                }
                out.push(Token::Text(phrase));
            }
            '/' => {
                chars.next();
                let mut pattern = String::new();
                let mut closed = false;
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
                        '/' => {
                            closed = true;
                            break;
                        }
                        c => pattern.push(c),
                    }
                }
                if !closed {
                    return Err(QueryError(format!(
                        "unclosed regex starting at column {} (write /pattern/ or /pattern/i)",
                        i + 1
                    )));
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
                    if c.is_whitespace() || c == '(' || c == ')' || c == '"' {
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
    needs_lower: bool,
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
                self.needs_lower = true;
                if !negated {
                    self.highlighters.push(
                        RegexBuilder::new(&regex::escape(&s))
                            .case_insensitive(true)
                            .build()
                            .map_err(|e| QueryError(e.to_string()))?,
                    );
                }
                Ok(Expr::Substring(Box::new(memmem::Finder::new(s.to_lowercase().as_bytes()).into_owned())))
            }
            Some(Token::Regex(pattern, flags)) => {
                self.pos += 1;
                if pattern.is_empty() {
                    return Err(QueryError("empty regex //".into()));
                }
                let mut b = RegexBuilder::new(&pattern);
                for f in flags.chars() {
                    match f {
                        'i' => b.case_insensitive(true),
                        'm' => b.multi_line(true),
                        's' => b.dot_matches_new_line(true),
                        'x' => b.ignore_whitespace(true),
                        other => {
                            return Err(QueryError(format!(
                                "unknown regex flag `{other}` in /{pattern}/{flags} (known: i, m, s, x)"
                            )))
                        }
                    };
                }
                let re = b.build().map_err(|e| QueryError(format!("bad regex /{pattern}/: {e}")))?;
                if !negated {
                    self.highlighters.push(re.clone());
                }
                Ok(Expr::Regex(re))
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
        let mut p = Parser { tokens, pos: 0, needs_lower: false, highlighters: Vec::new() };
        let expr = p.or(false)?;
        if p.pos != p.tokens.len() {
            return Err(QueryError(format!("unexpected {} at token {}", describe(p.peek()), p.pos + 1)));
        }
        Ok(Query { expr, needs_lower: p.needs_lower, highlighters: p.highlighters })
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
}

impl<'q> Matcher<'q> {
    pub fn new(query: &'q Query) -> Matcher<'q> {
        Matcher { query }
    }

    /// Whether `text` matches; `lower` is scratch space kept between calls.
    pub fn is_match(&self, text: &str, lower: &mut String) -> bool {
        if self.query.needs_lower {
            lower.clear();
            if text.is_ascii() {
                lower.push_str(text);
                lower.make_ascii_lowercase();
            } else {
                lower.push_str(&text.to_lowercase());
            }
        }
        eval(&self.query.expr, text, lower)
    }
}

fn eval(e: &Expr, text: &str, lower: &str) -> bool {
    match e {
        Expr::Substring(f) => f.find(lower.as_bytes()).is_some(),
        Expr::Regex(re) => re.is_match(text),
        Expr::And(a, b) => eval(a, text, lower) && eval(b, text, lower),
        Expr::Or(a, b) => eval(a, text, lower) || eval(b, text, lower),
        Expr::Not(a) => !eval(a, text, lower),
    }
}
