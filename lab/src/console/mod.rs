//! `weft-lab console [URL]`: a live terminal view of a running weft program, read from its
//! `weft::metrics::serve` endpoint (`/metrics` and `/tasks`) once a second.
//!
//! # Glossary
//! * **scrape** (`scrape.rs`) — one read of both endpoints, parsed: the Prometheus text into
//!   series, the task dump JSON into rows. Rates and the blocking-queue p99 come from the two
//!   latest scrapes (a window of about one second).
//! * **view** (`view.rs`) — the state the screen is drawn from (two scrapes, the sort key, the
//!   last error) and the pure drawing function.
//! * **demo** (`demo.rs`) — `weft-lab console-demo`: a program to look at, with a task whose
//!   every poll blocks its worker for 50 ms.
//!
//! # Shape
//! One thread: scrape (reqwest on a current-thread tokio runtime, each request timed out
//! after 0.9 s), draw, then wait for a key until the next second. A failed scrape keeps the
//! last good numbers on screen and shows the error; the program being watched never notices
//! the console beyond two HTTP requests a second.
//!
//! Rejected alternatives: tokio-console's design (a tracing subscriber and a gRPC stream of
//! task events) needs instrumentation in the program and costs memory per event; polling the
//! endpoints the program already serves for Prometheus costs it nothing while no one looks,
//! and one read per second is enough for a human. A background scraping thread would keep
//! keys responsive during a slow scrape, but the 0.9 s timeout already bounds that.
//!
//! **Architecture Invariant:** the console reads the program only through its public HTTP
//! endpoints; it links no runtime internals, so it can watch any weft build that serves them.

pub mod scrape;
pub mod view;

use std::io;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::prelude::CrosstermBackend;
use ratatui::Terminal;

use view::{SortBy, View};

/// `weft-lab console` arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The program's metrics endpoint (what `weft::metrics::serve` returned); `/metrics` and
    /// `/tasks` are read under it.
    #[arg(default_value = "http://127.0.0.1:9464")]
    pub url: String,
    /// Seconds between refreshes.
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,
}

/// The base URL: scheme added if missing, a trailing `/metrics` or `/` dropped.
pub fn base_url(url: &str) -> String {
    let url = if url.contains("://") { url.to_string() } else { format!("http://{url}") };
    let url = url.trim_end_matches('/');
    url.strip_suffix("/metrics").unwrap_or(url).to_string()
}

/// Restores the terminal even when drawing panics.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = disable_raw_mode();
        let _ = execute!(io::stdout(), LeaveAlternateScreen);
    }
}

fn watch(args: Args) -> Result<(), String> {
    if !(args.interval > 0.0 && args.interval.is_finite()) {
        return Err(format!("--interval must be a positive number of seconds (got {})", args.interval));
    }
    let interval = Duration::from_secs_f64(args.interval);
    let base = base_url(&args.url);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let client = reqwest::Client::new();
    let mut view = View::new(base.clone());

    enable_raw_mode().map_err(|e| format!("cannot put the terminal in raw mode: {e}"))?;
    let _guard = TerminalGuard;
    execute!(io::stdout(), EnterAlternateScreen).map_err(|e| e.to_string())?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout())).map_err(|e| e.to_string())?;
    terminal.clear().map_err(|e| e.to_string())?;

    let mut next = Instant::now();
    loop {
        if Instant::now() >= next {
            view.update(rt.block_on(scrape::scrape(&client, &base)));
            next = Instant::now() + interval;
        }
        terminal.draw(|f| view::draw(f, &view)).map_err(|e| e.to_string())?;
        let wait = next.saturating_duration_since(Instant::now());
        if event::poll(wait).map_err(|e| e.to_string())? {
            if let Event::Key(key) = event::read().map_err(|e| e.to_string())? {
                if key.kind != KeyEventKind::Press {
                    continue;
                }
                match key.code {
                    KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                    KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return Ok(()),
                    KeyCode::Char('p') => view.sort = SortBy::PollTime,
                    KeyCode::Char('a') => view.sort = SortBy::Age,
                    _ => {}
                }
            }
        }
    }
}

/// `weft-lab console`.
pub fn run(args: Args) -> Result<std::process::ExitCode, String> {
    watch(args).map(|()| std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base_url_accepts_what_serve_prints() {
        assert_eq!(super::base_url("127.0.0.1:9464"), "http://127.0.0.1:9464");
        assert_eq!(super::base_url("http://127.0.0.1:9464/metrics"), "http://127.0.0.1:9464");
        assert_eq!(super::base_url("http://[::1]:80/"), "http://[::1]:80");
    }
}
