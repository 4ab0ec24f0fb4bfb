//! The answer of a search: files' outcomes merged as they arrive, and the lines of the printed
//! hits re-read when the output needs more than a snippet.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::files::{FileSet, Skipped};
use crate::project;
use crate::scan::{FileOrder, Scan};
use crate::search::{FileOutcome, Hit, Job, Stats};

/// Where an invalid line is, for the message that names it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Place {
    pub path: String,
    pub line: u32,
}

/// Everything a search found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The best `limit` hits, in answer order.
    pub hits: Vec<Hit>,
    pub total_hits: u64,
    pub files_searched: u64,
    pub skipped_files: Vec<Skipped>,
    pub lines: u64,
    pub invalid_lines: u64,
    /// The first few invalid lines.
    pub invalid_at: Vec<Place>,
    pub oversized_lines: u64,
    pub bytes: u64,
    /// With `--stats`: counts over every hit, plus hits per project directory.
    pub stats: Option<Stats>,
    pub by_project: HashMap<String, u64>,
}

impl Answer {
    /// Whether every file and every candidate line was read.
    pub fn complete(&self) -> bool {
        self.skipped_files.is_empty() && self.invalid_lines == 0 && self.oversized_lines == 0
    }

    /// Folds in one file's outcome (any order; the answer does not depend on it). `root` names
    /// the file's project in `--stats` answers.
    pub fn add(&mut self, path: &Path, root: &Path, job: &Job, outcome: Result<FileOutcome, String>) {
        match outcome {
            Err(reason) => self.skipped_files.push(Skipped { path: path.display().to_string(), reason }),
            Ok(f) => {
                self.files_searched += 1;
                self.total_hits += f.total_hits;
                self.lines += f.lines;
                self.invalid_lines += f.invalid_lines;
                for line in f.invalid_examples {
                    if self.invalid_at.len() < 5 {
                        self.invalid_at.push(Place { path: path.display().to_string(), line });
                    }
                }
                self.oversized_lines += f.oversized_lines;
                self.bytes += f.bytes;
                if let Some(s) = f.stats {
                    let project = project::project_dir(path, root).unwrap_or("").to_owned();
                    if f.total_hits > 0 {
                        *self.by_project.entry(project).or_default() += f.total_hits;
                    }
                    self.stats.get_or_insert_with(Stats::default).merge(s);
                }
                // Merge the file's (sorted) best hits into ours and keep the best `limit`.
                if !f.hits.is_empty() {
                    let mut merged = Vec::with_capacity(self.hits.len() + f.hits.len());
                    let (mut a, mut b) =
                        (std::mem::take(&mut self.hits).into_iter().peekable(), f.hits.into_iter().peekable());
                    while merged.len() < job.limit {
                        let take_a = match (a.peek(), b.peek()) {
                            (Some(x), Some(y)) => job.order(x, y).is_le(),
                            (Some(_), None) => true,
                            (None, Some(_)) => false,
                            (None, None) => break,
                        };
                        merged.push(if take_a { a.next() } else { b.next() }.expect("peeked"));
                    }
                    self.hits = merged;
                }
            }
        }
    }

    /// Sorts what depends on arrival order (skips, examples) so the answer is deterministic.
    pub fn finish(&mut self) {
        self.skipped_files.sort_by(|a, b| a.path.cmp(&b.path));
        self.invalid_at.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    }
}

/// Runs a whole search on the current weft runtime and merges it.
pub async fn collect(files: Arc<FileSet>, root: &Path, job: Arc<Job>, threads: usize) -> Answer {
    let mut answer = Answer { skipped_files: files.skipped.clone(), ..Answer::default() };
    let mut scan = Scan::start(files.clone(), job.clone(), threads, FileOrder::LargestFirst);
    let mut reported = vec![false; files.len()];
    while let Some(r) = scan.next().await {
        reported[r.file as usize] = true;
        answer.add(&files.paths[r.file as usize], root, &job, r.outcome);
    }
    // A file that never reported had its search panic (a bug): say so rather than drop it.
    for (i, done) in reported.iter().enumerate() {
        if !done {
            answer.skipped_files.push(Skipped {
                path: files.paths[i].display().to_string(),
                reason: "the search of this file failed (a bug in weft-search; please report it)".into(),
            });
        }
    }
    answer.finish();
    if !job.details {
        fill_details(&mut answer.hits, &job.query, |f| &files.paths[f as usize]);
    }
    answer
}

/// Gives hits found without details (see [`crate::search::Job::details`]) their snippet and ids, re-reading
/// each one's line; `path` names a hit's file.
pub fn fill_details<'p>(hits: &mut [Hit], query: &crate::query::Query, path: impl Fn(u32) -> &'p std::path::Path) {
    let mut text = String::new();
    for h in hits {
        let Ok(line) = reread(path(h.file), h) else { continue };
        let Ok(r) = crate::record::parse(&line, &mut text) else { continue };
        (h.snippet, h.match_range) = crate::search::snippet(query, &text[..r.content_len]);
        h.session_id = r.session_id.as_deref().unwrap_or("").to_owned();
        h.uuid = r.uuid.as_deref().unwrap_or("").to_owned();
        h.cwd = r.cwd.as_deref().unwrap_or("").to_owned();
    }
}

/// Re-reads a hit's line from its file (for `--raw` and `--full-text`).
pub fn reread(path: &Path, hit: &Hit) -> std::io::Result<String> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path)?;
    let mut buf = vec![0; hit.len as usize];
    f.read_exact_at(&mut buf, hit.offset)?;
    String::from_utf8(buf).map_err(std::io::Error::other)
}

/// The whole content text of a hit (its line re-read and parsed again).
pub fn full_text(path: &Path, hit: &Hit) -> std::io::Result<String> {
    let line = reread(path, hit)?;
    let mut text = String::new();
    let r = crate::record::parse(&line, &mut text)
        .map_err(|_| std::io::Error::other("the line changed since it was searched"))?;
    text.truncate(r.content_len);
    Ok(text)
}
