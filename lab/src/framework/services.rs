//! Programs the lab builds and runs but cannot link: cargo projects under `lab/services/`, each
//! with its own lock file and dependency graph (a service built on the real tokio and the same
//! one patched to weft; the agents workflow with reqwest on weft natively). Built with
//! `--locked` into a target directory of their own on first use; `free_port` gives a started one
//! a loopback port.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

/// `lab/services/` in this checkout.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("services")
}

/// Builds `lab/services/{project}/Cargo.toml` (release unless `debug`) into `target_dir` and
/// returns the path of its binary `bin`.
pub fn build(project: &str, bin: &str, target_dir: &Path, debug: bool) -> Result<PathBuf, String> {
    let manifest = dir().join(project).join("Cargo.toml");
    let profile = if debug { "dev" } else { "release" };
    eprintln!("weft-lab: building lab/services/{project} (cargo build --profile {profile} --locked)…");
    let status = Command::new("cargo")
        .args(["build", "--profile", profile, "--locked", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("building {} failed", manifest.display()));
    }
    Ok(target_dir.join(if debug { "debug" } else { "release" }).join(bin))
}

/// Fails unless `cargo tree -i tokio` of `project` names only the facade (a path package):
/// a real tokio in a graph meant to be patched would make its numbers tokio's.
pub fn expect_only_the_facade(project: &str) -> Result<(), String> {
    let manifest = dir().join(project).join("Cargo.toml");
    let tree = Command::new("cargo")
        .args(["tree", "--locked", "-i", "tokio", "-e", "normal", "--prefix", "none", "--manifest-path"])
        .arg(&manifest)
        .output()
        .map_err(|e| format!("cargo tree: {e}"))?;
    let text = String::from_utf8_lossy(&tree.stdout);
    if !tree.status.success() || text.lines().any(|l| l.starts_with("tokio v") && !l.contains("(/")) {
        return Err(format!("{project}'s graph holds a real tokio:\n{text}{}", String::from_utf8_lossy(&tree.stderr)));
    }
    Ok(())
}

/// A loopback port nobody listens on now (bound, read and released; the server binds it next).
pub fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("finding a free port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// Starts `exe args…` (stdin closed, stderr inherited) and reads its first stdout line; returns
/// the child, the line (trimmed) and the rest of its stdout. The child is killed when the line
/// cannot be read.
pub fn start_and_read_line(exe: &Path, args: &[&str]) -> Result<(Child, String, BufReader<ChildStdout>), String> {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", exe.display()))?;
    let mut out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut line = String::new();
    if let Err(e) = out.read_line(&mut line) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("{}: reading its first line: {e}", exe.display()));
    }
    Ok((child, line.trim().to_string(), out))
}
