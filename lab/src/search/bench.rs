//! `weft-lab search bench`: every engine, plus a blocking-pool sweep, on one generated corpus
//! (made once into `OUT/corpus`, reused while its spec matches), each sample a fresh child
//! process, contenders interleaved round by round (the order rotates each round), the first
//! round discarded as warm-up (it also warms the page cache). Every answer is compared with the
//! first one; any difference fails the bench. Writes `results.json`, `report.md`, `report.html`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};

use weft_search::answer::Answer;

use super::engines::{self, read_every_file, Engine, RunSpec};
use super::{child_run, corpus};
use crate::framework::stats::Summary;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub corpus: corpus::CorpusSpec,
    /// Engines (comma-separated; default all).
    #[arg(long, value_delimiter = ',')]
    pub engines: Vec<String>,
    /// Blocking-pool sizes to sweep: numbers, `cores`, `2xcores` (empty: no sweep).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,cores,2xcores,500")]
    pub pool_sweep: Vec<String>,
    /// Engines the sweep runs (their pool size set explicitly).
    #[arg(long, value_delimiter = ',', default_value = "weft,tokio-tuned,smol")]
    pub sweep_engines: Vec<String>,
    /// Counted rounds (after one warm-up round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    #[arg(long, default_value = "tokio AND spawn")]
    pub query: String,
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    #[arg(long, default_value = "lab-results/search")]
    pub out: PathBuf,
    /// Seconds before a sample counts as hung.
    #[arg(long, default_value_t = 300)]
    pub sample_timeout: u64,
}

/// One contender's samples.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub engine: String,
    /// Explicit pool size (None: the engine's default).
    pub pool: Option<usize>,
    pub samples_ms: Vec<f64>,
    pub peak_rss_mb: f64,
    pub median_ms: f64,
    pub min_ms: f64,
    pub cv: f64,
    /// weft's long-poll warnings printed by this contender's children, counted rounds only.
    #[serde(default)]
    pub long_poll_warnings: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchResults {
    pub files: usize,
    pub corpus_mb: f64,
    pub largest_file_mb: f64,
    pub cores: usize,
    pub query: String,
    pub total_hits: u64,
    pub rounds: usize,
    pub rows: Vec<Row>,
}

fn pool_size(token: &str) -> Result<usize, String> {
    let cores = engines::cores();
    match token.trim() {
        "cores" => Ok(cores),
        "2xcores" | "2×cores" => Ok(2 * cores),
        t => t.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("bad pool size `{t}`")),
    }
}

fn corpus_ready(dir: &Path, stamp: &str) -> bool {
    std::fs::read_to_string(dir.join("corpus.spec")).is_ok_and(|s| s == stamp)
}

pub fn command(args: BenchArgs) -> Result<ExitCode, String> {
    weft_search::query::Query::parse(&args.query).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let corpus_dir = args.out.join("corpus");
    let stamp = format!("files={} seed={} total_mb={:?}\n", args.corpus.files, args.corpus.seed, args.corpus.total_mb);
    if !corpus_ready(&args.out, &stamp) {
        let _ = std::fs::remove_dir_all(&corpus_dir);
        eprintln!("generating {} files into {} …", args.corpus.files, corpus_dir.display());
        let spec = args.corpus.clone();
        corpus::generate(&spec, &corpus_dir).map_err(|e| format!("generating the corpus: {e}"))?;
        std::fs::write(args.out.join("corpus.spec"), &stamp).map_err(|e| e.to_string())?;
    }
    let (files, _) = engines::list_files(&corpus_dir).map_err(|e| e.to_string())?;
    let sizes: Vec<u64> = files.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).collect();
    let cores = engines::cores();
    let mut contenders: Vec<RunSpec> = Vec::new();
    let engine_list: Vec<Engine> = if args.engines.is_empty() {
        Engine::ALL.to_vec()
    } else {
        args.engines.iter().map(|e| Engine::parse(e)).collect::<Result<_, _>>()?
    };
    for &engine in &engine_list {
        contenders.push(RunSpec { engine, pool: None, workers: cores, limit: args.limit });
    }
    let sweep: Vec<usize> =
        args.pool_sweep.iter().filter(|t| !t.is_empty()).map(|t| pool_size(t)).collect::<Result<_, _>>()?;
    for name in &args.sweep_engines {
        let engine = Engine::parse(name)?;
        for &n in &sweep {
            if engine.has_pool() {
                contenders.push(RunSpec { engine, pool: Some(n), workers: cores, limit: args.limit });
            }
        }
    }
    let timeout = Duration::from_secs(args.sample_timeout);
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
    let mut rss: Vec<u64> = vec![0; contenders.len()];
    let mut warnings: Vec<u64> = vec![0; contenders.len()];
    let mut reference: Option<Answer> = None;
    for round in 0..=args.rounds {
        for k in 0..contenders.len() {
            let i = (k + round) % contenders.len();
            let c = &contenders[i];
            let r = child_run(&exe, c, &corpus_dir, &args.query, timeout)?;
            match &reference {
                None => reference = Some(r.outcome.clone()),
                Some(want) if *want != r.outcome => {
                    return Err(format!(
                        "{} (pool {:?}) returned a different answer ({} hits) than the first engine ({} hits)",
                        c.engine.name(),
                        c.pool,
                        r.outcome.total_hits,
                        want.total_hits
                    ))
                }
                Some(_) => {}
            }
            if round > 0 {
                samples[i].push(r.elapsed_ns as f64 / 1e6);
                rss[i] = rss[i].max(r.peak_rss_kb);
                warnings[i] += r.long_poll_warnings;
            }
        }
        eprintln!("round {round}/{} done", args.rounds);
    }
    let reference = reference.ok_or("no contenders")?;
    if !read_every_file(&reference) {
        return Err(format!("the corpus search was incomplete: {:?}", reference.skipped_files));
    }
    let rows = contenders
        .iter()
        .zip(samples)
        .zip(rss)
        .zip(warnings)
        .map(|(((c, s), rss), long_poll_warnings)| {
            let sum = Summary::of(&s);
            Row {
                long_poll_warnings,
                engine: c.engine.name().into(),
                pool: c.pool,
                peak_rss_mb: rss as f64 / 1024.0,
                median_ms: sum.median,
                min_ms: sum.min,
                cv: sum.cv,
                samples_ms: s,
            }
        })
        .collect();
    let results = BenchResults {
        files: files.len(),
        corpus_mb: sizes.iter().sum::<u64>() as f64 / 1e6,
        largest_file_mb: sizes.iter().max().copied().unwrap_or(0) as f64 / 1e6,
        cores,
        query: args.query.clone(),
        total_hits: reference.total_hits,
        rounds: args.rounds,
        rows,
    };
    std::fs::create_dir_all(&args.out).map_err(|e| e.to_string())?;
    let md = markdown(&results);
    std::fs::write(args.out.join("results.json"), serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("report.md"), &md).map_err(|e| e.to_string())?;
    std::fs::write(args.out.join("report.html"), html(&results, &md)).map_err(|e| e.to_string())?;
    println!("{md}");
    Ok(ExitCode::SUCCESS)
}

fn find<'a>(res: &'a BenchResults, engine: &str) -> Option<&'a Row> {
    res.rows.iter().find(|r| r.engine == engine && r.pool.is_none())
}

/// The engine table, the sweep table and the targets.
pub fn markdown(res: &BenchResults) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# weft-lab search\n\n{} files, {:.1} MB (largest {:.1} MB), {} cores, query `{}` ({} hits), {} rounds, median of child-process wall times (listing + runtime start + search)\n",
        res.files, res.corpus_mb, res.largest_file_mb, res.cores, res.query, res.total_hits, res.rounds
    );
    let weft = find(res, "weft").map(|r| r.median_ms);
    let _ = writeln!(
        s,
        "| engine | median ms | min ms | CV | weft speed-up | peak RSS MB | long-poll warnings |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let mut main: Vec<&Row> = res.rows.iter().filter(|r| r.pool.is_none()).collect();
    main.sort_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
    for r in &main {
        let vs = weft.map(|w| format!("{:.2}×", r.median_ms / w)).unwrap_or_default();
        let name = &r.engine;
        let _ = writeln!(
            s,
            "| {name} | {:.1} | {:.1} | {:.1}% | {vs} | {:.0} | {} |",
            r.median_ms,
            r.min_ms,
            r.cv * 100.0,
            r.peak_rss_mb,
            r.long_poll_warnings
        );
    }
    let _ = writeln!(
        s,
        "\nlong-poll warnings: weft's default stderr lines (`weft: task … blocked worker … for N ms`) printed by the engine's processes over the counted rounds (weft engines only; a poll that kept its worker ≥ 10 ms on a CPU or asleep in the kernel).\n"
    );
    let mut sweep_engines: Vec<&str> =
        res.rows.iter().filter(|r| r.pool.is_some()).map(|r| r.engine.as_str()).collect();
    sweep_engines.dedup();
    let mut sizes: Vec<usize> = res.rows.iter().filter_map(|r| r.pool).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if !sizes.is_empty() {
        let _ = writeln!(s, "\n## Blocking-pool sweep (median ms)\n");
        let _ = write!(s, "| pool |");
        for e in &sweep_engines {
            let _ = write!(s, " {e} |");
        }
        let _ = writeln!(s, "\n|---|{}", "---:|".repeat(sweep_engines.len()));
        for n in &sizes {
            let _ = write!(s, "| {n} |");
            for e in &sweep_engines {
                let v = res.rows.iter().find(|r| r.engine == *e && r.pool == Some(*n)).map(|r| r.median_ms);
                let _ = write!(s, " {} |", v.map(|v| format!("{v:.1}")).unwrap_or_default());
            }
            let _ = writeln!(s);
        }
        let _ = write!(s, "| default |");
        for e in &sweep_engines {
            let v = find(res, e).map(|r| format!("{:.1}", r.median_ms)).unwrap_or_default();
            let _ = write!(s, " {v} |");
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "\n## Targets\n");
    if let Some(w) = weft {
        let peers: Vec<&Row> =
            ["smol-tuned", "tokio", "tokio-tuned", "rayon"].iter().filter_map(|e| find(res, e)).collect();
        if let Some(best) = peers.iter().min_by(|a, b| a.median_ms.total_cmp(&b.median_ms)) {
            let _ = writeln!(
                s,
                "- weft vs best peer ({}): {:.2}× faster (target ≥ 1.20×)",
                best.engine,
                best.median_ms / w
            );
        }
        if let Some(seq) = find(res, "sequential") {
            let ideal = seq.median_ms / res.cores as f64;
            let _ = writeln!(s, "- weft ÷ (sequential / cores): {:.2} (target ≤ 1.30)", w / ideal);
        }
        let best_fixed = res
            .rows
            .iter()
            .filter(|r| r.engine == "weft" && r.pool.is_some())
            .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
        if let Some(b) = best_fixed {
            let _ = writeln!(
                s,
                "- weft (no configuration) ÷ best fixed weft pool ({}): {:.3} (target ≤ 1.05)",
                b.pool.unwrap_or(0),
                w / b.median_ms
            );
        }
        if let Some(r) = find(res, "weft") {
            let _ = writeln!(
                s,
                "- weft peak RSS {:.0} MB; bound 2 × largest file + 64 MB = {:.0} MB",
                r.peak_rss_mb,
                2.0 * res.largest_file_mb * 1e6 / (1 << 20) as f64 + 64.0
            );
        }
    }
    s
}

fn html(res: &BenchResults, md: &str) -> String {
    let chart = sweep_chart(res).unwrap_or_else(|e| format!("<p>chart failed: {e}</p>"));
    let escaped = md.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    format!(
        "<!doctype html><meta charset=utf-8><title>weft-lab search</title><body style='font-family:sans-serif'>\
         <h1>weft-lab search</h1>{chart}<pre>{escaped}</pre></body>"
    )
}

/// Median time against pool size (log x), one line per swept engine, dashed lines for defaults.
fn sweep_chart(res: &BenchResults) -> Result<String, String> {
    use plotters::prelude::*;
    let swept: Vec<&Row> = res.rows.iter().filter(|r| r.pool.is_some()).collect();
    if swept.is_empty() {
        return Ok(String::new());
    }
    let max_pool = swept.iter().filter_map(|r| r.pool).max().unwrap_or(1) as f64;
    let max_ms = res.rows.iter().map(|r| r.median_ms).fold(0.0, f64::max) * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption("search: median ms vs blocking-pool size", ("sans-serif", 20))
            .margin(20)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((1.0..max_pool * 1.5).log_scale(), 0.0..max_ms)
            .map_err(|e| e.to_string())?;
        chart.configure_mesh().x_desc("pool threads").y_desc("ms").draw().map_err(|e| e.to_string())?;
        let mut engines: Vec<&str> = swept.iter().map(|r| r.engine.as_str()).collect();
        engines.dedup();
        let colors = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK];
        for (k, e) in engines.iter().enumerate() {
            let color = colors[k % colors.len()];
            let mut pts: Vec<(f64, f64)> =
                swept.iter().filter(|r| r.engine == *e).map(|r| (r.pool.unwrap_or(1) as f64, r.median_ms)).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(e.to_string())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled()))).map_err(|e| e.to_string())?;
            if let Some(d) = find(res, e) {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(1.0, d.median_ms), (max_pool * 1.5, d.median_ms)],
                        6,
                        4,
                        color.into(),
                    ))
                    .map_err(|e| e.to_string())?
                    .label(format!("{e} default"))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.mix(0.5)));
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
