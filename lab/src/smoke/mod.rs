//! `weft-lab smoke`: every workload once at a tiny size on every runtime, then each study's own
//! checks (the hooks the command line passes in), every output validated (CI runs it).

use std::process::ExitCode;
use std::time::Duration;

use crate::framework::checks::{self, SmokeHook, SmokeOptions};
use crate::framework::runtimes::RuntimeId;
use crate::framework::selection::{this_exe, Selection};

/// `weft-lab smoke`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub selection: Selection,
}

pub fn run(args: Args, hooks: &[SmokeHook]) -> Result<ExitCode, String> {
    let options = SmokeOptions {
        runtimes: args.selection.runtimes(&RuntimeId::ALL)?,
        filter: args.selection.filter.clone(),
        workers: args.selection.workers(),
        exe: this_exe()?,
        verbose: !args.selection.quiet,
        timeout: Duration::from_secs(args.selection.sample_timeout.min(30)),
    };
    let start = std::time::Instant::now();
    let report = checks::run(&options, hooks);
    for failure in &report.failures {
        eprintln!("FAILED {failure}");
    }
    println!("smoke took {:.1} s", start.elapsed().as_secs_f64());
    println!("{}", report.summary());
    Ok(if report.ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
