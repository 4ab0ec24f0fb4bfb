//! Where sessions live and which of them a search reads: the root directory, glob patterns,
//! and Claude Code's project directories.
//!
//! Claude Code keeps a session as `<config>/projects/<encoded cwd>/<session id>.jsonl`, where
//! `<config>` is `$CLAUDE_CONFIG_DIR` or `~/.claude`, and the encoded cwd is the working
//! directory with each of `/ \ : * ? " < > | . _` replaced by `-`. A project filter keeps the
//! project directories whose name *starts with* the encoded path (as ccms: a project and the
//! directories below it; also a sibling that shares the prefix, such as `/src/app-old` for
//! `/src/app`). A file's project directory is the first directory below `.../projects/`, or
//! below the searched root when the root is elsewhere.

use std::path::{Path, PathBuf};

use crate::files::{self, FileSet};

/// `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
pub fn default_root() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("projects"));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("HOME is not set; give --pattern DIR")?;
    Ok(PathBuf::from(home).join(".claude/projects"))
}

/// A project path as Claude Code names its directory.
pub fn encode(path: &str) -> String {
    path.chars()
        .map(|c| if matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' | '.' | '_') { '-' } else { c })
        .collect()
}

/// The project directory name of `file` (see the module comment).
pub fn project_dir<'a>(file: &'a Path, root: &Path) -> Option<&'a str> {
    let s = file.to_str()?;
    if let Some(i) = s.find("/.claude/projects/") {
        return s[i + "/.claude/projects/".len()..].split('/').next().filter(|p| !p.is_empty());
    }
    let rel = file.strip_prefix(root).ok()?;
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_str()?;
    // A file directly in the root has no project directory.
    parts.next().map(|_| first)
}

/// What to search: a root and an optional glob over the files below it.
#[derive(Debug, Clone)]
pub struct Source {
    pub root: PathBuf,
    glob: Option<regex::Regex>,
    /// Whether the root was given (then no project filter applies unless asked for).
    pub explicit: bool,
}

impl Source {
    /// `pattern`: a directory, a file, or a glob (`*` matches across `/` as in ccms, `**` too,
    /// `?` one character, `{a,b}` either); a leading `~/` is the home directory.
    pub fn new(pattern: Option<&str>) -> Result<Source, String> {
        let Some(p) = pattern else { return Ok(Source { root: default_root()?, glob: None, explicit: false }) };
        let p = match p.strip_prefix("~/") {
            Some(rest) => {
                let home = std::env::var_os("HOME").ok_or("HOME is not set, so ~/ cannot be expanded")?;
                format!("{}/{rest}", PathBuf::from(home).display())
            }
            None => p.to_owned(),
        };
        let Some(star) = p.find(['*', '?', '{', '[']) else {
            return Ok(Source { root: PathBuf::from(p), glob: None, explicit: true });
        };
        let prefix = &p[..star];
        let root = match prefix.rfind('/') {
            Some(0) => PathBuf::from("/"),
            Some(i) => PathBuf::from(&prefix[..i]),
            None => PathBuf::from("."),
        };
        Ok(Source { root, glob: Some(glob_regex(&p)?), explicit: true })
    }

    /// Lists the files (sorted), keeping those in a project that passes `project` (an encoded
    /// prefix) and matching the glob.
    pub fn list(&self, project: Option<&str>) -> Result<FileSet, String> {
        let mut set = files::list_files(&self.root)
            .map_err(|e| format!("{}: {}", self.root.display(), files::describe_io(&e)))?;
        let keep: Vec<bool> = set
            .paths
            .iter()
            .map(|f| {
                let glob_ok = self.glob.as_ref().is_none_or(|g| f.to_str().is_some_and(|s| g.is_match(s)));
                let project_ok = project.is_none_or(|p| project_dir(f, &self.root).is_some_and(|d| d.starts_with(p)));
                glob_ok && project_ok
            })
            .collect();
        let mut k = keep.iter();
        set.paths.retain(|_| *k.next().unwrap_or(&false));
        let mut k = keep.iter();
        set.sizes.retain(|_| *k.next().unwrap_or(&false));
        let mut k = keep.iter();
        set.mtimes.retain(|_| *k.next().unwrap_or(&false));
        // A skip in another project could not have held a hit: it does not make this answer
        // incomplete. (One whose project cannot be told, such as the root, is kept.)
        set.skipped.retain(|s| {
            project.is_none_or(|p| project_dir(Path::new(&s.path), &self.root).is_none_or(|d| d.starts_with(p)))
        });
        Ok(set)
    }
}

fn glob_regex(glob: &str) -> Result<regex::Regex, String> {
    let mut re = String::from("^");
    let mut chars = glob.chars().peekable();
    let mut in_braces = false;
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                re.push_str(".*");
            }
            '?' => re.push('.'),
            '{' if !in_braces => {
                in_braces = true;
                re.push_str("(?:");
            }
            '}' if in_braces => {
                in_braces = false;
                re.push(')');
            }
            ',' if in_braces => re.push('|'),
            '[' => {
                let mut class = String::from("[");
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    if c == '\\' || c == '[' {
                        class.push('\\');
                    }
                    class.push(if c == '!' && class == "[" { '^' } else { c });
                }
                class.push(']');
                re.push_str(&class);
            }
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).map_err(|e| format!("bad glob pattern {glob:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_and_project_dirs() {
        assert_eq!(encode("/home/me/src/my_app.v2"), "-home-me-src-my-app-v2");
        let f = Path::new("/home/me/.claude/projects/-home-me-app/abc.jsonl");
        assert_eq!(project_dir(f, Path::new("/x")), Some("-home-me-app"));
        let f = Path::new("/corpus/-p1/s/subagents/a.jsonl");
        assert_eq!(project_dir(f, Path::new("/corpus")), Some("-p1"));
        assert_eq!(project_dir(Path::new("/corpus/a.jsonl"), Path::new("/corpus")), None);
    }

    #[test]
    fn globs() {
        let s = Source::new(Some("/data/**/*.jsonl")).unwrap();
        assert_eq!(s.root, PathBuf::from("/data"));
        let g = s.glob.unwrap();
        assert!(g.is_match("/data/p/x.jsonl") && g.is_match("/data/p/q/x.jsonl") && !g.is_match("/data/p/x.json"));
        let g = glob_regex("/d/{a,b}/?.jsonl").unwrap();
        assert!(g.is_match("/d/a/1.jsonl") && g.is_match("/d/b/2.jsonl") && !g.is_match("/d/c/1.jsonl"));
        assert!(glob_regex("/d/[!x]*").unwrap().is_match("/d/y.jsonl"));
    }
}
