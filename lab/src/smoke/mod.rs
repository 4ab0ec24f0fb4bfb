//! `weft-lab smoke`: every workload once at a tiny size on every runtime, plus the actors'
//! and the search tool's smoke checks, every output validated (CI runs it).

use std::process::ExitCode;
use std::time::Duration;

use crate::framework::runtimes::RuntimeId;
use crate::framework::selection::{this_exe, Selection};
use crate::framework::smoke::{self, selected, SmokeOptions};

/// `weft-lab smoke`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub selection: Selection,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let options = SmokeOptions {
        runtimes: args.selection.runtimes(&RuntimeId::ALL)?,
        filter: args.selection.filter.clone(),
        workers: args.selection.workers(),
        exe: this_exe()?,
        verbose: !args.selection.quiet,
        timeout: Duration::from_secs(args.selection.sample_timeout.min(30)),
    };
    let start = std::time::Instant::now();
    let mut report = smoke::run(&options);
    if selected("actors", &options.filter) {
        crate::actors::smoke(&mut report, options.workers, options.verbose);
    }
    if selected("search", &options.filter) {
        for line in crate::search::smoke(&options.exe) {
            match line {
                Ok(l) => {
                    report.passed += 1;
                    if options.verbose {
                        println!("ok       {l}");
                    }
                }
                Err(e) => {
                    report.failed += 1;
                    println!("FAILED   {e}");
                    report.failures.push(e);
                }
            }
        }
    }
    for failure in &report.failures {
        eprintln!("FAILED {failure}");
    }
    println!("smoke took {:.1} s", start.elapsed().as_secs_f64());
    println!("{}", report.summary());
    Ok(if report.ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
