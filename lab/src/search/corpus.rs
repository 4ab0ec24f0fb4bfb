//! The corpus generator: `DIR/<project>/<session-uuid>.jsonl` files shaped like Claude Code
//! transcripts, deterministic per seed.
//!
//! Shape per line, as Claude Code writes it (and as ccms's strict schema requires, so ccms reads
//! every line the bench compares): `type` (`user` / `assistant` / `system` / `summary`, and now
//! and then a `file-history-snapshot`, which is not a message), `uuid`, `parentUuid`,
//! `isSidechain`, `userType`, `sessionId`, ISO-8601 `timestamp`, `cwd`, `version`; a system line's
//! top-level `content` and `isMeta`; `message{role, content}` where content is a string or parts
//! (`text`, `thinking{signature}`, `image`, `tool_use{id,name,input}`, `tool_result{content}` as a
//! string, an empty string, text parts, or text and image parts), assistant messages with `id`,
//! `model` and `usage`. Text carries `"`, `\`, tabs, ANSI escapes and non-ASCII (including the
//! two letters that lower-case to ASCII); one line in 40 is written with every non-ASCII character
//! and `/` escaped (`\u00e9`, `\/`), one in 400 with every `e` escaped too (`\u0065`), so a
//! search that looks at raw bytes must handle escapes to get the same answer.
//! File sizes are log-normal (median ~150 KB, σ = 1.1, capped at 10 MB) so a few files dominate
//! the bytes, like real session directories; tool results carry the long lines (up to ~2 MB);
//! about one line in 3,000 is truncated JSON. Words are drawn from a Zipf-weighted vocabulary, so
//! common words hit on most lines and rare ones on a handful (queries of varied selectivity).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::framework::stats::SplitMix64;

const MEDIAN_BYTES: f64 = 150_000.0;
const SIGMA: f64 = 1.1;
const MAX_FILE_BYTES: f64 = 10_000_000.0;
const MIN_FILE_BYTES: f64 = 2_000.0;

/// Most frequent first (Zipf weights 1/rank).
const WORDS: &[&str] = &[
    "the",
    "to",
    "and",
    "a",
    "of",
    "in",
    "is",
    "it",
    "that",
    "for",
    "this",
    "with",
    "we",
    "file",
    "function",
    "error",
    "test",
    "code",
    "let",
    "need",
    "can",
    "be",
    "on",
    "not",
    "use",
    "fix",
    "add",
    "now",
    "check",
    "run",
    "build",
    "should",
    "return",
    "value",
    "type",
    "change",
    "struct",
    "update",
    "implement",
    "module",
    "config",
    "async",
    "runtime",
    "result",
    "string",
    "import",
    "path",
    "data",
    "read",
    "write",
    "line",
    "looks",
    "issue",
    "output",
    "command",
    "cargo",
    "rust",
    "python",
    "server",
    "client",
    "request",
    "response",
    "query",
    "search",
    "index",
    "cache",
    "thread",
    "pool",
    "tokio",
    "future",
    "await",
    "spawn",
    "task",
    "channel",
    "buffer",
    "parse",
    "json",
    "schema",
    "database",
    "migration",
    "component",
    "react",
    "props",
    "state",
    "hook",
    "render",
    "api",
    "endpoint",
    "token",
    "auth",
    "session",
    "user",
    "message",
    "stream",
    "socket",
    "timeout",
    "retry",
    "latency",
    "benchmark",
    "performance",
    "memory",
    "allocation",
    "lifetime",
    "borrow",
    "trait",
    "generic",
    "macro",
    "closure",
    "iterator",
    "vector",
    "hashmap",
    "mutex",
    "atomic",
    "deadlock",
    "panic",
    "unwrap",
    "option",
    "serde",
    "regex",
    "docker",
    "kubernetes",
    "deploy",
    "pipeline",
    "workflow",
    "github",
    "commit",
    "branch",
    "merge",
    "rebase",
    "refactor",
    "lint",
    "clippy",
    "format",
    "warning",
    "compile",
    "linker",
    "segfault",
    "valgrind",
    "profiler",
    "flamegraph",
    "histogram",
    "percentile",
    "throughput",
    "backpressure",
    "scheduler",
    "worker",
    "steal",
    "queue",
    "epoll",
    "kqueue",
    "io_uring",
    "syscall",
    "mmap",
    "inode",
    "permission",
    "symlink",
    "utf8",
    "unicode",
    "terraform",
    "postgres",
    "sqlite",
    "redis",
    "kafka",
    "grpc",
    "protobuf",
    "websocket",
    "nginx",
    "certificate",
    "oauth",
    "jwt",
    "cors",
    "csrf",
    "graphql",
    "webpack",
    "vite",
    "typescript",
    "eslint",
    "prettier",
    "jest",
    "pytest",
    "numpy",
    "pandas",
    "tensor",
    "gradient",
    "embedding",
    "transformer",
    "tokenizer",
    "quantization",
    "ollama",
    "llama",
    "inference",
    "prompt",
    "context",
    "window",
    "hallucination",
    "agent",
    "orchestrator",
    "supervisor",
    "actor",
    "mailbox",
    "fiber",
    "coroutine",
    "continuation",
    "trampoline",
    "monomorphization",
    "vtable",
    "niche",
    "repr",
    "simd",
    "avx2",
    "neon",
    "bitset",
    "bloom",
    "trie",
    "btree",
    "skiplist",
    "wal",
    "compaction",
    "tombstone",
    "snapshot",
    "raft",
    "paxos",
    "gossip",
    "quorum",
    "linearizable",
    "serializable",
    "idempotent",
    "exactly-once",
    "watermark",
    "sharding",
    "rendezvous",
    "consistent-hashing",
    "zanzibar",
];
const TOOLS: &[&str] = &["Bash", "Read", "Edit", "Write", "Grep", "Glob", "TodoWrite", "WebFetch", "Task"];
const PROJECTS: &[&str] = &[
    "weft",
    "ccms",
    "dotfiles",
    "blog",
    "api-gateway",
    "ml-pipeline",
    "infra",
    "mobile-app",
    "search-engine",
    "notes",
    "compiler",
    "game-engine",
    "data-warehouse",
    "chat-bot",
    "auth-service",
    "frontend",
    "billing",
    "crawler",
    "scheduler",
    "docs",
];
const EXTENSIONS: &[&str] = &["rs", "py", "ts", "tsx", "go", "toml", "md", "yaml", "json", "sql"];

/// How to generate.
#[derive(Clone, Debug, clap::Args)]
pub struct CorpusSpec {
    /// Session files to write.
    #[arg(long, default_value_t = 2700)]
    pub files: usize,
    /// The generator's seed (same seed, same corpus).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Scale sizes so the corpus totals about this many MB (None: the natural distribution).
    #[arg(long)]
    pub total_mb: Option<u64>,
}

/// What was written.
#[derive(Clone, Debug, Default)]
pub struct CorpusStats {
    pub files: usize,
    pub bytes: u64,
    pub lines: u64,
    pub invalid_lines: u64,
    pub largest_file: u64,
    pub median_file: u64,
}

struct Gen {
    rng: SplitMix64,
    cumulative: Vec<f64>,
}

impl Gen {
    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        self.rng.index(n)
    }
    fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
    fn word(&mut self) -> &'static str {
        let total = *self.cumulative.last().expect("vocabulary is not empty");
        let u = self.unit() * total;
        WORDS[self.cumulative.partition_point(|&c| c < u).min(WORDS.len() - 1)]
    }
    fn sentence(&mut self, words: usize, out: &mut String) {
        for i in 0..words {
            if i > 0 {
                out.push(if self.below(12) == 0 { '\n' } else { ' ' });
            }
            out.push_str(self.word());
            if self.below(15) == 0 {
                out.push('.');
            }
        }
    }
    fn text(&mut self, min: usize, max: usize) -> String {
        let mut s = String::new();
        let n = min + self.below(max - min + 1);
        self.sentence(n, &mut s);
        match self.below(60) {
            0 => s.push_str(" — naïve café Überprüfung 日本語 ✓"),
            1 => s.push_str(" \u{212a}elvin İstanbul 🦀 ok"),
            2 => s.push_str(" with \"quotes\" and C:\\path\\to\tfile and /usr/bin/env"),
            3 => s.push_str(" \u{1b}[31merror\u{1b}[0m: build failed"),
            _ => {}
        }
        s
    }
    fn uuid(&mut self) -> String {
        let a = self.rng.next_u64();
        let b = self.rng.next_u64();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            (b >> 48) & 0x3fff | 0x8000,
            b & 0xffff_ffff_ffff
        )
    }
    /// A tool result: log or source lines, `bytes` long.
    fn tool_output(&mut self, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 128);
        let mut n = 1;
        while s.len() < bytes {
            match self.below(3) {
                0 => s.push_str(&format!("{n:>5}\u{2192}    let {} = {}(&{});", self.word(), self.word(), self.word())),
                1 => s.push_str(&format!(
                    "[INFO] {} {} {} in {}ms",
                    self.word(),
                    self.word(),
                    self.word(),
                    self.below(900)
                )),
                _ => self.sentence(8, &mut s),
            }
            s.push('\n');
            n += 1;
        }
        s
    }
}

/// ISO-8601 UTC with milliseconds from Unix milliseconds (civil-from-days, proleptic Gregorian).
pub fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let sod = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", sod / 3600, sod % 3600 / 60, sod % 60, ms % 1000)
}

/// Writes the corpus into `dir` (which must be empty or absent); returns what it wrote.
pub fn generate(spec: &CorpusSpec, dir: &Path) -> std::io::Result<CorpusStats> {
    let cumulative = WORDS
        .iter()
        .enumerate()
        .scan(0.0, |acc, (rank, _)| {
            *acc += 1.0 / (rank as f64 + 1.0);
            Some(*acc)
        })
        .collect();
    let mut g = Gen { rng: SplitMix64::new(spec.seed), cumulative };
    let mut sizes: Vec<f64> = (0..spec.files)
        .map(|_| (MEDIAN_BYTES * (SIGMA * g.normal()).exp()).clamp(MIN_FILE_BYTES, MAX_FILE_BYTES))
        .collect();
    if let Some(mb) = spec.total_mb {
        let scale = (mb as f64 * 1e6) / sizes.iter().sum::<f64>().max(1.0);
        sizes.iter_mut().for_each(|s| *s = (*s * scale).clamp(MIN_FILE_BYTES, MAX_FILE_BYTES));
    }
    let mut stats = CorpusStats::default();
    let mut written = Vec::with_capacity(spec.files);
    for (i, &size) in sizes.iter().enumerate() {
        let project = PROJECTS[(g.below(PROJECTS.len()) * g.below(PROJECTS.len())) / PROJECTS.len()];
        let cwd = format!("/home/dev/src/{project}");
        let pdir = dir.join(cwd.replace('/', "-"));
        std::fs::create_dir_all(&pdir)?;
        let session = g.uuid();
        let path: PathBuf = pdir.join(format!("{session}.jsonl"));
        let (bytes, lines, invalid) = write_session(&mut g, &path, &session, &cwd, size as u64, i)?;
        stats.bytes += bytes;
        stats.lines += lines;
        stats.invalid_lines += invalid;
        stats.largest_file = stats.largest_file.max(bytes);
        written.push(bytes);
    }
    written.sort_unstable();
    stats.files = written.len();
    stats.median_file = written.get(written.len() / 2).copied().unwrap_or(0);
    Ok(stats)
}

fn write_session(
    g: &mut Gen,
    path: &Path,
    session: &str,
    cwd: &str,
    target: u64,
    index: usize,
) -> std::io::Result<(u64, u64, u64)> {
    let mut w = BufWriter::with_capacity(256 << 10, std::fs::File::create(path)?);
    let mut c = Counters::default();
    // Sessions between 2025-01-01 and ~2025-11; the index breaks timestamp ties between files.
    let mut now_ms = 1_735_689_600_000 + g.rng.next_u64() % (300 * 86_400_000) + index as u64;
    let mut parent: Option<String> = None;
    let version = format!("1.0.{}", 20 + g.below(60));
    if g.below(3) == 0 {
        let summary = g.text(4, 12);
        let leaf = g.uuid();
        emit(g, &json!({"type": "summary", "summary": summary, "leafUuid": leaf}), &mut w, &mut c)?;
    }
    let mut turn = 0usize;
    while c.bytes < target {
        now_ms += 1000 + g.rng.next_u64() % 90_000;
        let uuid = g.uuid();
        let base = |kind: &str, message: serde_json::Value, uuid: &str, parent: &Option<String>| {
            json!({
                "parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
                "sessionId": session, "version": version, "type": kind, "message": message,
                "uuid": uuid, "timestamp": iso8601(now_ms),
            })
        };
        let value = match turn % 3 {
            0 if g.below(25) == 0 => {
                let mut v = base("system", json!(null), &uuid, &parent);
                let obj = v.as_object_mut().expect("an object");
                obj.remove("message");
                obj.insert("content".into(), json!(format!("Running hook {} … {}", g.word(), g.word())));
                obj.insert("isMeta".into(), json!(false));
                obj.insert("level".into(), json!("info"));
                v
            }
            0 if g.below(60) == 0 => {
                json!({"type": "file-history-snapshot", "messageId": uuid, "snapshot": {"note": g.text(3, 10)}})
            }
            0 if g.below(30) == 0 => base(
                "user",
                json!({"role": "user", "content": [{"type": "text", "text": g.text(4, 20)},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}),
                &uuid,
                &parent,
            ),
            0 => base("user", json!({"role": "user", "content": g.text(8, 60)}), &uuid, &parent),
            1 => {
                let mut parts = Vec::new();
                if g.below(2) == 0 {
                    parts.push(json!({"type": "thinking", "thinking": g.text(30, 250), "signature": g.uuid()}));
                }
                parts.push(json!({"type": "text", "text": g.text(10, 150)}));
                let tool = TOOLS[g.below(TOOLS.len())];
                let file = format!("{cwd}/src/{}.{}", g.word(), EXTENSIONS[g.below(EXTENSIONS.len())]);
                let input = match tool {
                    "Bash" => {
                        let mut cmd = format!("cargo {} --{}", g.word(), g.word());
                        for _ in 0..g.below(12) {
                            cmd.push(' ');
                            cmd.push_str(g.word());
                        }
                        json!({"command": cmd, "description": g.text(3, 8)})
                    }
                    "Grep" | "Glob" => json!({"pattern": format!("{}.*{}", g.word(), g.word()), "path": cwd}),
                    "Task" | "WebFetch" | "TodoWrite" => {
                        json!({"description": g.text(3, 12), "prompt": g.text(10, 40)})
                    }
                    _ => json!({"file_path": file}),
                };
                let id = format!("toolu_{:016x}", g.rng.next_u64());
                parts.push(json!({"type": "tool_use", "id": id, "name": tool, "input": input}));
                let usage = json!({"input_tokens": g.below(5000), "cache_creation_input_tokens": g.below(2000),
                    "cache_read_input_tokens": g.below(90000), "output_tokens": g.below(3000), "service_tier": "standard"});
                base(
                    "assistant",
                    json!({"id": format!("msg_{:016x}", g.rng.next_u64()), "type": "message", "role": "assistant",
                        "model": "claude-sonnet-4", "content": parts, "stop_reason": null, "stop_sequence": null,
                        "usage": usage}),
                    &uuid,
                    &parent,
                )
            }
            _ => {
                // Heavy-tailed tool output: mostly a few KB, sometimes hundreds of KB to ~2 MB.
                let len = match g.below(100) {
                    0 => 200_000 + g.below(1_800_000),
                    1..=9 => 20_000 + g.below(80_000),
                    _ => 200 + g.below(6_000),
                };
                let len = len.min((target.saturating_sub(c.bytes) as usize).max(200));
                let content = match g.below(40) {
                    0..=3 => json!([{"type": "text", "text": g.tool_output(len)}]),
                    4 => json!(""),
                    5 => json!([{"type": "text", "text": g.text(3, 9)},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]),
                    _ => json!(g.tool_output(len)),
                };
                let id = format!("toolu_{:016x}", g.rng.next_u64());
                let mut result = json!({"type": "tool_result", "tool_use_id": id, "content": content});
                if g.below(15) == 0 {
                    result["is_error"] = json!(true);
                }
                base("user", json!({"role": "user", "content": [result]}), &uuid, &parent)
            }
        };
        emit(g, &value, &mut w, &mut c)?;
        parent = Some(uuid);
        turn += 1;
    }
    w.flush()?;
    Ok((c.bytes, c.lines, c.invalid))
}

#[derive(Default)]
struct Counters {
    bytes: u64,
    lines: u64,
    invalid: u64,
}

/// Writes strings with more escapes than needed: every non-ASCII character as `\uXXXX`
/// (surrogate pairs above the BMP), `/` as `\/`, and with `letter_e`, every `e` as `\u0065`.
struct Escaping {
    letter_e: bool,
}

impl serde_json::ser::Formatter for Escaping {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> std::io::Result<()> {
        for ch in fragment.chars() {
            match ch {
                '/' => w.write_all(b"\\/")?,
                'e' if self.letter_e => w.write_all(b"\\u0065")?,
                c if c.is_ascii() => w.write_all(&[c as u8])?,
                c => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        write!(w, "\\u{u:04x}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Writes one line; about one in 3,000 is cut in half (invalid JSON, counted); one in 40 is
/// written with extra escapes (see [`Escaping`]).
fn emit(g: &mut Gen, value: &serde_json::Value, w: &mut impl Write, c: &mut Counters) -> std::io::Result<()> {
    use serde::Serialize;
    let mut line = Vec::new();
    match g.below(400) {
        0 => value.serialize(&mut serde_json::Serializer::with_formatter(&mut line, Escaping { letter_e: true })),
        1..=10 => value.serialize(&mut serde_json::Serializer::with_formatter(&mut line, Escaping { letter_e: false })),
        _ => value.serialize(&mut serde_json::Serializer::new(&mut line)),
    }
    .map_err(std::io::Error::other)?;
    if g.below(3000) == 0 {
        line.truncate(line.len() / 2);
        c.invalid += 1;
    }
    line.push(b'\n');
    c.bytes += line.len() as u64;
    c.lines += 1;
    w.write_all(&line)
}
