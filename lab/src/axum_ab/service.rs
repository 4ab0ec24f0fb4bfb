//! The service under test (`lab/services/axum-svc`): built twice from one source, started as a
//! child process, proved to run on the runtime its build names, and checked route by route.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::wrk::PAGE_MARKER;
use crate::framework::services;

/// Which build of the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// `lab/services/axum-svc/tokio`: the real tokio.
    Tokio,
    /// `lab/services/axum-svc/weft`: the same source, tokio patched to `compat/tokio`.
    Weft,
}

impl Build {
    pub const BOTH: [Build; 2] = [Build::Tokio, Build::Weft];

    pub fn name(self) -> &'static str {
        match self {
            Build::Tokio => "tokio",
            Build::Weft => "weft",
        }
    }

    /// The worker thread name (`/proc/PID/task/*/comm`, 15 bytes) only this runtime uses.
    fn worker_comm(self) -> &'static str {
        match self {
            Build::Tokio => "tokio-rt-worker",
            Build::Weft => "weft-worker",
        }
    }
}

/// Builds both variants (`--locked`, into `target_dir`; release unless `debug`, which only CI's
/// smoke run uses: its numbers mean nothing) and returns their binaries. The weft build is
/// first checked to hold no real tokio (`cargo tree -i tokio`).
pub fn build_both(target_dir: &Path, debug: bool) -> Result<[PathBuf; 2], String> {
    services::expect_only_the_facade("axum-svc/weft")?;
    let tokio = services::build("axum-svc/tokio", "axum-svc-tokio", target_dir, debug)?;
    let weft = services::build("axum-svc/weft", "axum-svc-weft", target_dir, debug)?;
    Ok([tokio, weft])
}

/// A service process, killed on drop.
pub struct Running {
    child: Child,
    pub addr: SocketAddr,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    pub fn start(exe: &Path, args: &[&str]) -> Result<Running, String> {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", exe.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or("no stdout")?;
        BufReader::new(stdout).read_line(&mut line).map_err(|e| e.to_string())?;
        let addr = line.trim().strip_prefix("listening on ").and_then(|a| a.parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            return Err(format!("{} did not print `listening on ADDR` (got {line:?})", exe.display()));
        };
        Ok(Running { child, addr })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails unless the process runs `build`'s runtime: its worker threads carry a name only
    /// that runtime gives them (so a patch that silently fell through to the real tokio, or
    /// the reverse, cannot pass as an A/B).
    pub fn expect_runtime(&self, build: Build) -> Result<(), String> {
        let dir = format!("/proc/{}/task", self.pid());
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{dir}: {e}"))? {
            let comm = entry.map_err(|e| e.to_string())?.path().join("comm");
            names.push(std::fs::read_to_string(comm).unwrap_or_default().trim().to_string());
        }
        let other = Build::BOTH.into_iter().find(|&b| b != build).expect("two builds");
        if !names.iter().any(|n| n == build.worker_comm()) || names.iter().any(|n| n == other.worker_comm()) {
            return Err(format!("the {} build does not run {} (threads: {names:?})", build.name(), build.name()));
        }
        Ok(())
    }

    /// CPU time of the whole process so far, exited threads included (`/proc/PID/stat`'s
    /// utime + stime: the blocking pool's and compensation threads' time counts even when
    /// they have exited, which `schedstat` per live thread would lose).
    pub fn cpu(&self) -> Result<Duration, String> {
        let path = format!("/proc/{}/stat", self.pid());
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        // Fields after the `(comm)`, which may hold spaces: utime and stime are fields 14, 15.
        let rest = text.rsplit_once(')').map(|(_, r)| r).ok_or("malformed stat")?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).ok_or("malformed stat");
        let total = ticks(11)? + ticks(12)?;
        // SAFETY: sysconf takes an integer name, touches no memory and cannot fail here.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        Ok(Duration::from_nanos(total * 1_000_000_000 / hz))
    }
}

/// `GET path` over a fresh connection; the status and body.
fn get(addr: SocketAddr, path: &str) -> Result<(u16, String), String> {
    crate::framework::http1::exchange(addr, &addr.to_string(), "GET", path, "")
}

/// The page `/file` serves: 4 KiB of HTML with the marker wrk checks for.
pub fn page() -> Vec<u8> {
    let mut p = format!("<!doctype html>{PAGE_MARKER}<title>axum-ab</title><pre>\n");
    let mut i = 0u32;
    loop {
        let line = format!("line {i:05} of the page\n");
        if p.len() + line.len() + "</pre>\n".len() > 4096 {
            break;
        }
        p += &line;
        i += 1;
    }
    p += "</pre>\n";
    p.into_bytes()
}

/// FNV-1a over the 64 KiB pattern `/hash` covers: the lab's own computation of its answer.
fn expected_fnv() -> u64 {
    (0..65_536u32).fold(0xcbf2_9ce4_8422_2325u64, |h, i| {
        (h ^ u64::from((i.wrapping_mul(31) ^ (i >> 7)) as u8)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every route answers exactly what it must (before any load, every round).
pub fn check_routes(addr: SocketAddr, page: &[u8], with_legacy: bool) -> Result<(), String> {
    let json = |path: &str| -> Result<serde_json::Value, String> {
        let (status, body) = get(addr, path)?;
        if status != 200 {
            return Err(format!("GET {path}: status {status}: {body}"));
        }
        serde_json::from_str(&body).map_err(|e| format!("GET {path}: {e}"))
    };
    let items: Vec<_> = (0..8)
        .map(|id| serde_json::json!({"id": id, "name": "widget", "tags": ["in-stock", if id % 2 == 0 { "even" } else { "odd" }]}))
        .collect();
    let want = [
        ("/json", serde_json::json!({"route": "json", "count": 8, "items": items})),
        ("/relay", serde_json::json!({"route": "relay", "price": 8434, "currency": "EUR"})),
        ("/hash", serde_json::json!({"route": "hash", "fnv": format!("{:016x}", expected_fnv())})),
    ];
    for (path, expected) in want {
        let got = json(path)?;
        if got != expected {
            return Err(format!("GET {path}: expected {expected}, got {got}"));
        }
    }
    let (status, body) = get(addr, "/file")?;
    if status != 200 || body.as_bytes() != page {
        return Err(format!("GET /file: status {status}, {} bytes, not the page", body.len()));
    }
    if with_legacy && json("/legacy")? != serde_json::json!({"route": "legacy"}) {
        return Err("GET /legacy: wrong answer".into());
    }
    Ok(())
}
