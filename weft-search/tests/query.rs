//! The query language: words and phrases (case-insensitive substrings, as ccms), boolean
//! operators and their precedence, regexes and their flags, and malformed queries.

use weft_search::query::Query;

fn q(s: &str) -> Query {
    Query::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn err(s: &str) -> String {
    match Query::parse(s) {
        Ok(_) => panic!("{s:?} parsed, but it should be an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn words_and_phrases_are_case_insensitive_substrings() {
    assert!(q("Tokio").is_match("we use TOKIO here"));
    assert!(q("tok").is_match("tokio"));
    assert!(!q("tokio").is_match("tok io"));
    assert!(q("\"thread pool\"").is_match("the Thread Pool grew"));
    assert!(!q("\"thread pool\"").is_match("thread, pool"));
    assert!(q("café").is_match("CAFÉ au lait"));
    // A word may hold any character but space and parentheses.
    assert!(q("usr/bin").is_match("#!/usr/bin/env"));
    assert!(q("main.rs:12").is_match("at src/main.rs:12:5"));
}

#[test]
fn single_quoted_phrases_are_phrases_too() {
    assert!(q("'thread pool'").is_match("a THREAD POOL"));
    assert!(!q("'thread pool'").is_match("thread-pool"));
    // A double quote inside single quotes is a plain character, and the reverse.
    assert!(q("'say \"hi\"'").is_match("they say \"hi\" twice"));
    assert!(q("\"it's\"").is_match("it's fine"));
}

#[test]
fn non_ascii_letters_lower_case_as_ccms_does() {
    // KELVIN SIGN lower-cases to `k`: an ASCII word finds it, and it finds ASCII text.
    assert!(q("kelvin").is_match("300 \u{212a}elvin"));
    assert!(q("\u{212a}").is_match("ok"));
    // CAPITAL I WITH DOT ABOVE lower-cases to `i` plus a combining dot, not to `i`.
    assert!(q("İstanbul").is_match("İSTANBUL"));
    assert!(q("i\u{307}stanbul").is_match("İstanbul"));
    assert!(!q("istanbul").is_match("İstanbul"));
    assert!(q("ÜBER").is_match("überprüfung"));
}

#[test]
fn escapes_in_phrases() {
    assert!(q(r#""say \"hi\"""#).is_match(r#"they say "hi""#));
    assert!(q(r"'it\'s'").is_match("it's"));
    assert!(q(r#""a\\b""#).is_match(r"C:\a\b"));
    assert!(!q(r#""a\\b""#).is_match(r"a\\b"));
    assert!(q(r#""one\ntwo""#).is_match("one\ntwo"));
    assert!(!q(r#""one\ntwo""#).is_match(r"one\ntwo"));
    assert!(q(r#""a\tb""#).is_match("a\tb"));
    assert!(q(r#""a\rb""#).is_match("a\rb"));
    // Any other pair stays as the two characters written, the other quote included.
    assert!(q(r#""\d+""#).is_match(r"regex \d+ here"));
    assert!(!q(r#""\d+""#).is_match("d+"));
    assert!(q(r#"'\"x'"#).is_match(r#"a \"x"#));
    assert!(!q(r#"'\"x'"#).is_match(r#"a "x"#));
}

#[test]
fn empty_phrase_and_empty_regex_match_everything() {
    for query in ["\"\"", "''", "//"] {
        assert!(q(query).is_match(""), "{query}");
        assert!(q(query).is_match("anything"), "{query}");
    }
    assert!(!q("NOT \"\"").is_match("anything"));
}

#[test]
fn an_unclosed_slash_is_a_word() {
    assert!(q("/foo").is_match("cd /foo/bar"));
    assert!(q("/foo").is_match("/FOO"));
    assert!(!q("/foo").is_match("foo"));
    assert!(q("/").is_match("a/b"));
    assert!(!q("/").is_match("ab"));
}

#[test]
fn boolean_operators_precedence_and_parentheses() {
    // Words side by side mean AND; NOT binds tighter than AND, AND tighter than OR.
    assert!(q("a b").is_match("b a"));
    assert!(!q("a b").is_match("a"));
    assert!(q("a AND b").is_match("b a"));
    assert!(!q("a AND b").is_match("b"));
    assert!(q("x OR y z").is_match("x"));
    assert!(!q("x OR y z").is_match("y"));
    assert!(!q("(x OR y) z").is_match("x"));
    assert!(q("(x OR y) z").is_match("y z"));
    assert!(q("NOT x").is_match("y"));
    assert!(!q("NOT x").is_match("x"));
    assert!(!q("NOT x y").is_match("x y"));
    assert!(q("NOT x y").is_match("y"));
    assert!(q("NOT (x y)").is_match("x"));
    assert!(q("NOT NOT x").is_match("x"));
    assert!(q("a AND NOT b OR c").is_match("c b"));
    assert!(!q("a AND NOT b OR c").is_match("a b"));
    assert!(q("(a)AND b").is_match("a b"));
    // Lower-case operators are words; so are words that start with an operator.
    assert!(q("and").is_match("sand"));
    assert!(!q("x or y").is_match("x"));
    assert!(q("x or y").is_match("x or y"));
    assert!(q("ANDROID").is_match("android"));
    assert!(q("ORDER").is_match("order by"));
}

#[test]
fn regexes_and_their_flags() {
    assert!(q("/dead+lock/").is_match("deaddlock"));
    assert!(!q("/Deadlock/").is_match("deadlock"));
    assert!(q("/Deadlock/i").is_match("deadlock"));
    assert!(q(r"/a\/b/").is_match("a/b"));
    assert!(q(r"/\d{3}/").is_match("port 443"));
    // m: ^ and $ at line ends.
    assert!(q("/^x$/m").is_match("a\nx\nb"));
    assert!(!q("/^x$/").is_match("a\nx\nb"));
    // s: `.` matches a newline.
    assert!(q("/a.b/s").is_match("a\nb"));
    assert!(!q("/a.b/").is_match("a\nb"));
    // x: whitespace in the pattern is ignored.
    assert!(q("/a b/x").is_match("ab"));
    assert!(!q("/a b/").is_match("ab"));
    // u: accepted, changes nothing (Unicode is always on).
    assert!(q("/é+/u").is_match("café"));
    assert!(q("/\\w/u").is_match("é"));
    assert!(q("/CAFÉ/iu").is_match("café"));
    assert!(q("/x/i OR y").is_match("X"));
    assert!(q("/x/ y").is_match("y x"));
}

#[test]
fn malformed_queries_are_clear_errors() {
    let cases = [
        ("AND AND", "expected a word"),
        ("a AND", "the end of the query"),
        ("NOT", "the end of the query"),
        ("a OR", "the end of the query"),
        ("(a", "expected `)`"),
        ("a)", "unexpected `)`"),
        ("()", "found `)`"),
        ("\"open", "unclosed \" quote"),
        ("'open", "unclosed ' quote"),
        ("/x/q", "unknown regex flag `q`"),
        ("/usr/bin", "unknown regex flag `b`"),
        ("/(/", "bad regex"),
        ("/[a/i", "bad regex"),
        ("", "empty"),
        ("   ", "empty"),
    ];
    for (query, want) in cases {
        let e = err(query);
        assert!(e.contains(want), "{query:?}: {e:?} should say {want:?}");
        assert!(e.starts_with("invalid query: "), "{query:?}: {e:?}");
    }
}
