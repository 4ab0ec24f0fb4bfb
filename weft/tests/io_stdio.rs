//! `weft::io::{stdin, stdout, stderr}`: this test binary re-runs itself as a child whose
//! stdin/stdout/stderr are pipes, so the real process streams are exercised.

use std::io::Write;
use std::process::{Command, Stdio};

use weft::io::{AsyncReadExt, AsyncWriteExt};

const CHILD_ENV: &str = "WEFT_STDIO_CHILD";

#[test]
fn stdio_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return; // only meaningful inside the child started below
    }
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let mut input = Vec::new();
        weft::io::stdin().read_to_end(&mut input).await.unwrap();
        let mut out = weft::io::stdout();
        out.write_all(b"<<").await.unwrap();
        out.write_all(&input.to_ascii_uppercase()).await.unwrap();
        out.write_all(b">>").await.unwrap();
        out.flush().await.unwrap();
        let mut err = weft::io::stderr();
        err.write_all(format!("read {} bytes\n", input.len()).as_bytes()).await.unwrap();
        err.flush().await.unwrap();
    });
}

#[test]
fn stdin_to_stdout_through_the_blocking_pool() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let input: Vec<u8> = (0..300_000u32).map(|i| b"abcdefghij\n"[(i % 11) as usize]).collect();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "stdio_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = input.clone();
    let writer = std::thread::spawn(move || stdin.write_all(&feed).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut want = b"<<".to_vec();
    want.extend(input.to_ascii_uppercase());
    want.extend(b">>");
    let stdout = out.stdout;
    let found = stdout.windows(want.len()).any(|w| w == want.as_slice());
    assert!(found, "stdout did not carry the uppercased input intact");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("read {} bytes", input.len())));
}

/// As tokio: once shutdown has closed the blocking pool, a write (reported done before it runs)
/// and a flush fail at once with the runtime-shutdown error instead of claiming success.
#[test]
fn stdout_and_stderr_fail_once_the_runtime_is_shut_down() {
    for multi in [false, true] {
        let rt = if multi {
            weft::runtime::Builder::new_multi_thread().worker_threads(1).build().unwrap()
        } else {
            weft::runtime::Builder::new_current_thread().build().unwrap()
        };
        let handle = rt.handle().clone();
        // Alive: a flush runs on the pool and succeeds.
        handle.block_on(async { weft::io::stderr().flush().await }).unwrap();
        rt.shutdown_timeout(std::time::Duration::from_secs(10));
        let err = handle.block_on(async { weft::io::stdout().write_all(b"x").await }).unwrap_err();
        assert!(weft::runtime::is_rt_shutdown_err(&err), "{err}");
        let err = handle.block_on(async { weft::io::stderr().flush().await }).unwrap_err();
        assert!(weft::runtime::is_rt_shutdown_err(&err), "{err}");
    }
}
