//! Idle keep-alive connections held open beside a measured load (`--idle-connections` of
//! `http-hello` and `tcp-echo`): does a runtime's throughput or CPU per request degrade when
//! thousands of connections sit idle in its poller, its task lists and its memory?
//!
//! The client ends live in a separate helper process (`weft-lab __idle-holder`) with plain
//! blocking std sockets: no runtime polls them, so they cost the measured processes neither
//! CPU nor file descriptors, and the server's CPU per request stays the honest figure. The
//! helper speaks a line protocol on its stdin/stdout:
//! 1. it connects `count` sockets to the server under test (loopback only); with `--http` it
//!    completes one validated keep-alive `GET /` on each (so the server holds a parked
//!    connection task, not merely an accepted socket), in chunks so the listen backlog never
//!    overflows; then it prints `open N` (or `error: …` and exits non-zero);
//! 2. on the line `check` it peeks every socket without blocking — still connected and
//!    silent counts as alive; closed, reset or unexpected bytes do not — and prints `alive K`;
//! 3. it exits when its stdin closes (the parent also kills it when its [`Holder`] drops).
//!
//! Architecture Invariant: a row with idle connections is reported only after the helper
//! counted every one of them alive at the end of the round ([`expect_all_alive`]); a
//! collapsed idle set fails the row, it is never averaged in.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::ExitCode;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// File descriptors kept free for everything that is not a connection (std streams, the
/// runtime's epoll and eventfds, the binary's libraries).
pub const FD_SLACK: u64 = 64;

/// How many idle sockets the HTTP helper opens before it reads their responses.
const HTTP_CHUNK: usize = 128;

/// A blocking read that takes longer than this fails the helper instead of hanging it.
const IO_TIMEOUT: Duration = Duration::from_secs(20);

/// The error when `needed` descriptors exceed the hard `RLIMIT_NOFILE` limit `hard`.
pub fn check_nofile(needed: u64, hard: u64) -> Result<(), String> {
    if needed <= hard {
        return Ok(());
    }
    Err(format!(
        "{needed} file descriptors are needed (the idle and active connections plus {FD_SLACK} spare) but the hard \
         limit RLIMIT_NOFILE is {hard}; raise it (e.g. `ulimit -n {needed}` as root, or in /etc/security/limits.conf) \
         or ask for fewer --idle-connections / --connections"
    ))
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (children inherit it) and
/// checks that `needed` descriptors fit. Returns the new soft limit.
pub fn raise_nofile(needed: u64) -> Result<u64, String> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `getrlimit` writes one `rlimit` through the valid, exclusive pointer it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(format!("getrlimit(RLIMIT_NOFILE): {}", std::io::Error::last_os_error()));
    }
    check_nofile(needed, lim.rlim_max)?;
    if lim.rlim_cur < lim.rlim_max {
        let raised = libc::rlimit { rlim_cur: lim.rlim_max, rlim_max: lim.rlim_max };
        // SAFETY: `setrlimit` only reads the `rlimit` behind the valid pointer it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            return Err(format!(
                "raising the soft RLIMIT_NOFILE from {} to the hard limit {}: {}",
                lim.rlim_cur,
                lim.rlim_max,
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(lim.rlim_max)
}

/// Resident set size of process `pid` (`VmRSS` in `/proc/PID/status`), in KiB.
pub fn rss_kib(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no VmRSS line in {path}"))
}

/// Fails unless `alive` of the `requested` idle connections survived the round.
/// `what` names what was counted (a runtime, or a side of the connections).
pub fn expect_all_alive(what: &str, alive: usize, requested: usize) -> Result<(), String> {
    if alive == requested {
        Ok(())
    } else {
        Err(format!(
            "{what}: the idle set collapsed: {alive} of {requested} idle connections were alive at the end of the \
             round; the row is not reported"
        ))
    }
}

/// The parent's handle on an `__idle-holder` child; kills it when dropped.
pub struct Holder {
    child: std::process::Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    count: usize,
}

impl Holder {
    /// Starts the helper; it begins connecting at once (call [`Holder::wait_open`] next).
    pub fn spawn(exe: &Path, addr: SocketAddr, count: usize, http: bool) -> Result<Holder, String> {
        let mut cmd = Command::new(exe);
        cmd.args(["__idle-holder", "--addr", &addr.to_string(), "--count", &count.to_string()]);
        if http {
            cmd.arg("--http");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting the idle-connection helper: {e}"))?;
        let stdin = child.stdin.take().ok_or("the idle helper has no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("the idle helper has no stdout")?);
        Ok(Holder { child, stdin, stdout, count })
    }

    fn line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| format!("reading the idle helper: {e}"))?;
        if line.is_empty() {
            return Err("the idle-connection helper exited without a reply".into());
        }
        Ok(line.trim().to_string())
    }

    /// Waits until every idle connection is open (and, for HTTP, served once).
    pub fn wait_open(&mut self) -> Result<(), String> {
        let line = self.line()?;
        match line.strip_prefix("open ").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if n == self.count => Ok(()),
            _ => Err(format!("the idle-connection helper failed to open {} connections: {line}", self.count)),
        }
    }

    /// How many idle connections are still connected and silent.
    pub fn count_alive(&mut self) -> Result<usize, String> {
        writeln!(self.stdin, "check").map_err(|e| format!("asking the idle helper: {e}"))?;
        self.stdin.flush().map_err(|e| format!("asking the idle helper: {e}"))?;
        let line = self.line()?;
        line.strip_prefix("alive ")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("unexpected reply from the idle helper: {line:?}"))
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `weft-lab __idle-holder`: the helper's side of the protocol above.
pub fn holder_main(addr: SocketAddr, count: usize, http: bool) -> Result<(), String> {
    let opened = raise_nofile(count as u64 + FD_SLACK).and_then(|_| open(addr, count, http));
    let sockets = match opened {
        Ok(s) => s,
        Err(e) => {
            println!("error: {e}");
            return Err(e);
        }
    };
    println!("open {}", sockets.len());
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim() == "check" {
            println!("alive {}", count_alive(&sockets));
            std::io::stdout().flush().map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn open(addr: SocketAddr, count: usize, http: bool) -> Result<Vec<TcpStream>, String> {
    if !addr.ip().is_loopback() {
        return Err(format!("idle connections go to loopback servers only, not {addr}"));
    }
    let mut sockets = Vec::with_capacity(count);
    let chunk = if http { HTTP_CHUNK } else { count.max(1) };
    while sockets.len() < count {
        let start = sockets.len();
        let n = chunk.min(count - start);
        for i in 0..n {
            let s = TcpStream::connect(addr).map_err(|e| format!("idle connection {}: connect: {e}", start + i))?;
            s.set_read_timeout(Some(IO_TIMEOUT)).map_err(|e| e.to_string())?;
            if http {
                (&s).write_all(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
                    .map_err(|e| format!("idle connection {}: write: {e}", start + i))?;
            }
            sockets.push(s);
        }
        if http {
            for (i, s) in sockets[start..].iter().enumerate() {
                read_hello(s).map_err(|e| format!("idle connection {}: {e}", start + i))?;
            }
        }
    }
    Ok(sockets)
}

/// Reads one `200 OK` response whose body is `Hello, world!`.
fn read_hello(mut s: &TcpStream) -> Result<(), String> {
    let mut buf = [0u8; 1024];
    let mut have = 0;
    loop {
        let n = s.read(&mut buf[have..]).map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        have += n;
        let text = String::from_utf8_lossy(&buf[..have]);
        if let Some(end) = text.find("\r\n\r\n") {
            if !text.starts_with("HTTP/1.1 200") {
                return Err(format!("bad response: {text}"));
            }
            if text[end + 4..].len() >= crate::framework::http1::HELLO_BODY.len() {
                return if text[end + 4..].as_bytes() == crate::framework::http1::HELLO_BODY {
                    Ok(())
                } else {
                    Err(format!("wrong body: {text}"))
                };
            }
        }
        if have == buf.len() {
            return Err("response too large".into());
        }
    }
}

/// Sockets still connected and silent: a non-blocking peek that would block.
fn count_alive(sockets: &[TcpStream]) -> usize {
    sockets
        .iter()
        .filter(|s| {
            if s.set_nonblocking(true).is_err() {
                return false;
            }
            let alive = matches!(s.peek(&mut [0u8; 1]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
            let _ = s.set_nonblocking(false);
            alive
        })
        .count()
}

/// `__idle-holder`: hold idle connections for `http-hello`/`tcp-echo`.
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[arg(long)]
    pub addr: std::net::SocketAddr,
    #[arg(long)]
    pub count: usize,
    /// Complete one keep-alive `GET /` on each connection first.
    #[arg(long)]
    pub http: bool,
}

/// `weft-lab __idle-holder`.
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    holder_main(args.addr, args.count, args.http)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_limit_message_names_the_limit_and_ulimit() {
        assert!(check_nofile(10_064, 10_064).is_ok());
        let err = check_nofile(20_192, 20_000).unwrap_err();
        assert!(err.contains("20192 file descriptors are needed"), "{err}");
        assert!(err.contains("hard limit RLIMIT_NOFILE is 20000"), "{err}");
        assert!(err.contains("`ulimit -n 20192`"), "{err}");
        // Asking for more than the hard limit fails before anything is opened.
        assert!(raise_nofile(u64::MAX).unwrap_err().contains("RLIMIT_NOFILE"));
    }

    #[test]
    fn count_alive_sees_closed_and_chatty_peers() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let clients: Vec<_> = (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let mut served: Vec<_> = (0..4).map(|_| listener.accept().unwrap().0).collect();
        assert_eq!(count_alive(&clients), 4);
        // The server closes one connection and writes on another: two idle ones remain.
        let client_of = |s: &TcpStream| clients.iter().position(|c| c.local_addr().unwrap() == s.peer_addr().unwrap());
        let closed = client_of(&served[0]).unwrap();
        let chatty = client_of(&served[1]).unwrap();
        drop(served.remove(0));
        served[0].write_all(b"x").unwrap();
        // Blocking peeks wait (no timing) until the FIN and the byte have arrived.
        clients[closed].set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        clients[chatty].set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        assert_eq!(clients[closed].peek(&mut [0u8; 1]).unwrap(), 0);
        assert_eq!(clients[chatty].peek(&mut [0u8; 1]).unwrap(), 1);
        assert_eq!(count_alive(&clients), 2);
        assert_eq!(expect_all_alive("weft-mt", 4, 4), Ok(()));
        let err = expect_all_alive("weft-mt", 2, 4).unwrap_err();
        assert!(err.contains("2 of 4 idle connections"), "{err}");
    }
}
