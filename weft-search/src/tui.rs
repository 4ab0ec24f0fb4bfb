//! The interactive search (in progress).
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::scan::FileSet;
use crate::search::Filter;

pub struct Setup {
    pub files: Arc<FileSet>,
    pub root: PathBuf,
    pub filter: Filter,
    pub threads: usize,
    pub color: bool,
}

pub fn run(_s: Setup) -> std::io::Result<ExitCode> {
    Err(std::io::Error::other("not yet"))
}
