//! `weft-lab http-hello` end to end, briefly: servers start in child processes, every response
//! validates, the table is written.

#[test]
fn http_hello_runs_and_validates_for_weft_and_tokio() {
    let out = std::env::temp_dir().join(format!("weft-lab-http-{}", std::process::id()));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_weft-lab"))
        .args([
            "http-hello",
            "--runtimes",
            "weft-mt,weft-ct,tokio-mt",
            "--workers",
            "2",
            "--seconds",
            "0.4",
            "--rounds",
            "2",
            "--connections",
            "8",
        ])
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let md = std::fs::read_to_string(out.join("http_hello.md")).unwrap();
    assert!(md.contains("| weft-mt |") && md.contains("| tokio-mt |"), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}
