//! The multi-agent LLM study of TR115, *Technical Report 115 v2: Rust Async Runtime Performance
//! Deep Dive* (report 000; its text is outside the repository, docs/notes/reference-reports.md
//! says where and what the study takes from it).
pub use weft_lab_agent::agent;
pub mod charts;
pub mod child;
pub mod client;
pub mod command;
pub mod hosts;
pub mod study;
pub mod summary;

use std::process::ExitCode;

pub use command::{smoke, Args};

/// The study's part of `results.json` (`summary::AgentsSection`) and how it renders.
pub const SECTION: crate::framework::report::Section =
    crate::framework::report::Section { study: "agents", markdown: section_markdown, html: section_html };

fn section(data: &serde_json::Value) -> Result<summary::AgentsSection, String> {
    serde_json::from_value(data.clone()).map_err(|e| format!("not an agents section: {e}"))
}

fn section_markdown(data: &serde_json::Value) -> Result<String, String> {
    section(data).map(|s| summary::markdown(&s))
}

fn section_html(data: &serde_json::Value) -> Result<String, String> {
    section(data).map(|s| charts::html(&s))
}

/// `weft-lab agents`: exit 1 when a run failed.
pub fn run(args: Args) -> Result<ExitCode, String> {
    command::agents_main(args).map(|ok| if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `__agents`: one batch of agents in this child process (async-std's rows).
#[derive(clap::Args, Debug)]
pub struct ChildArgs {
    #[arg(long)]
    pub runtime: String,
}

/// `weft-lab __agents`: plan on stdin, JSON reply on stdout.
pub fn run_child(args: ChildArgs) -> Result<ExitCode, String> {
    child::child_main(&args.runtime)?;
    Ok(ExitCode::SUCCESS)
}
