//! Records what the lab was built with, for the `machine` block of every result: the rustc
//! version and the versions of each measured runtime's crates (read from the workspace
//! Cargo.lock, so they are the versions actually compiled in).

use std::path::Path;
use std::process::Command;

const CRATES: &[&str] = &[
    "weft",
    "tokio",
    "async-executor",
    "async-channel",
    "async-io",
    "async-std",
    "async-global-executor",
    "futures-channel",
    "futures-lite",
];

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=WEFT_LAB_RUSTC={version}");

    let lock = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut found: Vec<(String, String)> = Vec::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_string());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            if CRATES.contains(&n.as_str()) {
                found.push((n, v.trim_matches('"').to_string()));
            }
        }
    }
    let crates: Vec<String> = found.iter().map(|(n, v)| format!("{n}={v}")).collect();
    println!("cargo:rustc-env=WEFT_LAB_CRATES={}", crates.join(";"));
}
