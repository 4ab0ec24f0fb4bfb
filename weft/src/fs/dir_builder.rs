//! `DirBuilder`: `std::fs::DirBuilder`'s options, with `create` run on the blocking pool.

use std::io;
use std::path::Path;

use super::asyncify;

/// Builds directories with options (recursive creation, unix mode), like
/// `std::fs::DirBuilder`.
#[derive(Debug, Default)]
pub struct DirBuilder {
    recursive: bool,
    #[cfg(unix)]
    mode: Option<u32>,
}

impl DirBuilder {
    /// A builder with default options (not recursive, mode 0o777 before the umask).
    pub fn new() -> DirBuilder {
        DirBuilder::default()
    }

    /// Whether to create missing parents too (and succeed if the directory exists).
    pub fn recursive(&mut self, recursive: bool) -> &mut DirBuilder {
        self.recursive = recursive;
        self
    }

    /// The permission bits new directories get (before the umask).
    #[cfg(unix)]
    pub fn mode(&mut self, mode: u32) -> &mut DirBuilder {
        self.mode = Some(mode);
        self
    }

    /// Creates `path` with these options, in one hop.
    pub async fn create(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref().to_owned();
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(self.recursive);
        #[cfg(unix)]
        if let Some(mode) = self.mode {
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, mode);
        }
        asyncify(move || builder.create(path)).await
    }
}
