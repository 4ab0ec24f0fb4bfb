//! The `weft-search` binary, run as a user runs it: a temporary HOME whose
//! `~/.claude/projects/<encoded project>/<session>.jsonl` hold small transcripts written as
//! Claude Code writes them. Exit codes, every filter, every output format, what text of a line
//! is searched (as ccms searches it), and bad input (each a counted skip that makes the answer
//! say INCOMPLETE, never a silent gap).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_weft-search");

const T1: &str = "2025-06-01T10:00:00.000Z";
const T2: &str = "2025-06-02T10:00:00.000Z";
const T3: &str = "2025-06-03T10:00:00.000Z";
const T4: &str = "2025-06-04T10:00:00.000Z";
const T5: &str = "2025-06-05T10:00:00.000Z";

// ---------------------------------------------------------------------------------------------
// Transcript lines, shaped as Claude Code writes them.

fn base(kind: &str, session: &str, uuid: &str, ts: &str) -> Value {
    json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/home/dev/app",
        "sessionId": session, "version": "1.0.80", "gitBranch": "main", "type": kind,
        "uuid": uuid, "timestamp": ts,
    })
}

/// A user line; `content` is a string or a list of parts.
fn user(session: &str, uuid: &str, ts: &str, content: impl Into<Value>) -> String {
    let mut v = base("user", session, uuid, ts);
    v["message"] = json!({"role": "user", "content": content.into()});
    v.to_string()
}

/// An assistant line with these content parts.
fn assistant(session: &str, uuid: &str, ts: &str, parts: Value) -> String {
    let mut v = base("assistant", session, uuid, ts);
    v["message"] = json!({
        "id": format!("msg_{uuid}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": parts, "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5},
    });
    v.to_string()
}

fn system(session: &str, uuid: &str, ts: &str, content: &str) -> String {
    let mut v = base("system", session, uuid, ts);
    v["content"] = json!(content);
    v["isMeta"] = json!(false);
    v["level"] = json!("info");
    v.to_string()
}

fn summary(text: &str, leaf: &str) -> String {
    json!({"type": "summary", "summary": text, "leafUuid": leaf}).to_string()
}

fn text(s: &str) -> Value {
    json!([{"type": "text", "text": s}])
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!([{"type": "tool_use", "id": id, "name": name, "input": input}])
}

fn tool_result(id: &str, content: Value, is_error: bool) -> Value {
    json!([{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error}])
}

/// A working directory's name under `~/.claude/projects` (as Claude Code encodes it).
fn encode(path: &Path) -> String {
    let s = path.to_str().unwrap();
    s.chars().map(|c| if "/\\:*?\"<>|._".contains(c) { '-' } else { c }).collect()
}

// ---------------------------------------------------------------------------------------------
// A temporary world: `home/.claude/projects/…` and working directories under `work/`.

struct World {
    root: PathBuf,
}

/// What a run printed, and how it exited.
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }

    /// The uuids of the hits of a `-f json` run, in answer order.
    fn uuids(&self) -> Vec<String> {
        self.json()["hits"].as_array().unwrap().iter().map(|h| h["uuid"].as_str().unwrap().to_owned()).collect()
    }

    fn headers(&self) -> usize {
        self.stdout.lines().filter(|l| l.starts_with("2025-")).count()
    }
}

/// The default project's directory below `work/`.
const APP: &str = "app";

impl World {
    fn new(name: &str) -> World {
        let root = std::env::temp_dir().join(format!("weft-search-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // The binary compares the encoded current directory (getcwd: links resolved).
        let w = World { root: root.canonicalize().unwrap() };
        std::fs::create_dir_all(w.projects()).unwrap();
        w.dir(APP);
        w
    }

    /// A world whose HOME has no `.claude`.
    fn without_claude(name: &str) -> World {
        let w = World::new(name);
        std::fs::remove_dir_all(w.root.join("home/.claude")).unwrap();
        w
    }

    fn projects(&self) -> PathBuf {
        self.root.join("home/.claude/projects")
    }

    /// `work/<rel>` (created): a working directory.
    fn dir(&self, rel: &str) -> PathBuf {
        let d = self.root.join("work").join(rel);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The project directory name of `work/<rel>`.
    fn project(&self, rel: &str) -> String {
        encode(&self.dir(rel))
    }

    fn path(&self, project: &str, session: &str) -> PathBuf {
        let d = self.projects().join(self.project(project));
        std::fs::create_dir_all(&d).unwrap();
        d.join(format!("{session}.jsonl"))
    }

    /// Writes `<project dir of work/project>/<session>.jsonl`.
    fn session(&self, project: &str, session: &str, lines: &[String]) -> PathBuf {
        self.bytes(project, session, (lines.join("\n") + "\n").as_bytes())
    }

    fn bytes(&self, project: &str, session: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(project, session);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args).current_dir(cwd).env("HOME", self.root.join("home")).env("TZ", "UTC");
        for var in ["CLAUDE_CONFIG_DIR", "NO_COLOR", "CLICOLOR_FORCE", "WEFT_SEARCH_ROOT", "WEFT_SEARCH_NO_PREFILTER"] {
            c.env_remove(var);
        }
        c.stdin(Stdio::null());
        c
    }

    /// Runs in `work/app`, the default project.
    fn run(&self, args: &[&str]) -> Out {
        self.run_in(&self.dir(APP), args)
    }

    fn run_in(&self, cwd: &Path, args: &[&str]) -> Out {
        let o = self.command(cwd, args).output().unwrap();
        Out {
            code: o.status.code().expect("exited"),
            stdout: String::from_utf8(o.stdout).unwrap(),
            stderr: String::from_utf8(o.stderr).unwrap(),
        }
    }

    /// The uuids a `-f json` run in `cwd` returns, in answer order.
    fn uuids_in(&self, cwd: &Path, args: &[&str]) -> Vec<String> {
        let out = self.run_in(cwd, &[args, &["-f", "json"]].concat());
        assert!(out.code <= 1, "{args:?} exited {}: {}", out.code, out.stderr);
        out.uuids()
    }

    fn uuids(&self, args: &[&str]) -> Vec<String> {
        self.uuids_in(&self.dir(APP), args)
    }

    /// The stdout of a run whose stdout is a terminal (a pseudo-terminal read here).
    fn on_terminal(&self, args: &[&str], env: &[(&str, &str)]) -> String {
        use std::os::fd::FromRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        // SAFETY: plain libc calls on a descriptor this function owns; `name` is a buffer of the
        // length given, NUL-terminated by ptsname_r on success.
        let (master, slave) = unsafe {
            let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(fd >= 0, "posix_openpt");
            let master = File::from_raw_fd(fd);
            assert_eq!(libc::grantpt(fd), 0);
            assert_eq!(libc::unlockpt(fd), 0);
            let mut name = [0 as libc::c_char; 256];
            assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
            let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap().to_owned();
            let slave =
                std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOCTTY).open(name).unwrap();
            (master, slave)
        };
        let mut cmd = self.command(&self.dir(APP), args);
        cmd.envs(env.iter().copied()).stdout(slave).stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        drop(cmd); // our copy of the terminal's other end, so reads end when the child exits
        let mut out = Vec::new();
        let mut master = master;
        let mut buf = [0u8; 4096];
        loop {
            match master.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                // EIO: every writer has closed the terminal.
                Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
                Err(e) => panic!("reading the terminal: {e}"),
            }
        }
        assert!(child.wait().unwrap().success());
        String::from_utf8(out).unwrap()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A file's modification time set to an RFC 3339 instant (a summary's time comes from it).
fn set_mtime(path: &Path, at: &str) {
    let secs = at.parse::<jiff::Timestamp>().unwrap().as_second();
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs as u64);
    File::options().write(true).open(path).unwrap().set_modified(t).unwrap();
}

/// Writes session `session` of the default project with a line of each kind: first a summary
/// (`texts[0]`) whose leaf is the assistant line, as Claude Code leaves it after a compaction,
/// then a user line (`texts[1]`) at T1, an assistant line (`answer`) at T2 and a system line
/// (`texts[2]`) at T3, whose uuids are `uuid` followed by 1, 2 and 3. The file's time, which a
/// summary's time comes from, is set to `mtime`.
fn every_kind(w: &World, session: &str, uuid: &str, texts: [&str; 3], answer: Value, mtime: &str) {
    let [summary_text, question, hook] = texts;
    let [u1, u2, u3] = [1, 2, 3].map(|n| format!("{uuid}{n}"));
    let f = w.session(
        APP,
        session,
        &[
            summary(summary_text, &u2),
            user(session, &u1, T1, question),
            assistant(session, &u2, T2, answer),
            system(session, &u3, T3, hook),
        ],
    );
    set_mtime(&f, mtime);
}

/// One session in the default project: a question and an answer about tokio.
fn tokio_world(name: &str) -> World {
    let w = World::new(name);
    w.session(
        APP,
        "s1",
        &[
            user("s1", "u1", T1, "How do I fix the tokio deadlock?"),
            assistant("s1", "u2", T2, text("Hold no lock across an await in tokio.")),
        ],
    );
    w
}

// ---------------------------------------------------------------------------------------------
// Exit codes and errors.

#[test]
fn exit_0_with_hits_and_1_without() {
    let w = tokio_world("exit");
    let hit = w.run(&["deadlock"]);
    assert_eq!(hit.code, 0, "{}", hit.stderr);
    assert_eq!(hit.headers(), 1);
    let none = w.run(&["zanzibar"]);
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert_eq!(none.stdout, "");
    assert!(none.stderr.starts_with("0 of 0 hits in 1 files"), "{}", none.stderr);
}

#[test]
fn a_bad_query_exits_2_and_says_why() {
    let w = tokio_world("badquery");
    for (query, why) in [("tokio AND", "the end of the query"), ("/(/", "bad regex"), ("(tokio", "expected `)`")] {
        let out = w.run(&[query]);
        assert_eq!(out.code, 2, "{query}");
        assert_eq!(out.stdout, "", "{query}");
        assert!(out.stderr.contains("invalid query") && out.stderr.contains(why), "{query}: {}", out.stderr);
    }
}

#[test]
fn bad_time_flags_exit_2() {
    let w = tokio_world("badtime");
    let out = w.run(&["tokio", "--since", "soon"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--since \"soon\" is not a time"), "{}", out.stderr);
    let out = w.run(&["tokio", "--before", "2025-13-01"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--before \"2025-13-01\""), "{}", out.stderr);
    let out = w.run(&["tokio", "--after", "2025-06-01", "--since", "2h"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--after or --since, not both"), "{}", out.stderr);
}

#[test]
fn usage_errors_exit_2() {
    let w = tokio_world("usage");
    for args in [&["tokio", "-r", "User"][..], &["tokio", "--project", "/x", "--all-projects"], &["tokio", "-f", "xml"]]
    {
        let out = w.run(args);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains("error:"), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn no_claude_projects_directory_is_an_error_naming_it() {
    let w = World::without_claude("noclaude");
    let out = w.run(&["tokio"]);
    assert_eq!(out.code, 2);
    let path = w.projects().display().to_string();
    assert!(out.stderr.contains(&format!("{path} does not exist")), "{}", out.stderr);
}

#[test]
fn a_directory_without_sessions_suggests_all_projects() {
    let w = tokio_world("nosessions");
    let elsewhere = w.dir("elsewhere");
    let out = w.run_in(&elsewhere, &["tokio"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains(&format!("no sessions for project {}", elsewhere.display())), "{}", out.stderr);
    assert!(out.stderr.contains("--all-projects"), "{}", out.stderr);
    assert_eq!(w.run_in(&elsewhere, &["tokio", "--all-projects"]).code, 0);
}

// ---------------------------------------------------------------------------------------------
// Filters.

#[test]
fn role_is_the_line_type() {
    let w = World::new("role");
    every_kind(&w, "s1", "u", ["marker summary", "marker question", "marker hook"], text("marker answer"), T5);
    assert_eq!(w.uuids(&["marker"]).len(), 4);
    for (role, uuid) in [("user", "u1"), ("assistant", "u2"), ("system", "u3"), ("summary", "u2")] {
        let out = w.run(&["marker", "-r", role, "-f", "json"]);
        assert_eq!(out.uuids(), [uuid], "{role}");
        assert_eq!(out.json()["hits"][0]["role"], role);
        assert_eq!(w.uuids(&["marker", "--role", role]), [uuid], "{role}");
    }
}

#[test]
fn session_filter_and_its_alias() {
    let w = World::new("session");
    w.session(APP, "s1", &[summary("marker summary", "u1"), user("s1", "u1", T1, "marker one")]);
    w.session(APP, "s2", &[user("s2", "u2", T2, "marker two")]);
    assert_eq!(w.uuids(&["marker"]).len(), 3);
    // A summary has no session: no session filter keeps it.
    assert_eq!(w.uuids(&["marker", "-s", "s1"]), ["u1"]);
    assert_eq!(w.uuids(&["marker", "--session", "s2"]), ["u2"]);
    assert_eq!(w.uuids(&["marker", "--session-id", "s2"]), ["u2"]);
    assert_eq!(w.uuids(&["marker", "-s", "s"]), Vec::<String>::new());
}

#[test]
fn message_id_prints_the_whole_message_from_any_project() {
    let w = tokio_world("msgid");
    w.session(
        "other",
        "s9",
        &[user("s9", "u9", T3, "first line\nsecond   line"), user("s9", "u10", T3, "u9 is mentioned")],
    );
    // No query, run in the app project: the message is in another one.
    let out = w.run(&["--message-id", "u9"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let header = format!("2025-06-03 10:00:00 user      {}/s9:1 u9", w.project("other"));
    assert_eq!(out.stdout, format!("{header}\n  first line\n  second   line\n\n"));
    let out = w.run(&["--message-id", "u404"]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
}

/// Sessions in `work/app`, `work/app/sub`, `work/app-old` and `work/other`.
fn projects_world(name: &str) -> World {
    let w = World::new(name);
    w.session(APP, "s1", &[user("s1", "u1", T1, "marker")]);
    w.session("app/sub", "s2", &[user("s2", "u2", T2, "marker")]);
    w.session("app-old", "s3", &[user("s3", "u3", T3, "marker")]);
    w.session("other", "s4", &[user("s4", "u4", T4, "marker")]);
    w
}

#[test]
fn project_is_a_prefix_of_the_project_directory() {
    let w = projects_world("project");
    let other = w.dir("other");
    let app = w.dir(APP).display().to_string();
    // `/…/work/app` is `-…-work-app`: it also names `-…-work-app-sub` and `-…-work-app-old`.
    assert_eq!(w.uuids_in(&other, &["marker", "--project", &app]), ["u3", "u2", "u1"]);
    let sub = format!("{app}/sub");
    assert_eq!(w.uuids_in(&other, &["marker", "--project", &sub]), ["u2"]);
    assert_eq!(w.uuids_in(&other, &["marker", "--project", &format!("{sub}/")]), ["u2"]);
    // A relative path is taken from the current directory.
    assert_eq!(w.uuids_in(&w.dir(""), &["marker", "--project", "app/sub"]), ["u2"]);
    assert_eq!(w.uuids_in(&w.dir("app/sub"), &["marker", "--project", ".."]), ["u3", "u2", "u1"]);
}

#[test]
fn the_default_project_is_the_current_directory() {
    let w = projects_world("defaultproject");
    assert_eq!(w.uuids_in(&w.dir(APP), &["marker"]), ["u3", "u2", "u1"]);
    assert_eq!(w.uuids_in(&w.dir("app/sub"), &["marker"]), ["u2"]);
    assert_eq!(w.uuids_in(&w.dir("other"), &["marker"]), ["u4"]);
}

#[test]
fn all_projects_searches_every_project() {
    let w = projects_world("allprojects");
    assert_eq!(w.uuids_in(&w.dir("other"), &["marker", "--all-projects"]), ["u4", "u3", "u2", "u1"]);
}

/// Hits at T1, T2, T3 (u1, u2, u3).
fn three_days(name: &str) -> World {
    let w = World::new(name);
    w.session(
        APP,
        "s1",
        &[user("s1", "u1", T1, "marker"), user("s1", "u2", T2, "marker"), user("s1", "u3", T3, "marker")],
    );
    w
}

#[test]
fn after_and_before_are_inclusive() {
    let w = three_days("window");
    let t2 = "2025-06-02T10:00:00Z";
    assert_eq!(w.uuids(&["marker", "--after", t2]), ["u3", "u2"]);
    assert_eq!(w.uuids(&["marker", "--before", t2]), ["u2", "u1"]);
    assert_eq!(w.uuids(&["marker", "--after", t2, "--before", t2]), ["u2"]);
    // The same instant in another zone.
    assert_eq!(w.uuids(&["marker", "--after", "2025-06-02T12:00:00+02:00"]), ["u3", "u2"]);
    assert_eq!(w.uuids(&["marker", "--after", "2025-06-02T10:00:00.001Z"]), ["u3"]);
    // A date is its midnight (local time; TZ=UTC here).
    assert_eq!(w.uuids(&["marker", "--after", "2025-06-02"]), ["u3", "u2"]);
    assert_eq!(w.uuids(&["marker", "--before", "2025-06-02"]), ["u1"]);
}

#[test]
fn since_counts_back_from_now() {
    let w = three_days("since");
    assert_eq!(w.uuids(&["marker", "--since", "1000000 days ago"]), ["u3", "u2", "u1"]);
    let out = w.run(&["marker", "--since", "1 hour ago"]);
    assert_eq!((out.code, out.headers()), (1, 0));
}

#[test]
fn limit_and_its_alias() {
    let w = World::new("limit");
    let lines: Vec<String> =
        [T1, T2, T3, T4, T5].iter().enumerate().map(|(i, t)| user("s1", &format!("u{}", i + 1), t, "marker")).collect();
    w.session(APP, "s1", &lines);
    for flag in ["-n", "--limit", "--max-results"] {
        let out = w.run(&["marker", flag, "2", "-f", "json"]);
        assert_eq!(out.uuids(), ["u5", "u4"], "{flag}");
        assert_eq!((out.json()["total_hits"].as_u64(), out.json()["returned"].as_u64()), (Some(5), Some(2)));
    }
    let out = w.run(&["marker", "-n", "2"]);
    assert_eq!(out.headers(), 2);
    assert!(out.stderr.starts_with("2 of 5 hits"), "{}", out.stderr);
}

#[test]
fn oldest_first_reverses_the_order() {
    let w = three_days("oldest");
    assert_eq!(w.uuids(&["marker"]), ["u3", "u2", "u1"]);
    assert_eq!(w.uuids(&["marker", "--oldest-first"]), ["u1", "u2", "u3"]);
    assert_eq!(w.uuids(&["marker", "--oldest-first", "-n", "2"]), ["u1", "u2"]);
}

// ---------------------------------------------------------------------------------------------
// Outputs.

#[test]
fn text_is_a_header_and_a_snippet_per_hit() {
    let w = tokio_world("text");
    let out = w.run(&["tokio"]);
    assert_eq!(out.code, 0);
    let p = w.project(APP);
    assert_eq!(
        out.stdout,
        format!(
            "2025-06-02 10:00:00 assistant {p}/s1:2 u2\n  Hold no lock across an await in tokio.\n\
             2025-06-01 10:00:00 user      {p}/s1:1 u1\n  How do I fix the tokio deadlock?\n"
        )
    );
    assert!(out.stderr.starts_with("2 of 2 hits in 1 files ("), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn json_has_the_counts_and_each_hit_s_fields() {
    let w = tokio_world("json");
    let out = w.run(&["deadlock", "-f", "json"]);
    assert_eq!(out.code, 0);
    let doc = out.json();
    assert_eq!(
        (doc["total_hits"].as_u64(), doc["returned"].as_u64(), doc["complete"].as_bool()),
        (Some(1), Some(1), Some(true))
    );
    let hit = &doc["hits"][0];
    let mut keys: Vec<&str> = hit.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["cwd", "file", "line", "match", "project", "role", "session_id", "snippet", "timestamp", "type", "uuid"]
    );
    let file = w.path(APP, "s1").display().to_string();
    assert_eq!(hit["file"], file.as_str());
    assert_eq!(hit["project"], w.project(APP).as_str());
    assert_eq!(hit["session_id"], "s1");
    assert_eq!(hit["uuid"], "u1");
    assert_eq!(hit["role"], "user");
    assert_eq!(hit["type"], "text");
    assert_eq!(hit["timestamp"], T1);
    assert_eq!(hit["line"], 1);
    assert_eq!(hit["cwd"], "/home/dev/app");
    let snippet = hit["snippet"].as_str().unwrap();
    assert_eq!(snippet, "How do I fix the tokio deadlock?");
    let (a, b) = (hit["match"][0].as_u64().unwrap() as usize, hit["match"][1].as_u64().unwrap() as usize);
    assert_eq!(&snippet[a..b], "deadlock");
    // A script gets only the document: the summary line is for people.
    assert_eq!(out.stderr, "");
}

#[test]
fn jsonl_is_a_hit_per_line_then_metadata() {
    let w = tokio_world("jsonl");
    let out = w.run(&["tokio", "-f", "jsonl"]);
    assert_eq!(out.code, 0);
    let lines: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert_eq!((lines[0]["uuid"].as_str(), lines[1]["uuid"].as_str()), (Some("u2"), Some("u1")));
    let meta = &lines[2]["_metadata"];
    assert_eq!(
        (meta["total_hits"].as_u64(), meta["returned"].as_u64(), meta["complete"].as_bool()),
        (Some(2), Some(2), Some(true))
    );
}

#[test]
fn full_text_prints_every_line_of_the_text() {
    let w = World::new("fulltext");
    let long = "word ".repeat(60);
    w.session(APP, "s1", &[user("s1", "u1", T1, format!("about tokio\n{long}\nthe last line"))]);
    let snippet = w.run(&["tokio"]);
    assert_eq!(snippet.stdout.lines().count(), 2);
    assert!(
        snippet.stdout.contains("  about tokio word word") && snippet.stdout.ends_with("...\n"),
        "{}",
        snippet.stdout
    );
    assert!(!snippet.stdout.contains("the last line"));
    let full = w.run(&["tokio", "--full-text"]);
    assert!(full.stdout.contains(&format!("\n  about tokio\n  {long}\n  the last line\n")), "{}", full.stdout);
}

#[test]
fn raw_prints_each_hit_s_line_as_it_is_in_the_file() {
    let w = World::new("raw");
    // Spacing, key order and escapes as no serializer would write them.
    let odd = r#"{ "type" : "user", "uuid":"u1", "sessionId":"s1", "timestamp":"2025-06-01T10:00:00Z", "message":{"role":"user","content":"caf\u00e9 \/ raw"}, "cwd":"/w", "isSidechain":false, "userType":"external", "version":"1"}"#;
    let other = user("s1", "u2", T2, "café again");
    w.session(APP, "s1", &[odd.to_owned(), other.clone()]);
    let out = w.run(&["café", "--raw"]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout, format!("{other}\n{odd}\n"));
    assert_eq!(out.stderr, "");
}

/// Four messages and a summary in two projects; the summary is first in its file, so its time is
/// the file's (T5's day at midnight).
fn stats_world(name: &str) -> World {
    let w = World::new(name);
    let answer = tool_use("toolu_1", "Bash", json!({"command": "ls"}));
    every_kind(&w, "s1", "u", ["Parser refactor", "question", "hook ran"], answer, "2025-06-05T00:00:00Z");
    w.session("other", "s2", &[user("s2", "u4", T4, tool_result("toolu_1", json!("ok"), false))]);
    w
}

#[test]
fn stats_as_json() {
    let w = stats_world("statsjson");
    let out = w.run(&["--stats", "--all-projects", "-f", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = out.json();
    assert_eq!(doc["total_hits"], 5);
    assert_eq!(doc["by_role"], json!({"user": 2, "assistant": 1, "system": 1, "summary": 1}));
    assert_eq!(doc["by_type"], json!({"summary": 1, "text": 1, "tool_use": 1, "system": 1, "tool_result": 1}));
    assert_eq!(doc["by_session"], json!({"s1": 3, "s2": 1, "": 1}));
    assert_eq!(doc["by_project"], json!({w.project(APP): 4, w.project("other"): 1}));
    assert_eq!(doc["first"], T1);
    assert_eq!(doc["last"], "2025-06-05T00:00:00+00:00");
    // With a query, only its hits are counted.
    let doc = w.run(&["--stats", "--all-projects", "-f", "json", "question OR hook"]).json();
    assert_eq!(doc["by_role"], json!({"user": 1, "system": 1}));
}

#[test]
fn stats_as_text() {
    let w = stats_world("statstext");
    let out = w.run(&["--stats", "--all-projects"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "5 messages in 3 sessions, 2 projects, 2 files searched");
    assert_eq!(lines[1], "from 2025-06-01 10:00:00 to 2025-06-05 00:00:00");
    let section = |title: &str| -> Vec<Vec<&str>> {
        let start = lines.iter().position(|l| *l == title).unwrap_or_else(|| panic!("no {title}: {}", out.stdout)) + 1;
        lines[start..].iter().take_while(|l| !l.is_empty()).map(|l| l.split_whitespace().collect()).collect()
    };
    assert_eq!(section("by role:")[0], ["2", "40.0%", "user"]);
    assert_eq!(section("by role:").len(), 4);
    assert_eq!(
        section("by project:"),
        [["4", "80.0%", w.project(APP).as_str()], ["1", "20.0%", w.project("other").as_str()]]
    );
    assert!(out.stderr.starts_with("5 hits in 2 files"), "{}", out.stderr);
}

#[test]
fn colors_only_on_a_terminal_without_no_color() {
    let w = tokio_world("color");
    let esc = "\x1b[";
    assert!(w.on_terminal(&["tokio"], &[]).contains(esc), "a terminal gets colors");
    assert!(!w.on_terminal(&["tokio", "--no-color"], &[]).contains(esc));
    assert!(!w.on_terminal(&["tokio"], &[("NO_COLOR", "1")]).contains(esc));
    let piped = w.run(&["tokio"]);
    assert!(piped.headers() == 2 && !piped.stdout.contains(esc), "{}", piped.stdout);
}

#[test]
fn completions_for_each_shell() {
    let w = World::new("completions");
    for (shell, marker) in
        [("bash", "-o default weft-search"), ("zsh", "#compdef weft-search"), ("fish", "complete -c weft-search")]
    {
        let out = w.run(&["--completions", shell]);
        assert_eq!(out.code, 0, "{shell}: {}", out.stderr);
        assert!(out.stdout.contains(marker), "{shell}: {}", &out.stdout[..out.stdout.len().min(300)]);
        assert!(out.stdout.contains("all-projects"), "{shell}");
        assert_eq!(w.run(&["--completion", shell]).stdout, out.stdout, "{shell}");
    }
    assert_eq!(w.run(&["--completions", "tcsh"]).code, 2);
}

// ---------------------------------------------------------------------------------------------
// What is searched (as ccms): a tool_use's name and one input field, tool results, system and
// summary text, and the session id and uuid.

/// The uuids that `query` finds in a world of one session of these lines, sorted.
fn found(w: &World, query: &str) -> Vec<String> {
    let mut u = w.uuids(&[query]);
    u.sort();
    u
}

#[test]
fn tool_use_is_its_name_and_one_input_field() {
    let w = World::new("tooluse");
    let command = "cargo build --release --features alpha,beta,gamma && echo past-fifty";
    assert!(command.find("past-fifty").unwrap() > 50);
    w.session(
        APP,
        "s1",
        &[
            assistant("s1", "u1", T1, tool_use("t1", "Bash", json!({"command": command, "description": "bashdesc"}))),
            assistant("s1", "u2", T1, tool_use("t2", "Read", json!({"file_path": "/home/dev/secretdir/main.rs"}))),
            assistant("s1", "u3", T1, tool_use("t3", "Grep", json!({"pattern": "fn\\s+grepword", "path": "/src"}))),
            assistant(
                "s1",
                "u4",
                T1,
                tool_use("t4", "Task", json!({"description": "find the flaky test", "prompt": "hiddenprompt"})),
            ),
        ],
    );
    // Bash: the command's first 50 characters, then `...`.
    assert_eq!(found(&w, "\"Bash: cargo build\""), ["u1"]);
    assert_eq!(found(&w, "past-fifty"), Vec::<String>::new());
    assert_eq!(found(&w, "bashdesc"), Vec::<String>::new());
    let full = w.run(&["Bash", "--full-text"]).stdout;
    assert!(full.contains(&format!("  Bash: {}...\n", &command[..50])), "{full}");
    // Read: the file name only.
    assert_eq!(found(&w, "\"Read: main.rs\""), ["u2"]);
    assert_eq!(found(&w, "secretdir"), Vec::<String>::new());
    // Grep: the pattern.
    assert_eq!(found(&w, "\"Grep: fn\\s+grepword\""), ["u3"]);
    // Any other tool: the description, not the rest of the input.
    assert_eq!(found(&w, "\"Task: find the flaky\""), ["u4"]);
    assert_eq!(found(&w, "hiddenprompt"), Vec::<String>::new());
}

#[test]
fn tool_results_are_their_text_or_a_placeholder() {
    let w = World::new("toolresult");
    let image =
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}});
    w.session(
        APP,
        "s1",
        &[
            user("s1", "u1", T1, tool_result("toolu_01", json!("stringresult output"), false)),
            user(
                "s1",
                "u2",
                T1,
                tool_result(
                    "toolu_02",
                    json!([{"type": "text", "text": "first part"}, {"type": "text", "text": "arrayresult"}]),
                    false,
                ),
            ),
            user(
                "s1",
                "u3",
                T1,
                tool_result("toolu_03", json!([{"type": "text", "text": "hiddenmixed"}, image]), false),
            ),
            user("s1", "u4", T1, tool_result("toolu_04", json!(""), true)),
            user("s1", "u5", T1, json!([{"type": "text", "text": "look"}, image])),
        ],
    );
    assert_eq!(found(&w, "stringresult"), ["u1"]);
    assert_eq!(found(&w, "'first part\\narrayresult'"), ["u2"]);
    // Text mixed with an image is a JSON value: a placeholder, its text not searched.
    assert_eq!(found(&w, "hiddenmixed"), Vec::<String>::new());
    assert_eq!(found(&w, "'[Tool Result: toolu_03 - JSON value]'"), ["u3"]);
    assert_eq!(found(&w, "'[Tool Result: toolu_04 (error)]'"), ["u4"]);
    // An id is only searched inside a placeholder.
    assert_eq!(found(&w, "toolu_01"), Vec::<String>::new());
    assert_eq!(found(&w, "'look\n[Image]'"), ["u5"]);
}

#[test]
fn system_and_summary_text_are_searched() {
    let w = World::new("systemsummary");
    let f = w.session(
        APP,
        "s1",
        &[summary("Refactor the parser", "u1"), system("s1", "u1", T1, "Running PostToolUse hook")],
    );
    set_mtime(&f, T2);
    let out = w.run(&["PostToolUse", "-f", "json"]);
    assert_eq!((out.uuids(), out.json()["hits"][0]["role"].as_str()), (vec!["u1".to_owned()], Some("system")));
    let out = w.run(&["refactor", "-f", "json"]);
    assert_eq!((out.uuids(), out.json()["hits"][0]["role"].as_str()), (vec!["u1".to_owned()], Some("summary")));
}

#[test]
fn a_session_id_and_a_uuid_match_every_line_they_are_on() {
    let w = World::new("ids");
    every_kind(&w, "sess-alpha", "uuid-", ["a summary", "question", "hook"], text("answer"), T4);
    w.session(APP, "sess-beta", &[user("sess-beta", "uuid-4", T1, "other")]);
    // Every message of the session (a summary has no session id; its leafUuid is its uuid).
    assert_eq!(found(&w, "sess-alpha"), ["uuid-1", "uuid-2", "uuid-3"]);
    assert_eq!(found(&w, "sess"), ["uuid-1", "uuid-2", "uuid-3", "uuid-4"]);
    assert_eq!(w.uuids(&["uuid-2", "-r", "assistant"]), ["uuid-2"]);
    assert_eq!(w.uuids(&["uuid-2", "-r", "summary"]), ["uuid-2"]);
}

// ---------------------------------------------------------------------------------------------
// Bad input: counted, reported, and the rest of the answer still given.

/// `needle` at lines 1 and 4; lines 2 and 3 are not JSON and not UTF-8, and hold `needle`.
fn invalid_world(name: &str) -> (World, PathBuf) {
    let w = World::new(name);
    let mut bytes = user("s1", "u1", T1, "needle one").into_bytes();
    bytes.extend_from_slice(b"\n{\"type\":\"user\",\"message\":{\"content\":\"needle cut\n");
    bytes.extend_from_slice(b"{\"type\":\"user\",\"message\":{\"content\":\"needle \xff\xfe\"}}\n");
    bytes.extend_from_slice(user("s1", "u4", T4, "needle four").as_bytes());
    let f = w.bytes(APP, "s1", &bytes);
    (w, f)
}

#[test]
fn invalid_lines_that_could_match_make_the_answer_incomplete() {
    let (w, f) = invalid_world("invalid");
    let out = w.run(&["needle"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.headers(), 2);
    let f = f.display();
    let want = format!(
        "INCOMPLETE: 0 files not read, 2 lines that could match not read (2 not valid JSON/UTF-8 (first at {f}:2, {f}:3), 0 longer than 64 MB)"
    );
    assert!(out.stderr.lines().any(|l| l == want), "{}", out.stderr);
    let doc = w.run(&["needle", "-f", "json"]).json();
    assert_eq!(
        (doc["invalid_lines"].as_u64(), doc["complete"].as_bool(), doc["total_hits"].as_u64()),
        (Some(2), Some(false), Some(2))
    );
}

#[test]
fn strict_makes_an_incomplete_answer_exit_2() {
    let (w, _) = invalid_world("strict");
    let out = w.run(&["needle", "--strict"]);
    assert_eq!(out.code, 2);
    assert_eq!(out.headers(), 2, "the hits are still printed");
    assert!(out.stderr.contains("INCOMPLETE"));
    // A complete answer is not affected.
    assert_eq!(w.run(&["four", "--strict"]).code, 0);
}

#[test]
fn invalid_lines_that_cannot_match_are_not_counted() {
    let w = World::new("invalidnomatch");
    let mut bytes = user("s1", "u1", T1, "needle").into_bytes();
    bytes.extend_from_slice(b"\n{\"type\":\"user\",\"message\":{\"content\":\"haystack \xff\n");
    w.bytes(APP, "s1", &bytes);
    let out = w.run(&["needle", "--strict"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("INCOMPLETE"), "{}", out.stderr);
    // The same line is counted when it could hold a hit.
    let out = w.run(&["haystack"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("INCOMPLETE: 0 files not read, 1 lines that could match not read"), "{}", out.stderr);
}

#[test]
fn a_dangling_link_is_a_skipped_file() {
    let w = tokio_world("dangling");
    let link = w.path(APP, "gone");
    std::os::unix::fs::symlink(w.root.join("nowhere.jsonl"), &link).unwrap();
    let out = w.run(&["tokio"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.headers(), 2);
    let want = format!("weft-search: skipped {}: not found (deleted during the search?)", link.display());
    assert!(out.stderr.lines().any(|l| l == want), "{}", out.stderr);
    assert!(out.stderr.contains("INCOMPLETE: 1 files not read, 0 lines"), "{}", out.stderr);
    assert_eq!(w.run(&["tokio", "--strict"]).code, 2);
}

#[test]
fn a_skip_in_another_project_does_not_make_the_answer_incomplete() {
    let w = tokio_world("skipelsewhere");
    std::os::unix::fs::symlink(w.root.join("nowhere.jsonl"), w.path("other", "gone")).unwrap();
    let out = w.run(&["tokio", "--strict"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("INCOMPLETE"), "{}", out.stderr);
    assert!(w.run(&["tokio", "--all-projects"]).stderr.contains("INCOMPLETE: 1 files not read"));
}

#[test]
fn an_unreadable_file_is_a_skipped_file() {
    use std::os::unix::fs::PermissionsExt;
    let w = tokio_world("unreadable");
    let f = w.session(APP, "locked", &[user("locked", "u9", T3, "tokio locked")]);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    let out = w.run(&["tokio"]);
    if is_root() {
        // root reads any file: the mode cannot make it unreadable.
        assert_eq!(out.headers(), 3);
        return;
    }
    assert_eq!(out.code, 0);
    assert_eq!(out.headers(), 2);
    let want = format!("weft-search: skipped {}: permission denied", f.display());
    assert!(out.stderr.lines().any(|l| l == want), "{}", out.stderr);
    assert!(out.stderr.contains("INCOMPLETE: 1 files not read"), "{}", out.stderr);
}

#[test]
fn a_directory_named_like_a_session_is_walked_not_read() {
    let w = tokio_world("dirjsonl");
    let dir = w.path(APP, "x");
    std::fs::create_dir_all(&dir).unwrap();
    // As ccms, files below a project directory's subdirectories (subagents) are searched too.
    std::fs::write(dir.join("inner.jsonl"), user("s9", "u9", T3, "tokio inside") + "\n").unwrap();
    let out = w.run(&["tokio", "--strict", "-f", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.uuids(), ["u9", "u2", "u1"]);
    assert_eq!(out.json()["skipped_files"], json!([]));
}

#[test]
fn an_oversized_line_is_skipped_and_the_rest_answered() {
    let w = World::new("oversized");
    // Just over the limit: the line ends in the same read as the bytes that cross it.
    let huge = user("s1", "u2", T2, "needle HUGE").replace("HUGE", &"x".repeat(weft_search::search::MAX_LINE));
    let lines = [user("s1", "u1", T1, "needle small"), huge, user("s1", "u3", T3, "needle after")];
    w.session(APP, "s1", &lines);
    let out = w.run(&["needle"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.headers(), 2, "{}", out.stdout);
    assert!(out.stdout.contains(" u1\n") && out.stdout.contains(" u3\n"), "{}", out.stdout);
    let want =
        "INCOMPLETE: 0 files not read, 1 lines that could match not read (0 not valid JSON/UTF-8, 1 longer than 64 MB)";
    assert!(out.stderr.lines().any(|l| l == want), "{}", out.stderr);
}
