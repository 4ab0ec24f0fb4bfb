//! `weft-lab soak`'s bad inputs (the 1-minute run itself is a `.ci/run` step).

fn soak(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_weft-lab")).arg("soak").args(args).output().unwrap()
}

#[test]
fn a_non_positive_duration_is_refused() {
    let out = soak(&["--minutes", "0", "--out", "/nonexistent-weft-soak"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--minutes must be positive"));
}

#[test]
fn an_unknown_runtime_is_refused() {
    let out = soak(&["--minutes", "1", "--runtimes", "smol", "--out", "/nonexistent-weft-soak"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown runtime \"smol\""));
}

#[test]
fn a_short_soak_of_both_runtimes_together_serves_without_errors_and_writes_the_chart() {
    let out_dir = std::env::temp_dir().join(format!("weft-soak-{}", std::process::id()));
    let out = soak(
        &["--minutes", "0.1", "--every", "1", "--clients", "1", "--idle", "4", "--together", "--out"]
            .map(str::to_string)
            .iter()
            .map(String::as_str)
            .chain([out_dir.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("soak.json")).unwrap()).unwrap();
    let runtimes: Vec<&str> = json.as_array().unwrap().iter().map(|r| r["runtime"].as_str().unwrap()).collect();
    assert_eq!(runtimes, ["weft-mt", "tokio-mt"]);
    for run in json.as_array().unwrap() {
        assert_eq!(run["errors"], 0, "{run}");
        assert!(run["requests"].as_u64().unwrap() > 0, "{run}");
        assert!(run["samples"].as_array().unwrap().len() >= 4, "{run}");
    }
    assert!(std::fs::read_to_string(out_dir.join("soak.svg")).unwrap().contains("<svg"));
    let html = std::fs::read_to_string(out_dir.join("soak.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("| weft-mt |"), "{html}");
    // Re-rendering the saved run (with the flags it ran with) gives the same report, verdicts
    // recomputed from the samples.
    let again = out_dir.join("again");
    let saved = out_dir.join("soak.json");
    let flags = ["--every", "1", "--clients", "1", "--idle", "4", "--together", "--render"];
    let out = soak(&[&flags[..], &[saved.to_str().unwrap(), "--out", again.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for file in ["soak.json", "soak.md", "soak.svg"] {
        assert_eq!(
            std::fs::read_to_string(again.join(file)).unwrap(),
            std::fs::read_to_string(out_dir.join(file)).unwrap(),
            "{file} re-rendered differs"
        );
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn rendering_a_missing_or_foreign_file_is_an_error() {
    let out = soak(&["--render", "/nonexistent/soak.json", "--out", "/nonexistent-weft-soak"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading /nonexistent/soak.json"));
    let foreign = std::env::temp_dir().join(format!("weft-soak-foreign-{}.json", std::process::id()));
    std::fs::write(&foreign, r#"{"not": "a soak"}"#).unwrap();
    let out = soak(&["--render", foreign.to_str().unwrap(), "--out", "/nonexistent-weft-soak"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a soak.json"));
    let _ = std::fs::remove_file(&foreign);
}
