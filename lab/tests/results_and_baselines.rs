//! results.json round trip, ratio verdicts, baseline regression detection, report rendering.

mod common;

use common::{around, assemble, measured, with_status};
use weft_lab::framework::measure::Status;
use weft_lab::framework::regression::{self, compare, parse_threshold};
use weft_lab::framework::report;
use weft_lab::framework::results::Results;
use weft_lab::framework::runtimes::RuntimeId::{self, *};
use weft_lab::framework::workloads::Workload::*;

fn sample_results(weft_base: u64) -> Results {
    assemble(&[
        measured(SpawnInside, 1_000_000, WeftMt, &around(weft_base, 5)),
        measured(SpawnInside, 1_000_000, TokioMt, &around(100_000_000, 5)),
        measured(SpawnInside, 1_000_000, Smol, &around(50_000_000, 5)),
        measured(SpawnOutside, 1_000_000, WeftMt, &around(weft_base, 5)),
        measured(SpawnOutside, 1_000_000, TokioMt, &around(weft_base, 5)),
        measured(YieldMany, 200, WeftCt, &around(7_000_000, 5)),
        measured(YieldMany, 200, TokioCt, &around(7_000_000, 5)),
        with_status(measured(MpscContended, 1_000_000, WeftMt, &[]), Status::NotYet),
        measured(MpscContended, 1_000_000, TokioMt, &around(150_000_000, 5)),
        with_status(measured(ManyTimers, 10_000, Smol, &[]), Status::Failed("validation failed: x".into())),
    ])
}

#[test]
fn results_json_round_trips_with_schema_1_fields() {
    let results = sample_results(20_000_000);
    let text = results.to_json();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["schema"], 1);
    assert_eq!(value["profile"], "quick");
    assert!(value["machine"]["cores"].as_u64().unwrap() >= 1);
    let row = &value["results"][0];
    for field in [
        "workload",
        "scale",
        "runtime",
        "samples_ns",
        "median_ns",
        "mean_ns",
        "stddev_ns",
        "min_ns",
        "max_ns",
        "p5_ns",
        "p95_ns",
    ] {
        assert!(row.get(field).is_some(), "results[0] lacks {field}");
    }
    assert_eq!(row["workload"], "spawn_inside");
    assert_eq!(row["scale"], 1_000_000);
    let ratio = &value["ratios"][0];
    for field in ["workload", "scale", "runtime", "baseline", "median_ratio", "ci95"] {
        assert!(ratio.get(field).is_some(), "ratios[0] lacks {field}");
    }
    assert_eq!(Results::from_json(&text).unwrap(), results);
    let not_yet = value["results"].as_array().unwrap().iter().find(|r| r["status"] == "not yet").unwrap();
    assert!(not_yet.get("median_ns").is_none());
}

#[test]
fn other_schemas_are_refused() {
    let text = sample_results(1).to_json().replacen("\"schema\": 1", "\"schema\": 2", 1);
    assert!(Results::from_json(&text).unwrap_err().contains("schema 2"));
    assert!(Results::from_json("{}").is_err());
}

#[test]
fn ratios_pair_weft_with_its_baselines_and_call_verdicts() {
    let results = sample_results(20_000_000);
    let find = |w: &str, rt: &str, base: &str| {
        results.ratios.iter().find(|r| r.workload == w && r.runtime == rt && r.baseline == base).cloned()
    };
    let vs_tokio = find("spawn_inside", "weft-mt", "tokio-mt").unwrap();
    assert!((vs_tokio.median_ratio - 0.2).abs() < 0.01);
    assert_eq!(vs_tokio.verdict, "win");
    assert_eq!(find("spawn_inside", "weft-mt", "smol").unwrap().verdict, "win");
    assert_eq!(find("spawn_outside", "weft-mt", "tokio-mt").unwrap().verdict, "tie");
    assert_eq!(find("yield_many", "weft-ct", "tokio-ct").unwrap().verdict, "tie");
    assert!(find("mpsc_contended", "weft-mt", "tokio-mt").is_none(), "no ratio for a not-yet row");
    assert!(results.ratios.iter().all(|r| RuntimeId::by_name(&r.runtime).unwrap().is_weft()));
}

#[test]
fn baseline_compare_flags_only_large_and_certain_slowdowns() {
    let base = sample_results(20_000_000);
    let threshold = parse_threshold("10%").unwrap();
    // 25% slower, tight samples: regression.
    let slower = compare(&sample_results(25_000_000), &base, threshold);
    let flagged: Vec<&str> = slower.iter().filter(|c| c.regressed).map(|c| c.workload.as_str()).collect();
    assert_eq!(flagged, ["spawn_inside", "spawn_outside"], "{slower:?}");
    // 5% slower: within the threshold.
    assert!(compare(&sample_results(21_000_000), &base, threshold).iter().all(|c| !c.regressed));
    // Faster: never a regression.
    assert!(compare(&sample_results(10_000_000), &base, threshold).iter().all(|c| !c.regressed));
    // 20% slower by the median but so noisy that the CI reaches below 1: not flagged.
    let noisy = assemble(&[measured(
        SpawnInside,
        1_000_000,
        WeftMt,
        &[10_000_000, 30_000_000, 24_000_000, 16_000_000, 40_000_000],
    )]);
    let c = compare(&noisy, &base, threshold);
    assert_eq!(c.len(), 1);
    assert!(c[0].ratio.median > 1.1 && c[0].ratio.ci95.0 <= 1.1 && !c[0].regressed, "{c:?}");
    // 15% slower with an interval that dips under +10%: reported, not flagged.
    let borderline = assemble(&[measured(
        SpawnInside,
        1_000_000,
        WeftMt,
        &[23_500_000, 21_800_000, 23_000_000, 24_500_000, 22_000_000],
    )]);
    let c = compare(&borderline, &base, threshold);
    assert!(c[0].ratio.median > 1.1 && c[0].ratio.ci95.0 < 1.1 && !c[0].regressed, "{c:?}");
    // Only weft rows are compared.
    assert!(compare(&base, &base, threshold).iter().all(|c| c.runtime.starts_with("weft")));
}

#[test]
fn thresholds_parse() {
    assert_eq!(parse_threshold("10%").unwrap(), 0.10);
    assert_eq!(parse_threshold("10").unwrap(), 0.10);
    assert_eq!(parse_threshold("0.05").unwrap(), 0.05);
    assert!(parse_threshold("ten").is_err());
}

#[test]
fn baselines_save_and_load() {
    let dir = std::env::temp_dir().join(format!("weft-lab-baselines-{}", std::process::id()));
    let results = sample_results(20_000_000);
    let path = regression::save(&dir, "main", &results).unwrap();
    assert!(path.ends_with("main.json"));
    assert_eq!(regression::load(&dir, "main").unwrap(), results);
    assert!(regression::save(&dir, "../evil", &results).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reports_show_tables_verdicts_charts_and_methodology() {
    let results = sample_results(20_000_000);
    let md = report::render_markdown(&results);
    assert!(md.contains("## spawn") && md.contains("## channels") && md.contains("## Methodology"));
    assert!(md.contains("`spawn_outside 1M (from block_on)`") && md.contains("`spawn_inside 1M (from a worker)`"));
    assert!(md.contains("✅ win") && md.contains("≈ tie") && md.contains("not yet") && md.contains("FAILED"));
    let html = report::render_html(&results);
    std::fs::write(std::env::temp_dir().join("weft-lab-test-report.html"), &html).unwrap(); // for eyeballing
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.matches("<svg").count() >= 4, "time and ratio charts per group");
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "no network resources");
    assert!(!html.contains("<script"), "self-contained, no scripts");
    let text = report::terminal(&results);
    assert!(text.contains("weft-mt ÷ tokio-mt") && text.contains("win"));
    // Outside and inside rows alternate by scale in the spawn table.
    let spawn = &report::tables(&results)[0];
    assert_eq!(spawn.rows[0].workload, SpawnOutside);
    assert_eq!(spawn.rows[1].workload, SpawnInside);
}

#[test]
fn long_polls_are_counted_into_the_reports_not_printed_between_them() {
    let quiet = sample_results(20_000_000);
    assert!(!report::render_markdown(&quiet).contains("## Long polls"));
    assert!(!report::terminal(&quiet).contains("long polls"));
    let mut m = measured(SpawnInside, 1_000_000, WeftMt, &around(20_000_000, 5));
    m.long_polls = 12;
    let results = assemble(&[m, measured(SpawnInside, 1_000_000, TokioMt, &around(100_000_000, 5))]);
    assert_eq!(results.results.iter().map(|r| r.long_polls).sum::<u64>(), 12);
    let back = Results::from_json(&results.to_json()).unwrap();
    assert_eq!(back, results, "long_polls survives results.json");
    let md = report::render_markdown(&results);
    assert!(md.contains("## Long polls") && md.contains("on weft-mt: 12"), "{md}");
    assert!(report::terminal(&results).contains("on weft-mt: 12"));
}
