//! `weft::process`: output, piped stdin/stdout, exit codes, kill, try_wait, kill_on_drop,
//! spawn errors, and no zombies (checked in /proc/<pid>/stat).

mod support;

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::process::Command;

/// The process state letter from /proc/<pid>/stat, `None` once the pid is gone.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// Waits (bounded, generous for valgrind) until `pid` no longer exists or is no zombie of ours.
async fn until_reaped(pid: u32) -> bool {
    for _ in 0..2000 {
        match proc_state(pid) {
            None => return true,
            Some(_) => weft::time::sleep(Duration::from_millis(10)).await,
        }
    }
    false
}

#[test]
fn output_collects_stdout_stderr_and_exit_code() {
    for (flavor, rt) in support::flavors() {
        rt.block_on(async {
            let out = Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]).output().await.unwrap();
            assert_eq!(out.stdout, b"out\n", "{flavor}");
            assert_eq!(out.stderr, b"err\n");
            assert_eq!(out.status.code(), Some(3));
            assert!(Command::new("true").status().await.unwrap().success());
        });
    }
}

#[test]
fn piped_stdin_and_stdout_stream_concurrently() {
    support::mt(2).block_on(async {
        let mut child = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let data: Vec<u8> = (0..2_000_000u32).map(|i| (i % 253) as u8).collect();
        let expected = data.clone();
        // 2 MB is far more than a pipe holds: writing and reading must overlap.
        let writer = weft::spawn(async move {
            stdin.write_all(&data).await.unwrap();
            stdin.shutdown().await.unwrap();
        });
        let mut back = Vec::new();
        stdout.read_to_end(&mut back).await.unwrap();
        writer.await.unwrap();
        assert_eq!(back, expected);
        assert!(child.wait().await.unwrap().success());
        assert_eq!(child.id(), None, "no pid once collected");
    });
}

#[test]
fn a_child_spawned_in_one_runtime_is_awaited_in_another() {
    // The child outlives the runtime that spawned it (and registered its pidfd); waiting from a
    // second runtime must not fail with "runtime shut down" (tokio's
    // process_change_of_runtime test).
    for (flavor, spawner) in support::flavors() {
        let mut child =
            spawner.block_on(async { Command::new("sh").args(["-c", "sleep 0.3; exit 7"]).spawn().unwrap() });
        drop(spawner);
        let status = support::mt(2).block_on(async { child.wait().await }).unwrap_or_else(|e| panic!("{flavor}: {e}"));
        assert_eq!(status.code(), Some(7), "{flavor}");
    }
}

#[test]
fn spawning_a_missing_program_is_an_io_error() {
    support::ct().block_on(async {
        let err = Command::new("/nonexistent/weft-no-such-program").spawn().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(Command::new("/nonexistent/weft-no-such-program").output().await.is_err());
    });
}

#[test]
fn kill_try_wait_and_start_kill() {
    for (_flavor, rt) in support::flavors() {
        rt.block_on(async {
            let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
            let pid = child.id().unwrap();
            assert!(child.try_wait().unwrap().is_none(), "still running");
            child.kill().await.unwrap();
            let status = child.try_wait().unwrap().expect("collected by kill");
            assert_eq!(status.signal(), Some(libc::SIGKILL));
            // Already collected: killing again is a no-op, not an error (tokio 1.54).
            child.start_kill().unwrap();
            child.kill().await.unwrap();
            assert!(until_reaped(pid).await);

            let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
            child.start_kill().unwrap();
            assert_eq!(child.wait().await.unwrap().signal(), Some(libc::SIGKILL));
        });
    }
}

#[test]
fn kill_on_drop_kills_and_reaps() {
    support::mt(2).block_on(async {
        let child = Command::new("sleep").arg("1000").kill_on_drop(true).spawn().unwrap();
        let pid = child.id().unwrap();
        drop(child);
        assert!(until_reaped(pid).await, "killed and reaped, not left as a zombie");
    });
}

#[test]
fn a_child_that_exits_while_nobody_waits_is_reaped() {
    support::ct().block_on(async {
        let child = Command::new("true").spawn().unwrap();
        let pid = child.id().unwrap();
        // Let it exit while we hold the Child without waiting: it is a zombie (ours) now or soon.
        for _ in 0..2000 {
            if proc_state(pid) == Some('Z') {
                break;
            }
            weft::time::sleep(Duration::from_millis(5)).await;
        }
        drop(child);
        assert!(until_reaped(pid).await, "no zombie after drop");

        // Dropped while still running (no kill_on_drop): reaped once it exits on its own.
        let child = Command::new("sleep").arg("0.05").spawn().unwrap();
        let pid = child.id().unwrap();
        drop(child);
        assert!(until_reaped(pid).await, "no zombie after the orphan exits");
    });
}
