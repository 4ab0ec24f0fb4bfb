//! The interactive search (`weft-search` with no query, on a terminal): search as you type,
//! hits streaming in newest first, a role filter on Tab, a message and a session screen, copy
//! keys (OSC 52) and `claude --resume`. [`state`] holds the keys' meaning, [`view`] draws,
//! [`run`] is the loop and the scans.

pub mod run;
pub mod state;
pub mod view;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::files::FileSet;
use crate::search::Filter;

/// What the interactive search works on: the files (after the project filter) and the fixed
/// filters from the command line (a Tab role replaces `-r`).
pub struct Setup {
    pub files: Arc<FileSet>,
    pub root: PathBuf,
    pub filter: Filter,
    pub threads: usize,
}

/// Runs the interactive search; prints `claude --resume …` after leaving when asked to.
pub fn run(setup: Setup) -> std::io::Result<ExitCode> {
    if let Some(line) = run::run(&setup)? {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}
