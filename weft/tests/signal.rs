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

#[test]
fn hello_server_example_serves_and_stops_on_ctrl_c() {
    // Built by cargo for tests of this package? Only if present; otherwise skip quietly.
    let exe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/examples/hello_server");
    let target = std::env::var("CARGO_TARGET_DIR").map(std::path::PathBuf::from).ok();
    let exe = match target {
        Some(t) => t.join("debug/examples/hello_server"),
        None => exe,
    };
    if !exe.exists() {
        eprintln!("skipping: {} not built", exe.display());
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
