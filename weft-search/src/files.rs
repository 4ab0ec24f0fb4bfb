//! The file set a search covers: every `*.jsonl` transcript under a root, sorted by path, with
//! sizes and modification times, and what was skipped and why. `project` narrows a root to one
//! project's directory; `scan` reads the set's files; neither is needed to list them.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A file that was not searched (or a directory that was not listed), and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// Why reading a file failed, in words a user can act on.
pub fn describe_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "not found (deleted during the search?)".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        io::ErrorKind::IsADirectory => "is a directory, not a file".into(),
        _ => e.to_string(),
    }
}

/// The files to search, sorted by path (the order hits tie-break on), with their sizes.
#[derive(Clone, Debug, Default)]
pub struct FileSet {
    pub paths: Vec<PathBuf>,
    pub sizes: Vec<u64>,
    /// Modification times, Unix seconds.
    pub mtimes: Vec<i64>,
    /// Directories that could not be listed and entries that are not regular files.
    pub skipped: Vec<Skipped>,
}

impl FileSet {
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

/// Every `*.jsonl` file under `root` (or `root` itself when it is a file), hidden names below
/// `root` left out. Directories that
/// cannot be listed, dangling links and non-regular files are returned as skips; symbolic links
/// are followed for files only (a directory link could loop).
pub fn list_files(root: &Path) -> io::Result<FileSet> {
    let meta = std::fs::metadata(root)?;
    if !meta.is_dir() {
        return Ok(FileSet {
            paths: vec![root.to_path_buf()],
            sizes: vec![meta.len()],
            mtimes: vec![mtime(&meta)],
            skipped: Vec::new(),
        });
    }
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                skipped.push(Skipped { path: dir.display().to_string(), reason: describe_io(&e) });
                continue;
            }
        };
        for entry in entries.flatten() {
            // Hidden entries are skipped, as ccms skips them (editor and VCS droppings).
            if entry.file_name().as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => found.push((path, m.len(), mtime(&m))),
                Ok(m) => {
                    // A FIFO would block `open` forever; sockets and devices are not transcripts.
                    let reason = if m.is_dir() { "is a directory, not a file" } else { "not a regular file" };
                    skipped.push(Skipped { path: path.display().to_string(), reason: reason.into() });
                }
                Err(e) => skipped.push(Skipped { path: path.display().to_string(), reason: describe_io(&e) }),
            }
        }
    }
    found.sort();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let mut set = FileSet { skipped, ..FileSet::default() };
    for (p, size, mtime) in found {
        set.paths.push(p);
        set.sizes.push(size);
        set.mtimes.push(mtime);
    }
    Ok(set)
}

/// A file's modification time in Unix seconds (0 where unknown).
pub fn mtime(m: &std::fs::Metadata) -> i64 {
    m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs() as i64)
}
