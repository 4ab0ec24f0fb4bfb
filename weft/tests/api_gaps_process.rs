//! tokio 1.54 APIs of `process` that weft lacked: `ChildStdin`/`ChildStdout`/`ChildStderr`
//! `from_std` (wrapping std's pipe ends), `into_owned_fd` (deregistered, back in blocking
//! mode) and `AsFd`. Blocking mode is read from `/proc/self/fdinfo` (Linux).

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::process::Stdio;

use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use weft::runtime::{Builder, Runtime};

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        ("current_thread", Builder::new_current_thread().enable_all().build().unwrap()),
        ("multi_thread", Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()),
    ]
}

/// Whether `fd` has `O_NONBLOCK` set, from the `flags:` line (octal) of its fdinfo.
fn is_nonblocking(fd: RawFd) -> bool {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap();
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).expect("fdinfo has a flags line");
    let flags = i32::from_str_radix(flags.trim(), 8).unwrap();
    flags & libc::O_NONBLOCK != 0
}

#[test]
fn from_std_wraps_a_std_childs_pipes() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let mut child = std::process::Command::new("sh")
                .args(["-c", "read line; echo \"out:$line\"; echo err >&2"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = ChildStdin::from_std(child.stdin.take().unwrap()).unwrap();
            let mut stdout = ChildStdout::from_std(child.stdout.take().unwrap()).unwrap();
            let mut stderr = ChildStderr::from_std(child.stderr.take().unwrap()).unwrap();
            assert!(is_nonblocking(stdout.as_raw_fd()), "{name}: from_std sets non-blocking mode");
            assert_eq!(stdin.as_fd().as_raw_fd(), stdin.as_raw_fd(), "{name}");
            assert_eq!(stderr.as_fd().as_raw_fd(), stderr.as_raw_fd(), "{name}");

            stdin.write_all(b"hello\n").await.unwrap();
            drop(stdin);
            let mut out = String::new();
            stdout.read_to_string(&mut out).await.unwrap();
            let mut err = String::new();
            stderr.read_to_string(&mut err).await.unwrap();
            assert_eq!((out.as_str(), err.as_str()), ("out:hello\n", "err\n"), "{name}");
            assert!(child.wait().unwrap().success(), "{name}");
        });
    }
}

#[test]
fn into_owned_fd_returns_a_blocking_fd_that_still_reads() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut child = Command::new("sh")
            .args(["-c", "read line; echo \"got:$line\""])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let out_fd = stdout.as_fd().as_raw_fd();
        assert!(is_nonblocking(out_fd));

        let stdin = stdin.into_owned_fd().unwrap();
        assert!(!is_nonblocking(stdin.as_raw_fd()), "into_owned_fd restores blocking mode");
        let stdout = stdout.into_owned_fd().unwrap();
        assert_eq!(stdout.as_raw_fd(), out_fd, "the same fd, handed over");
        assert!(!is_nonblocking(out_fd));

        // Plain blocking I/O on the handed-over fds (a blocking read waits for the child).
        let mut stdin = std::fs::File::from(stdin);
        std::io::Write::write_all(&mut stdin, b"x\n").unwrap();
        drop(stdin);
        let mut out = String::new();
        std::fs::File::from(stdout).read_to_string(&mut out).unwrap();
        assert_eq!(out, "got:x\n");
        assert!(child.wait().await.unwrap().success());
    });
}

#[test]
fn stderr_into_owned_fd_and_a_shut_stdin_has_no_fd() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut child = Command::new("sh")
            .args(["-c", "cat >/dev/null; echo done >&2"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.shutdown().await.unwrap();
        // weft's shutdown closes the pipe (documented on `ChildStdin`): nothing to hand over.
        let err = stdin.into_owned_fd().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);

        let stderr = child.stderr.take().unwrap().into_owned_fd().unwrap();
        let mut text = String::new();
        std::fs::File::from(stderr).read_to_string(&mut text).unwrap();
        assert_eq!(text, "done\n");
        assert!(child.wait().await.unwrap().success());
    });
}
