//! `weft::signal::ctrl_c` completes on SIGINT (own test binary: it installs a process-wide
//! handler).

use std::time::{Duration, Instant};

#[test]
fn ctrl_c_completes_on_sigint_on_both_flavors() {
    for rt in [
        weft::runtime::Builder::new_current_thread().enable_all().build().unwrap(),
        weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap(),
    ] {
        rt.block_on(async {
            let ctrl_c = weft::signal::ctrl_c();
            let waiter = weft::spawn(ctrl_c);
            weft::time::sleep(Duration::from_millis(20)).await;
            assert!(!waiter.is_finished(), "no signal yet");
            // SAFETY (test): the handler is installed, so SIGINT does not kill the process.
            // SAFETY: raise(2) takes a signal number and touches no memory of ours.
            unsafe { libc::raise(libc::SIGINT) };
            weft::time::timeout(Duration::from_secs(5), waiter).await.expect("woken by SIGINT").unwrap().unwrap();
        });
    }
}

/// Set (as `.ci/run` does) to make a missing `hello_server` example fail
/// `hello_server_example_serves_and_stops_on_ctrl_c` instead of skipping it.
const REQUIRE_EXAMPLE: &str = "WEFT_SIGNAL_REQUIRE_EXAMPLE";

#[test]
fn hello_server_example_serves_and_stops_on_ctrl_c() {
    // Cargo builds the examples for `cargo test` of the whole package (not for `--test
    // signal` alone), next to the test binaries' `deps/` folder, whatever the target
    // directory and profile.
    let exe = std::env::current_exe()
        .expect("the test binary's path")
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lies in <target>/<profile>/deps")
        .join("examples/hello_server");
    if !exe.exists() {
        let why = format!("{} not built (`cargo build -p weft --example hello_server`)", exe.display());
        assert!(std::env::var_os(REQUIRE_EXAMPLE).is_none(), "{why}, and {REQUIRE_EXAMPLE} is set");
        eprintln!("SKIPPED: {why}");
        return;
    }
    use std::io::{BufRead, Read, Write};
    let mut child = std::process::Command::new(&exe).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening on ").expect("prints `listening on ADDR`").to_owned();
    assert!(addr.starts_with("127.0.0.1:"));
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200") && resp.ends_with("Hello, world!"), "{resp}");
    // SAFETY (test): sends SIGINT to our own child process.
    // SAFETY: kill(2) takes a pid and a signal number and touches no memory of ours.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "server did not stop on Ctrl-C");
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("stopped in {:?}", start.elapsed());
}
