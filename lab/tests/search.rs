//! `weft-lab search`: what the study adds to weft-search. Every engine returns the identical
//! answer (order, invalid and oversized lines counted, unreadable files as skips), the generated
//! corpus is deterministic, on that corpus weft-search's prefilter changes no answer, and the
//! bench counts weft's long-poll warnings in its children's stderr.
//!
//! The query language and what a line's searched text is are weft-search's own; they are tested
//! in `weft-search/tests/` (query.rs, cli.rs).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft_lab::search::corpus::{self, CorpusSpec};
use weft_lab::search::engines::{self, read_every_file, Engine, RunSpec};
use weft_search::answer::Answer;
use weft_search::query::Query;
use weft_search::search::{Filter, Job, MAX_LINE};

/// A user line as Claude Code writes it; `content` is a JSON string or parts.
fn line(ts: &str, uuid: &str, content: &str) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"s-1","version":"1.0.80","type":"user","message":{{"role":"user","content":{content}}},"uuid":"{uuid}","timestamp":"{ts}"}}"#
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

/// Runs `job` on `files` with one engine and merges the outcomes.
fn run(engine: Engine, files: &[PathBuf], job: Arc<Job>) -> Answer {
    let spec = RunSpec { engine, pool: None, workers: 2, limit: job.limit };
    let outcomes = engines::run_files(&spec, files, job.clone()).expect("engine runs");
    engines::merge(files, Vec::new(), outcomes, &job)
}

/// Runs every engine on `files` and checks they all agree; returns the answer.
fn all_engines(files: &[PathBuf], query: &str, limit: usize) -> Answer {
    let job = engines::search_job(query, limit).unwrap_or_else(|e| panic!("{query:?}: {e}"));
    let mut first: Option<Answer> = None;
    for engine in Engine::ALL {
        let out = run(engine, files, job.clone());
        match &first {
            None => first = Some(out),
            Some(want) => assert_eq!(want, &out, "{} differs from {}", engine.name(), Engine::ALL[0].name()),
        }
    }
    first.unwrap()
}

#[test]
fn engines_agree_on_every_part_shape_and_on_summary_times() {
    let d = tmp("fields");
    let parts = r#"[{"type":"thinking","thinking":"alpha","signature":"sig"},{"type":"text","text":"beta"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"gamma"}},{"type":"tool_result","tool_use_id":"t1","content":"delta"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"epsilon"}]},{"type":"tool_use","id":"t3","name":"Task","input":{"prompt":"kappa"}}]"#;
    let f = d.join("p/a.jsonl");
    // A summary first (it takes the file's time), then a message, then a summary (it takes the
    // first message's time): the tokio engine feeds the search a line at a time, the others
    // whole files, and all must agree on both times.
    write(
        &f,
        &[
            r#"{"type":"summary","summary":"omega first","leafUuid":"x"}"#.into(),
            line("2025-01-01T00:00:00Z", "u-zeta", parts),
            r#"{"type":"summary","summary":"omega later","leafUuid":"y"}"#.into(),
        ],
    );
    let files = vec![f];
    let hits = |w: &str| all_engines(&files, w, 10).total_hits;
    // The text of every part is searched (a Bash tool_use as `Bash: <command>`, text arrays of
    // tool results), and the session id and uuid.
    for w in ["alpha", "beta", "Bash: gamma", "delta", "epsilon", "u-zeta", "s-1", "omega later"] {
        assert_eq!(hits(w), 1, "{w} should be searched");
    }
    // A Task's prompt is not part of the searched text (its description would be).
    assert_eq!(hits("kappa"), 0);
    let out = all_engines(&files, "omega", 10);
    let times: Vec<&str> = out.hits.iter().map(|h| h.timestamp.as_str()).collect();
    assert_eq!(times.len(), 2);
    assert!(times.contains(&"2025-01-01T00:00:00Z"), "{times:?}");
    assert!(times.iter().any(|t| t.ends_with("+00:00")), "the first summary takes the file's time: {times:?}");
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
    assert!(read_every_file(&out));
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
    let rel = |f: &[PathBuf], d: &Path| f.iter().map(|p| p.strip_prefix(d).unwrap().to_path_buf()).collect::<Vec<_>>();
    assert_eq!(rel(&f1, &d1), rel(&f2, &d2));
    for (a, b) in f1.iter().zip(&f2) {
        assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    }
    // `/x/` has no prefix of 3 bytes, so there is no prefilter: every line is parsed.
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
    assert!(read_every_file(&out));
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
    assert_eq!(out.lines, 2);
    assert!(!read_every_file(&out));
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
    assert!(!read_every_file(&out));
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
    // The answer reports them, and every engine ends (none opened the FIFO and blocked).
    let job = engines::search_job("hit", 10).unwrap();
    for engine in Engine::ALL {
        let spec = RunSpec { engine, pool: None, workers: 2, limit: 10 };
        let outcomes = engines::run_files(&spec, &files, job.clone()).expect("engine runs");
        let out = engines::merge(&files, skipped.clone(), outcomes, &job);
        assert_eq!(
            (out.total_hits, out.skipped_files.len(), read_every_file(&out)),
            (1, 2, false),
            "{}",
            engine.name()
        );
    }
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
        assert!(!read_every_file(&out));
    }
}

/// Queries of every kind the prefilter handles differently: common and rare words, phrases,
/// non-ASCII (the two letters that lower-case into ASCII among them), words of the lines the
/// generator writes with escapes (`\/`, `\u00XX`, `\u0065`), regexes with flags, boolean
/// operators, and the placeholder words of images and tool results.
const PREFILTER_QUERIES: &[&str] = &[
    "the",
    "tokio",
    "zanzibar",
    "\"thread pool\"",
    "'exactly-once'",
    "café",
    "Überprüfung",
    "İstanbul",
    "\u{212a}elvin",
    "kelvin",
    "K",
    "elvin",
    "usr/bin",
    "\"/usr/bin/env\"",
    "quotes",
    "\"\\\"quotes\\\" and\"",
    "e",
    "/dead+lock/i",
    "/(tokio|spawn)\\s+\\w/",
    "/^\\[INFO\\] \\w+/m",
    "/BUILD.failed/is",
    "/ dead lock /x",
    "tokio AND spawn",
    "deadlock OR mutex",
    "tokio AND NOT spawn",
    "NOT the",
    "\"JSON value\"",
    "\"Tool Result\"",
    "[Image]",
    "\"(error)\"",
    "\"Bash: cargo\"",
];

#[test]
fn the_prefilter_changes_no_answer_on_the_generated_corpus() {
    let d = tmp("prefilter");
    // Seed 12 writes lines whose `/` are all escaped (`\/usr\/bin`) where `usr/bin` is searched
    // text (without the `\/` trigger, 2 hits of `usr/bin` are lost), a Kelvin sign escaped as
    // `\u212a`, lines with every `e` escaped, and invalid lines.
    corpus::generate(&CorpusSpec { files: 40, seed: 12, total_mb: Some(8) }, &d).unwrap();
    let (files, skipped) = engines::list_files(&d).unwrap();
    assert_eq!((files.len(), skipped.len()), (40, 0));
    let mut prefiltered = 0;
    for &query in PREFILTER_QUERIES {
        let job = |prefilter: bool| {
            let q = Query::parse(query).unwrap_or_else(|e| panic!("{query:?}: {e}"));
            let job = Job::new(q, Filter::default(), 25, false, false);
            Arc::new(if prefilter { job } else { job.without_prefilter() })
        };
        let (with, without) = (job(true), job(false));
        prefiltered += usize::from(with.prefilter.is_some());
        let mut a = run(Engine::Sequential, &files, with);
        let mut b = run(Engine::Sequential, &files, without);
        assert!(b.total_hits > 0, "{query:?} hits nothing: the comparison would prove nothing");
        // Invalid lines that cannot match are not even parsed with the prefilter, so not counted.
        assert!(a.invalid_lines <= b.invalid_lines, "{query:?}");
        (a.invalid_lines, b.invalid_lines) = (0, 0);
        (a.invalid_at, b.invalid_at) = (Vec::new(), Vec::new());
        assert_eq!(a.total_hits, b.total_hits, "{query:?}: hits with the prefilter, and without");
        assert_eq!(a, b, "{query:?}: the answer with the prefilter differs from the one without");
    }
    // Most queries have a prefilter (else this test would compare a search with itself).
    assert!(prefiltered >= PREFILTER_QUERIES.len() - 5, "only {prefiltered} queries had a prefilter");
    let _ = std::fs::remove_dir_all(&d);
}

/// The bench counts weft's long-poll warning lines in its children's stderr, and nothing else
/// (other weft lines, other runtimes' output, a partial line).
#[test]
fn long_poll_warnings_are_counted_from_weft_lines_only() {
    let stderr = "weft: task 695 spawned at lab/src/search/engines.rs:224:25 blocked worker 0 for 15 ms\n\
                  weft: runtime exit summary: 3 long polls\n\
                  thread 'main' blocked worker 1\n\
                  weft: task 7 spawned at src/main.rs:1:1 blocked worker 1 for 230 ms\n\
                  weft: task 8 spawned at src/main.rs:1:1";
    assert_eq!(weft_lab::search::long_poll_warnings(stderr), 2);
    assert_eq!(weft_lab::search::long_poll_warnings(""), 0);
}
