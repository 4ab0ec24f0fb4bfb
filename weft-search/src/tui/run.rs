//! The interactive search's loop: keys in, scans started and cancelled, hits merged as files
//! report, the screen redrawn.
//!
//! Every change of the query or a filter cancels the scan in flight ([`Scan::cancel`]: its
//! closures stop at their next line and nothing more is delivered) and starts a new one at
//! once; there is no debounce, so the first hits of what was typed show as soon as the newest
//! file that has any is read. Files are read newest first. The loop itself never reads a file
//! except to show one message or one session, so a scan never freezes the screen.
//!
//! With `WEFT_SEARCH_TUI_LOG=PATH`, each search appends lines `first query=… ms=…` (its first
//! hit on screen), `done query=… ms=… hits=…` or `cancelled query=… ms=…`, times from the
//! keystroke: how the lab and the tmux test measure latency and see cancellation.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEventKind};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::prelude::CrosstermBackend;
use ratatui::Terminal;

use super::state::{Action, Copy, Message, Screen, SessionLine, State};
use super::view::{self, Names};
use super::Setup;
use crate::answer::{self, Answer};
use crate::project;
use crate::query::Query;
use crate::record::{self, Kind};
use crate::scan::{FileOrder, Scan};
use crate::search::{Filter, Job};

/// Hits kept and shown per search.
const SHOWN: usize = 500;

/// Restores the terminal even when drawing panics.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = disable_raw_mode();
        let _ = execute!(io::stdout(), LeaveAlternateScreen);
    }
}

struct Projects<'a>(&'a Setup);

impl Names for Projects<'_> {
    fn project(&self, file: u32) -> String {
        self.0
            .files
            .paths
            .get(file as usize)
            .and_then(|p| project::project_dir(p, &self.0.root))
            .unwrap_or("")
            .to_owned()
    }
}

/// The search in flight and what it has found so far.
struct Current {
    scan: Scan,
    job: Arc<Job>,
    answer: Answer,
    started: Instant,
    first_result: Option<Duration>,
    first_logged: bool,
    query: String,
}

fn log_line(log: &mut Option<std::fs::File>, event: &str, c: &Current, extra: &str) {
    if let Some(f) = log.as_mut() {
        let _ = writeln!(f, "{event} query={:?} ms={:.1}{extra}", c.query, c.started.elapsed().as_secs_f64() * 1e3);
    }
}

fn start(
    setup: &Setup,
    state: &mut State,
    current: &mut Option<Current>,
    started: Instant,
    log: &mut Option<std::fs::File>,
) {
    if let Some(mut old) = current.take() {
        old.scan.cancel();
        log_line(log, "cancelled", &old, "");
    }
    state.search_started();
    let query = match state.query.trim() {
        "" => Query::all(),
        q => match Query::parse(q) {
            Ok(q) => q,
            Err(e) => {
                state.scanning = false;
                state.error = Some(e.to_string());
                return;
            }
        },
    };
    let filter = Filter { role: state.role_filter().or(setup.filter.role), ..setup.filter.clone() };
    let job = Arc::new(Job::new(query, filter, SHOWN, state.oldest_first, false).with_details());
    let scan = Scan::start(setup.files.clone(), job.clone(), setup.threads, FileOrder::NewestFirst);
    *current = Some(Current {
        scan,
        job,
        answer: Answer::default(),
        started,
        first_result: None,
        first_logged: false,
        query: state.query.clone(),
    });
}

/// Puts the answer so far on screen.
fn show(state: &mut State, answer: &Answer) {
    state.hits = answer.hits.clone();
    state.total_hits = answer.total_hits;
    state.selected = state.selected.min(state.hits.len().saturating_sub(1));
}

/// Takes what the scan has delivered; true when something changed.
fn drain(setup: &Setup, state: &mut State, current: &mut Option<Current>, log: &mut Option<std::fs::File>) -> bool {
    let Some(c) = current.as_mut() else { return false };
    let mut changed = false;
    loop {
        match c.scan.try_next() {
            Ok(Some(r)) => {
                c.answer.add(&setup.files.paths[r.file as usize], &setup.root, &c.job, r.outcome);
                state.files_done += 1;
                changed = true;
            }
            Ok(None) => break,
            Err(()) => {
                state.scanning = false;
                changed = true;
                show(state, &c.answer);
                if !c.first_logged && !state.hits.is_empty() {
                    // Finished within one turn of the loop: drawn right after this.
                    log_line(log, "first", c, "");
                }
                log_line(log, "done", c, &format!(" hits={}", c.answer.total_hits));
                let skipped = c.answer.skipped_files.len();
                let unread = c.answer.invalid_lines + c.answer.oversized_lines;
                if skipped + unread as usize > 0 {
                    state.notice = Some(format!("INCOMPLETE: {skipped} files and {unread} lines not read"));
                }
                *current = None;
                return changed;
            }
        }
    }
    if changed {
        show(state, &c.answer);
        if c.first_result.is_none() && !state.hits.is_empty() {
            c.first_result = Some(c.started.elapsed());
        }
    }
    changed
}

/// The messages of one session in file order.
fn load_session(path: &Path, session_id: &str) -> io::Result<Vec<SessionLine>> {
    let data = std::fs::read(path)?;
    let mut out = Vec::new();
    let mut text = String::new();
    for (i, line) in data.split(|&b| b == b'\n').enumerate() {
        let Ok(s) = std::str::from_utf8(line) else { continue };
        let Ok(r) = record::parse(s, &mut text) else { continue };
        if r.kind != Kind::Summary && r.session_id.as_deref() != Some(session_id) {
            continue;
        }
        out.push(SessionLine {
            line: i as u32 + 1,
            kind: r.kind,
            timestamp: r.timestamp.as_deref().unwrap_or("").to_owned(),
            uuid: r.uuid.as_deref().unwrap_or("").to_owned(),
            text: text[..r.content_len].to_owned(),
        });
    }
    Ok(out)
}

/// Standard base64 with padding (RFC 4648), for OSC 52.
fn base64(bytes: &[u8]) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut enc = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            enc.push(if i <= chunk.len() { B64[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
    }
    enc
}

/// OSC 52: the terminal (and tmux, ssh) puts `text` on the clipboard.
fn osc52(text: &str) -> io::Result<()> {
    let mut out = io::stdout();
    write!(out, "\x1b]52;c;{}\x07", base64(text.as_bytes()))?;
    out.flush()
}

/// What the current screen is about, for the copy keys.
fn focus(state: &State, setup: &Setup) -> Option<(String, String, String)> {
    let path = |file: u32| setup.files.paths.get(file as usize).map(|p| p.display().to_string()).unwrap_or_default();
    match &state.screen {
        Screen::Message { message, .. } => Some((message.session_id.clone(), path(message.file), message.text.clone())),
        Screen::Session { file, session_id, lines, selected } => {
            Some((session_id.clone(), path(*file), lines.get(*selected).map(|l| l.text.clone()).unwrap_or_default()))
        }
        _ => None,
    }
}

/// Runs the interactive search until the user quits; returns what to print after it.
pub fn run(setup: &Setup) -> io::Result<Option<String>> {
    let rt = weft::runtime::Builder::new_current_thread().max_blocking_threads(setup.threads.max(1)).build()?;
    let _enter = rt.enter();
    let mut log = match std::env::var_os("WEFT_SEARCH_TUI_LOG") {
        Some(p) => Some(std::fs::OpenOptions::new().create(true).append(true).open(p)?),
        None => None,
    };
    let mut state = State::new(setup.files.len());
    enable_raw_mode()?;
    let _guard = TerminalGuard;
    execute!(io::stdout(), EnterAlternateScreen)?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    let names = Projects(setup);
    let mut current: Option<Current> = None;
    start(setup, &mut state, &mut current, Instant::now(), &mut log);
    let mut dirty = true;
    loop {
        dirty |= drain(setup, &mut state, &mut current, &mut log);
        if dirty {
            terminal.draw(|f| view::draw(f, &state, &names))?;
            dirty = false;
            // Logged once drawn: the time a user waits to see the first hit.
            if let Some(c) = current.as_mut().filter(|c| c.first_result.is_some() && !c.first_logged) {
                c.first_logged = true;
                log_line(&mut log, "first", c, "");
            }
        }
        let wait = if current.is_some() { Duration::from_millis(8) } else { Duration::from_millis(250) };
        if !event::poll(wait)? {
            continue;
        }
        let pressed = Instant::now();
        let ev = event::read()?;
        let Event::Key(key) = ev else {
            dirty = true;
            continue;
        };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        dirty = true;
        state.notice = None;
        match state.key(key) {
            Action::None => {}
            Action::Search => start(setup, &mut state, &mut current, pressed, &mut log),
            Action::Quit => return Ok(None),
            Action::Resume(id) => return Ok(Some(format!("claude --resume {id}"))),
            Action::OpenHit(i) => {
                let Some(h) = state.hits.get(i).cloned() else { continue };
                let path = &setup.files.paths[h.file as usize];
                match answer::full_text(path, &h) {
                    Ok(text) => {
                        let message = Message {
                            file: h.file,
                            line: h.line,
                            kind: h.kind,
                            timestamp: h.timestamp,
                            session_id: h.session_id,
                            uuid: h.uuid,
                            text,
                        };
                        state.screen = Screen::Message { message, scroll: 0, from_session: false };
                    }
                    Err(e) => state.notice = Some(format!("cannot read {}: {e}", path.display())),
                }
            }
            Action::OpenSession { file, session_id } => {
                let path = &setup.files.paths[file as usize];
                match load_session(path, &session_id) {
                    Ok(lines) => state.screen = Screen::Session { file, session_id, lines, selected: 0 },
                    Err(e) => state.notice = Some(format!("cannot read {}: {e}", path.display())),
                }
            }
            Action::Copy(what) => {
                if let Some((id, file, text)) = focus(&state, setup) {
                    let (value, name) = match what {
                        Copy::SessionId => (id, "session id"),
                        Copy::FilePath => (file, "file path"),
                        Copy::Message => (text, "message"),
                    };
                    osc52(&value)?;
                    state.notice = Some(format!("copied the {name} ({} bytes) to the clipboard", value.len()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(plain.as_bytes()), enc);
        }
    }
}
