//! The interactive search in a real terminal: tmux runs `weft-search` (no query) on a small
//! session directory, the test types into it with `send-keys` and reads the screen with
//! `capture-pane`. It checks search-as-you-type (every keystroke's scan cancelled or finished,
//! the final query's hits shown), Tab's role filter, the message screen, a copy key's
//! confirmation, the session screen and `claude --resume` printed on exit. Every wait polls the
//! screen with a 30 s deadline; no timing is asserted. Skipped with a message when tmux is
//! missing, unless `WEFT_CONSOLE_REQUIRE_TMUX` is set (as `.ci/run` does after installing it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_weft-search");

struct Tmux {
    socket: String,
    dir: PathBuf,
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux").args(["-L", &self.socket]).args(args).output().expect("tmux runs")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "search"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "search"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    fn wait_for(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let s = self.screen();
            if cond(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "the search never showed {what}; last screen:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn line(kind: &str, session: &str, uuid: &str, ts: &str, content: &str) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w/app","sessionId":"{session}","version":"1.0.0","type":"{kind}","message":{{"role":"{kind}","content":{content}}},"uuid":"{uuid}","timestamp":"{ts}"}}"#
    )
}

fn write_sessions(projects: &Path) {
    let dir = projects.join("-w-app");
    std::fs::create_dir_all(&dir).unwrap();
    let mut a = Vec::new();
    a.push(line("user", "sess-aaa", "u1", "2025-03-01T10:00:00Z", r#""how do I fix the zebra deadlock""#));
    a.push(line(
        "assistant",
        "sess-aaa",
        "u2",
        "2025-03-01T10:00:05Z",
        r#"[{"type":"text","text":"The zebra deadlock comes from lock order.\nSecond line of the answer."}]"#,
    ));
    for i in 0..50 {
        a.push(line("user", "sess-aaa", &format!("f{i}"), "2025-03-01T09:00:00Z", r#""filler words only""#));
    }
    std::fs::write(dir.join("sess-aaa.jsonl"), a.join("\n") + "\n").unwrap();
    let b = [line("user", "sess-bbb", "v1", "2025-02-01T10:00:00Z", r#""an older zebra question""#)];
    std::fs::write(dir.join("sess-bbb.jsonl"), b.join("\n") + "\n").unwrap();
}

#[test]
fn interactive_search_under_tmux() {
    let has_tmux = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if !has_tmux {
        assert!(std::env::var_os("WEFT_CONSOLE_REQUIRE_TMUX").is_none(), "tmux is required here but missing");
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("weft-search-tui-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let home = dir.join("home");
    write_sessions(&home.join(".claude/projects"));
    let log = dir.join("latency.log");
    let t = Tmux { socket: format!("weft-search-test-{}", std::process::id()), dir: dir.clone() };
    let cmd = format!(
        "env HOME={} WEFT_SEARCH_TUI_LOG={} {BIN} --all-projects; echo EXITED; sleep 30",
        home.display(),
        log.display()
    );
    assert!(t.run(&["new-session", "-d", "-s", "search", "-x", "160", "-y", "40", &cmd]).status.success());

    // The empty query shows every message, newest first.
    let s = t.wait_for("the first hits", |s| s.contains("hits (") && s.contains("filler words only"));
    assert!(s.contains("53 hits"), "{s}");

    // Type a query key by key: each keystroke starts a search; the last one's hits show.
    for c in ["z", "e", "b", "r", "a"] {
        t.keys(&[c]);
    }
    let s = t.wait_for("the zebra hits", |s| s.contains("3 hits (3 shown)"));
    assert!(s.contains("zebra deadlock") && !s.contains("filler"), "{s}");
    // Newest first: the assistant's answer (10:00:05) is above the question (10:00:00).
    let (answer, question) = (s.find("comes from lock order").unwrap(), s.find("how do I fix").unwrap());
    assert!(answer < question, "{s}");

    // Tab: user messages only.
    t.keys(&["Tab"]);
    let s = t.wait_for("the user filter", |s| s.contains("· user ·") && s.contains("2 hits (2 shown)"));
    assert!(!s.contains("comes from lock order"), "{s}");
    t.keys(&["Tab", "Tab", "Tab", "Tab"]);
    t.wait_for("all roles again", |s| s.contains("all roles") && s.contains("3 hits (3 shown)"));

    // Enter: the whole message, both of its lines.
    t.keys(&["Enter"]);
    let s = t.wait_for("the message screen", |s| s.contains("assistant · sess-aaa · line 2"));
    // The whole text, its newline kept (the hit list showed it on one line).
    let first = s.lines().position(|l| l.contains("The zebra deadlock comes from lock order.")).expect("first line");
    assert!(s.lines().nth(first + 1).is_some_and(|l| l.contains("Second line of the answer.")), "{s}");
    t.keys(&["i"]);
    t.wait_for("the copy confirmation", |s| s.contains("copied the session id (8 bytes) to the clipboard"));

    // s: the session, in order.
    t.keys(&["s"]);
    let s = t.wait_for("the session screen", |s| s.contains("session sess-aaa · 52 messages"));
    assert!(s.find("how do I fix").unwrap() < s.find("The zebra deadlock").unwrap(), "{s}");
    t.keys(&["Escape"]);
    t.wait_for("the search screen", |s| s.contains("3 hits (3 shown)"));

    // Ctrl+R: quit and print the resume command for the selected hit.
    t.keys(&["C-r"]);
    let s = t.wait_for("the resume line", |s| s.contains("EXITED"));
    assert!(s.contains("claude --resume sess-aaa"), "{s}");

    // Every search logged its end: done, or cancelled by the next keystroke; the last is the
    // final query's, with its 3 hits.
    let log = std::fs::read_to_string(&log).unwrap();
    let typed: Vec<&str> = log.lines().filter(|l| l.starts_with("done") || l.starts_with("cancelled")).collect();
    assert!(typed.len() >= 6, "{log}");
    assert!(log.lines().any(|l| l.starts_with("done query=\"zebra\"") && l.ends_with("hits=3")), "{log}");
    assert!(log.lines().any(|l| l.starts_with("first query=\"zebra\"")), "{log}");
}
