//! `weft-lab console` in a real terminal: tmux runs the console (200×50) against
//! `weft-lab console-demo`, and the test reads the screen with `capture-pane` until it shows the
//! demo's slow task (spawn location FILE:LINE, as the demo's source says) in the "slowest polls"
//! panel and the worker count (2). Then keys: `a` sorts by age, `p` by poll time, `q` quits.
//! Every wait polls the screen with a 60 s deadline; no timing is asserted (the time until the
//! slow task shows is printed). Skipped with a message when tmux is missing, unless
//! `WEFT_CONSOLE_REQUIRE_TMUX` is set (as `.ci/run` does after installing it).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_weft-lab");

/// A private tmux server (its own socket) and the demo process, both ended on drop.
struct Cleanup {
    socket: String,
    demo: Child,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
        let _ = self.demo.kill();
        let _ = self.demo.wait();
    }
}

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux").args(["-L", socket]).args(args).output().expect("tmux runs")
}

fn screen(socket: &str) -> String {
    String::from_utf8_lossy(&tmux(socket, &["capture-pane", "-p", "-t", "console"]).stdout).into_owned()
}

fn wait_for(socket: &str, what: &str, cond: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = screen(socket);
        if cond(&s) {
            return s;
        }
        assert!(Instant::now() < deadline, "the console never showed {what}; last screen:\n{s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The rows of the "slowest polls" panel: from its title to the next panel's title.
fn slowest_panel(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines.iter().position(|l| l.contains("slowest polls")).unwrap_or(lines.len());
    let end = lines.iter().skip(start).position(|l| l.contains("tasks (")).map_or(lines.len(), |i| start + i);
    lines[start.min(end)..end].join("\n")
}

#[test]
fn console_shows_the_slow_task_and_the_workers_under_tmux() {
    let has_tmux = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if !has_tmux {
        assert!(
            std::env::var_os("WEFT_CONSOLE_REQUIRE_TMUX").is_none(),
            "tmux is not installed and WEFT_CONSOLE_REQUIRE_TMUX is set"
        );
        eprintln!("SKIPPED console under tmux: tmux not installed (apt-get install tmux)");
        return;
    }
    let mut demo = Command::new(BIN)
        .args(["console-demo", "--seconds", "300"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("console-demo starts");
    let mut lines = BufReader::new(demo.stdout.take().unwrap()).lines();
    let socket = format!("weft-console-test-{}", std::process::id());
    let cleanup = Cleanup { socket: socket.clone(), demo };
    let url = lines.next().unwrap().unwrap().strip_prefix("metrics: ").expect("the demo prints its URL").to_string();
    let slow =
        lines.next().unwrap().unwrap().strip_prefix("slow task: ").expect("the demo prints FILE:LINE").to_string();
    assert!(slow.starts_with("lab/src/console_demo/mod.rs:"), "{slow}");

    let started = Instant::now();
    let command = format!("{BIN} console {url}");
    let out = tmux(&socket, &["new-session", "-d", "-s", "console", "-x", "200", "-y", "50", &command]);
    assert!(out.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&out.stderr));

    let s = wait_for(&socket, "the slow task in the slowest polls panel and 2 workers", |s| {
        s.contains("workers: 2") && slowest_panel(s).contains(&slow)
    });
    eprintln!("the console showed {slow} after {:?}", started.elapsed());
    assert!(s.contains("sorted by poll time"), "{s}");

    tmux(&socket, &["send-keys", "-t", "console", "a"]);
    wait_for(&socket, "the age order after `a`", |s| s.contains("sorted by age"));
    tmux(&socket, &["send-keys", "-t", "console", "p"]);
    wait_for(&socket, "the poll-time order after `p`", |s| s.contains("sorted by poll time"));
    tmux(&socket, &["send-keys", "-t", "console", "q"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while tmux(&socket, &["has-session", "-t", "console"]).status.success() {
        assert!(Instant::now() < deadline, "`q` did not end the console");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(cleanup);
}
