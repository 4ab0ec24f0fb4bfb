//! `weft-lab search`: the query language, what a line's searched text is, the ordering rules,
//! identical answers across engines, and every bad-input case (each a clear error or a counted
//! skip, never a panic or an answer that claims to be complete when it is not).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft_lab::search::corpus::{self, CorpusSpec};
use weft_lab::search::engines::{self, Engine, RunSpec, SearchOutcome};
use weft_lab::search::query::Query;
use weft_lab::search::record::{JsonParser, MAX_LINE};

fn q(s: &str) -> Query {
    Query::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}

fn err(s: &str) -> String {
    Query::parse(s).expect_err(s).to_string()
}

#[test]
fn words_and_phrases_are_case_insensitive_substrings() {
    assert!(q("Tokio").is_match("we use TOKIO here"));
    assert!(q("tok").is_match("tokio"));
    assert!(q("\"thread pool\"").is_match("the Thread Pool grew"));
    assert!(!q("\"thread pool\"").is_match("thread, pool"));
    assert!(q("café").is_match("CAFÉ au lait"));
}

#[test]
fn boolean_operators_precedence_and_parentheses() {
    // Juxtaposition is AND; NOT binds tighter than AND, AND tighter than OR.
    assert!(q("a b").is_match("b a"));
    assert!(!q("a b").is_match("a"));
    assert!(q("x OR y z").is_match("x"));
    assert!(!q("(x OR y) z").is_match("x"));
    assert!(q("(x OR y) z").is_match("y z"));
    assert!(q("NOT x").is_match("y"));
    assert!(!q("NOT x y").is_match("x y"));
    assert!(q("NOT (x y)").is_match("x"));
    assert!(q("NOT NOT x").is_match("x"));
    assert!(q("a AND NOT b").is_match("a"));
    assert!(!q("a AND NOT b").is_match("a b"));
    // Lower-case operators are words.
    assert!(q("and").is_match("sand"));
}

#[test]
fn regexes_and_their_flags() {
    assert!(q("/dead+lock/").is_match("deaddlock"));
    assert!(!q("/Deadlock/").is_match("deadlock"));
    assert!(q("/Deadlock/i").is_match("deadlock"));
    assert!(q(r"/a\/b/").is_match("a/b"));
    assert!(q("/^x$/m").is_match("a\nx\nb"));
    assert!(q("/x/i OR y").is_match("X"));
}

#[test]
fn malformed_queries_are_clear_errors() {
    assert!(err("/unclosed").contains("unclosed regex"), "{}", err("/unclosed"));
    assert!(err("AND AND").contains("expected a word"), "{}", err("AND AND"));
    assert!(err("a AND").contains("end of the query"), "{}", err("a AND"));
    assert!(err("(a").contains("expected `)`"), "{}", err("(a"));
    assert!(err("a)").contains("unexpected `)`"), "{}", err("a)"));
    assert!(err("\"open").contains("unclosed quote"));
    assert!(err("\"\"").contains("empty phrase"));
    assert!(err("/x/q").contains("unknown regex flag"));
    assert!(err("/(/").contains("bad regex"));
    assert!(err("   ").contains("empty"));
    assert!(err("NOT").contains("end of the query"));
}

fn line(ts: &str, uuid: &str, content: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"sessionId":"s-1","timestamp":"{ts}","message":{{"role":"user","content":{content}}}}}"#
    )
}

fn write(path: &Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("weft-lab-search-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs every engine on `files` and checks they all agree; returns the answer.
fn all_engines(files: &[PathBuf], query: &str, limit: usize) -> SearchOutcome {
    let query = Arc::new(q(query));
    let mut first: Option<SearchOutcome> = None;
    for engine in Engine::ALL {
        for parser in JsonParser::ALL {
            let spec = RunSpec { engine, pool: None, workers: 2, limit, parser };
            let outcomes = engines::run_files(&spec, files, query.clone()).expect("engine runs");
            let out = engines::merge(files, Vec::new(), outcomes, limit);
            match &first {
                None => first = Some(out),
                Some(want) => assert_eq!(want, &out, "{} with {} differs", engine.name(), parser.name()),
            }
        }
    }
    first.unwrap()
}

#[test]
fn searched_text_is_message_thinking_string_results_summary_and_ids() {
    let d = tmp("fields");
    let parts = r#"[{"type":"thinking","thinking":"alpha"},{"type":"text","text":"beta"},{"type":"tool_use","name":"Bash","input":{"command":"gamma"}},{"type":"tool_result","content":"delta"},{"type":"tool_result","content":[{"type":"text","text":"epsilon"}]}]"#;
    let f = d.join("p/a.jsonl");
    write(
        &f,
        &[
            line("2025-01-01T00:00:00Z", "u-zeta", parts),
            r#"{"type":"summary","summary":"omega summary","leafUuid":"x"}"#.into(),
        ],
    );
    let files = vec![f];
    let hits = |w: &str| all_engines(&files, w, 10).total_hits;
    for w in ["alpha", "beta", "delta", "u-zeta", "s-1", "omega"] {
        assert_eq!(hits(w), 1, "{w} should be searched");
    }
    // tool_use input and non-string tool results are not part of the searched text.
    assert_eq!(hits("gamma"), 0);
    assert_eq!(hits("epsilon"), 0);
}

#[test]
fn newest_first_then_file_order_then_line_order() {
    let d = tmp("order");
    let (a, b) = (d.join("p/a.jsonl"), d.join("q/b.jsonl"));
    write(
        &a,
        &[
            line("2025-01-02T00:00:00Z", "a1", "\"hit\""),
            line("2025-01-03T00:00:00Z", "a2", "\"hit\""),
            line("2025-01-03T00:00:00Z", "a3", "\"hit\""),
        ],
    );
    write(&b, &[line("2025-01-03T00:00:00Z", "b1", "\"hit\""), line("2025-01-04T00:00:00Z", "b2", "\"hit\"")]);
    let (files, _) = engines::list_files(&d).unwrap();
    assert_eq!(files, vec![a, b]);
    let out = all_engines(&files, "hit", 4);
    let got: Vec<(u32, u32)> = out.hits.iter().map(|h| (h.file, h.line)).collect();
    assert_eq!(got, vec![(1, 2), (0, 2), (0, 3), (1, 1)]);
    assert_eq!(out.total_hits, 5);
    assert!(out.complete());
}

#[test]
fn generated_corpus_is_deterministic_and_engines_agree() {
    let (d1, d2) = (tmp("gen1"), tmp("gen2"));
    let spec = CorpusSpec { files: 6, seed: 3, total_mb: Some(1) };
    let s1 = corpus::generate(&spec, &d1).unwrap();
    corpus::generate(&spec, &d2).unwrap();
    let (f1, _) = engines::list_files(&d1).unwrap();
    let (f2, _) = engines::list_files(&d2).unwrap();
    assert_eq!(f1.len(), 6);
    for (a, b) in f1.iter().zip(&f2) {
        assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    }
    let out = all_engines(&f1, "the OR /x/", 50);
    assert!(out.total_hits > 0);
    assert_eq!(out.lines, s1.lines);
    assert_eq!(out.invalid_lines, s1.invalid_lines);
    assert_eq!(out.bytes, s1.bytes);
}

#[test]
fn invalid_json_and_invalid_utf8_lines_are_skipped_and_counted() {
    let d = tmp("invalid");
    let f = d.join("p/a.jsonl");
    let mut bytes = line("2025-01-01T00:00:00Z", "u1", "\"hit\"").into_bytes();
    bytes.extend_from_slice(b"\n{\"type\":\"user\",\"message\":{\"content\":\"hit \xff\xfe\"}}\n{not json hit\n");
    bytes.extend_from_slice(line("2025-01-02T00:00:00Z", "u2", "\"hit\"").as_bytes());
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(&f, bytes).unwrap();
    let out = all_engines(&[f], "hit", 10);
    assert_eq!(out.total_hits, 2);
    assert_eq!(out.invalid_lines, 2);
    assert_eq!(out.lines, 4);
    assert!(out.complete());
}

#[test]
fn an_oversized_line_is_skipped_and_the_answer_says_incomplete() {
    let d = tmp("huge");
    let f = d.join("p/a.jsonl");
    let mut bytes = line("2025-01-01T00:00:00Z", "u1", "\"hit\"").into_bytes();
    bytes.push(b'\n');
    let huge = format!("\"hit {}\"", "x".repeat(MAX_LINE));
    bytes.extend_from_slice(line("2025-01-02T00:00:00Z", "u2", &huge).as_bytes());
    bytes.push(b'\n');
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(&f, bytes).unwrap();
    let out = all_engines(&[f], "hit", 10);
    assert_eq!(out.total_hits, 1);
    assert_eq!(out.oversized_lines, 1);
    assert!(!out.complete());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn missing_files_and_directories_are_counted_skips() {
    let d = tmp("missing");
    let good = d.join("p/a.jsonl");
    write(&good, &[line("2025-01-01T00:00:00Z", "u1", "\"hit\"")]);
    let gone = d.join("p/deleted.jsonl");
    write(&gone, &[line("2025-01-01T00:00:00Z", "u2", "\"hit\"")]);
    let dir = d.join("p/dir.jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    // Listed, then deleted before the search reads it (as if deleted during the search).
    let (mut files, skipped) = engines::list_files(&d).unwrap();
    assert_eq!(files.len(), 2);
    assert!(skipped.is_empty());
    std::fs::remove_file(&gone).unwrap();
    // A directory given as a file.
    files.push(dir.clone());
    let out = all_engines(&files, "hit", 10);
    assert_eq!(out.total_hits, 1);
    assert_eq!(out.files_searched, 1);
    let reasons: Vec<(&str, &str)> = out.skipped_files.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
    let (gone, dir) = (gone.display().to_string(), dir.display().to_string());
    assert!(reasons.contains(&(gone.as_str(), "not found (deleted during the search?)")), "{reasons:?}");
    assert!(reasons.contains(&(dir.as_str(), "is a directory, not a file")), "{reasons:?}");
    assert!(!out.complete());
}

#[test]
fn fifos_and_sockets_are_skipped_by_the_listing_not_opened() {
    let d = tmp("special");
    write(&d.join("p/a.jsonl"), &[line("2025-01-01T00:00:00Z", "u1", "\"hit\"")]);
    let fifo = d.join("p/fifo.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let _sock = std::os::unix::net::UnixListener::bind(d.join("p/sock.jsonl")).unwrap();
    let (files, skipped) = engines::list_files(&d).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(skipped.len(), 2);
    assert!(skipped.iter().all(|s| s.reason == "not a regular file"));
}

#[test]
fn unreadable_files_are_counted_skips() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmp("perm");
    let f = d.join("p/a.jsonl");
    write(&f, &[line("2025-01-01T00:00:00Z", "u1", "\"hit\"")]);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = all_engines(std::slice::from_ref(&f), "hit", 10);
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        // root reads any file: the permission bits cannot make it unreadable.
        assert_eq!(out.total_hits, 1);
    } else {
        assert_eq!(out.total_hits, 0);
        assert_eq!(out.skipped_files[0].reason, "permission denied");
        assert!(!out.complete());
    }
}
