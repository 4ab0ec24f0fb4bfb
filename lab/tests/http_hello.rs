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
            "1,8",
        ])
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let md = std::fs::read_to_string(out.join("http_hello.md")).unwrap();
    assert!(md.contains("| weft-mt |") && md.contains("| tokio-mt |"), "{md}");
    // One table per connection count, each with the server's CPU per request.
    assert!(md.contains(", 1 keep-alive connections") && md.contains(", 8 keep-alive connections"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("http_hello.json")).unwrap()).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 6, "3 runtimes × 2 connection counts");
    for r in rows {
        assert!(r["requests"].as_u64().unwrap() > 0, "{r}");
        assert!(r["server_cpu_us_per_req"].as_f64().unwrap() > 0.0, "a server that served requests used CPU: {r}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
