//! `weft-lab tune -- COMMAND ARGS…`: finds the runtime settings (environment variables) under
//! which the user's own command — a benchmark, a load test, a test suite — does best, says
//! whether that is beyond noise, prints the lines to deploy it, and explains the result with
//! the runtime's own metrics when the program is weft-based.
//!
//! # Glossary
//! * **knob**: an environment variable and the values to try (`--knob NAME=v1,v2`, or the
//!   default grid of the `--runtime`: `grid.rs`).
//! * **configuration**: the knob variables set for one run; **default**: none set (every knob
//!   variable removed from the child's environment).
//! * **round**: `--warmup` discarded runs of the default (default 1: the first run of a round is
//!   markedly slow, a cold page cache and cold CPU caches), then every configuration run `--reps`
//!   times, interleaved (`rounds.rs`).
//! * **metric**: what one run yields — wall time, child CPU time, or a number read from the
//!   command's stdout (`runner.rs`); lower is better unless `--higher-is-better`.
//!
//! # The plan
//! 1. Round 1, one knob at a time: the default and each knob's values varied alone (or the
//!    full cartesian grid with `--full-grid`). A value *wins* for its knob when the 95% CI of
//!    its paired ratio to the default lies entirely on the better side of 1.
//! 2. Round 2, confirmation (only if something won): the default, the combination of every
//!    knob's best winning value, and the best single winner if that differs, measured afresh
//!    with twice the reps (at most three configurations, so it costs less than round 1, and
//!    the bootstrap CI of a median of 3 paired ratios is optimistic: it excludes 1 whenever all
//!    three fall on one side, a 1-in-4 chance for a knob that does nothing).
//!    The best configuration is the best of round 2 that still beats the default beyond noise;
//!    otherwise "no configuration beats the default beyond noise".
//! 3. Diagnosis (`diagnose.rs`): every run gets `WEFT_METRICS_DUMP` pointing at its own temp
//!    file; the default's and the best configuration's summaries are folded into findings
//!    (long polls with spawn sites, blocking-queue latency, knobs the program overrode).
//!
//! # Statistics
//! Runs are paired by rep: rep `r` of a configuration and of the default ran in the same
//! interleaved pass, so their ratio cancels slow drifts of a noisy machine. The ratio shown is
//! the median of the paired ratios with a seeded percentile-bootstrap CI (`crate::framework::stats`).
//!
//! # Rejected alternatives
//! * *The full cartesian product by default*: the default weft grid is 3·2·2·2·2 = 48
//!   configurations; at 5 reps of a one-minute command that is four hours. Knobs mostly act
//!   independently, and the confirmation round checks the combination.
//! * *Picking the best of round 1 directly*: with a dozen configurations the best-looking one
//!   is partly luck (winner's curse); round 2 measures the pick again.
//! * *Running each configuration's reps back to back*: a machine's state drifts (thermal,
//!   other load, caches); interleaving and rotating the order spreads that over everyone.
//!
//! **Architecture Invariant:** a configuration whose run fails is reported with the reason
//! and excluded from every comparison, never silently dropped; a failing default ends `tune`.
//!
//! **Architecture Invariant:** `tune` only starts the command and reads what it leaves (exit
//! status, rusage, stdout, the dump file); it links nothing of the program it tunes.

pub mod diagnose;
pub mod grid;
pub mod rounds;
pub mod runner;

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use grid::{Config, Knob, RuntimeKind};
use rounds::{improves, ratio_to_default, run_round, Outcome, Round};
use runner::{Metric, Target};

/// `weft-lab tune`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// An environment variable and the values to try (repeatable); given knobs replace the
    /// default grid.
    #[arg(long = "knob", value_name = "NAME=V1,V2,...")]
    pub knobs: Vec<String>,
    /// wall | user+sys | regex:PATTERN (first capture group of the last match in stdout).
    #[arg(long, default_value = "wall")]
    pub metric: String,
    /// Larger metric values are better (default: smaller is better).
    #[arg(long)]
    pub higher_is_better: bool,
    /// Runs of each configuration per round (at least 3).
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Whose knobs the default grid sweeps (auto: weft's).
    #[arg(long, value_enum, default_value = "auto")]
    pub runtime: RuntimeKind,
    /// Per-run limit; a run past it is killed and its configuration fails.
    #[arg(long, default_value = "600s", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
    /// Discarded runs of the default at the start of each round.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Round 1 runs the cartesian product of the knobs instead of one knob at a time.
    #[arg(long)]
    pub full_grid: bool,
    /// The command to tune and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `weft-lab tune`: prints the rounds, the verdict, the deploy lines and the diagnosis.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let metric = Metric::parse(&args.metric)?;
    if args.reps < 3 {
        return Err(format!("--reps {} is too few: a confidence interval needs at least 3 paired runs", args.reps));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let knobs: Vec<Knob> = if args.knobs.is_empty() {
        grid::default_knobs(args.runtime, cores)
    } else {
        args.knobs.iter().map(|k| grid::parse_knob(k)).collect::<Result<_, _>>()?
    };
    grid::check_knobs(&knobs)?;
    let knob_names: Vec<String> = knobs.iter().map(|k| k.name.clone()).collect();
    let (program, rest) = args.command.split_first().ok_or("no command given after --")?;
    let target = Target { program, args: rest, knob_names: &knob_names, timeout: args.timeout };
    let dump_dir = std::env::temp_dir().join(format!("weft-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dump_dir).map_err(|e| format!("cannot create {}: {e}", dump_dir.display()))?;
    let result = tune(&args, &metric, &knobs, &target, &dump_dir, cores);
    let _ = std::fs::remove_dir_all(&dump_dir);
    result.map(|()| ExitCode::SUCCESS)
}

/// Writes the report to stdout as it is produced (progress lines go to stderr).
struct Printer;

impl std::fmt::Write for Printer {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(s.as_bytes()).and_then(|()| stdout.flush()).map_err(|_| std::fmt::Error)
    }
}

fn tune(
    args: &Args,
    metric: &Metric,
    knobs: &[Knob],
    target: &Target<'_>,
    dump_dir: &std::path::Path,
    cores: usize,
) -> Result<(), String> {
    let higher = args.higher_is_better;
    let plan = if args.full_grid { grid::cartesian(knobs) } else { grid::one_at_a_time(knobs) };
    let mut out = Printer;
    let direction = if higher { "higher is better" } else { "lower is better" };
    let _ = writeln!(out, "tune: {}", args.command.join(" "));
    let _ = writeln!(
        out,
        "metric {} ({direction}); {} rep(s) per configuration, interleaved, after {} warm-up run(s) of the default; {cores} core(s)",
        metric.name(),
        args.reps,
        args.warmup
    );
    let round1 = Round { target, metric, dump_dir, label: "r1", warmup: args.warmup };
    let what = if args.full_grid { "full grid" } else { "one knob at a time" };
    let _ = writeln!(out, "\nround 1: {what} ({} configurations)", plan.len());
    let r1 = run_round(&round1, &plan, args.reps)?;
    let _ = write!(out, "{}", rounds::table(&r1, metric, higher));

    let candidates = confirmation_candidates(&r1, knobs, args.full_grid, higher);
    let mut best: Option<(Outcome, f64, (f64, f64))> = None;
    let mut default = r1[0].clone();
    if candidates.is_empty() {
        let _ = writeln!(out, "\nno configuration beats the default beyond noise (round 1)");
    } else {
        let mut configs = vec![Config::default()];
        configs.extend(candidates);
        let _ = writeln!(out, "\nround 2: confirmation ({} configurations, {} reps)", configs.len(), 2 * args.reps);
        let round2 = Round { target, metric, dump_dir, label: "r2", warmup: args.warmup };
        let r2 = run_round(&round2, &configs, 2 * args.reps)?;
        let _ = write!(out, "{}", rounds::table(&r2, metric, higher));
        default = r2[0].clone();
        for o in &r2[1..] {
            let Some(r) = ratio_to_default(o, &r2[0]) else { continue };
            let beats = improves(&r, higher) == Some(true);
            let better_than_best = best.as_ref().is_none_or(|b| if higher { r.median > b.1 } else { r.median < b.1 });
            if beats && better_than_best {
                best = Some((o.clone(), r.median, r.ci95));
            }
        }
        match &best {
            None => {
                let _ = writeln!(
                    out,
                    "\nno configuration beats the default beyond noise (round 1's winners were not confirmed in round 2)"
                );
            }
            Some((o, ratio, ci)) => {
                let _ = writeln!(
                    out,
                    "\nbest: {} — {ratio:.3}× the default ({}) [95% CI {:.3}, {:.3}], confirmed in round 2",
                    o.config,
                    metric.name(),
                    ci.0,
                    ci.1
                );
                let _ = writeln!(out, "deploy:");
                for line in o.config.export_lines() {
                    let _ = writeln!(out, "  {line}");
                }
            }
        }
    }

    let _ = writeln!(out, "\ndiagnosis (the runtime's own metrics, WEFT_METRICS_DUMP):");
    for o in &r1[1..] {
        for line in diagnose::ignored_knobs(&o.config, &o.dumps) {
            let _ = writeln!(out, "  note: {line}");
        }
    }
    let mut diagnosed = vec![default];
    if let Some((o, _, _)) = best {
        diagnosed.push(o);
    }
    for o in &diagnosed {
        let _ = writeln!(out, "  {}:", o.config);
        for line in diagnose::diagnose(&o.dumps, cores) {
            let _ = writeln!(out, "    {line}");
        }
    }
    Ok(())
}

/// Round 2's configurations besides the default: the combination of each knob's best winner
/// and the best single winner (one knob at a time), or the best of the full grid.
fn confirmation_candidates(r1: &[Outcome], knobs: &[Knob], full_grid: bool, higher: bool) -> Vec<Config> {
    let winners: Vec<(&Outcome, f64)> = r1[1..]
        .iter()
        .filter_map(|o| {
            let r = ratio_to_default(o, &r1[0])?;
            (improves(&r, higher) == Some(true)).then_some((o, r.median))
        })
        .collect();
    let best_of = |it: &mut dyn Iterator<Item = &(&Outcome, f64)>| -> Option<Config> {
        it.fold(None::<(&Outcome, f64)>, |best, &(o, r)| match best {
            Some((_, b)) if (higher && r <= b) || (!higher && r >= b) => best,
            _ => Some((o, r)),
        })
        .map(|(o, _)| o.config.clone())
    };
    let Some(best_single) = best_of(&mut winners.iter()) else { return Vec::new() };
    if full_grid {
        return vec![best_single];
    }
    let mut combination = Config::default();
    for k in knobs {
        if let Some(c) = best_of(&mut winners.iter().filter(|(o, _)| o.config.get(&k.name).is_some())) {
            combination.vars.extend(c.vars);
        }
    }
    if combination == best_single {
        vec![combination]
    } else {
        vec![combination, best_single]
    }
}
