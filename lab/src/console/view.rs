//! Drawing one frame of the console (ratatui): the header, the workers table, the runtime
//! panel (global queue, blocking pool, timers, I/O), the slowest polls and the task list.
//! Pure: everything shown comes from the two latest scrapes in [`View`], so a frame can be
//! rendered into a test backend as well as a terminal.

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table};
use ratatui::Frame;

use super::scrape::{Rates, Scrape, TaskRow};

/// The task list's order (keys `p` and `a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    PollTime,
    Age,
}

impl SortBy {
    fn label(self) -> &'static str {
        match self {
            SortBy::PollTime => "poll time",
            SortBy::Age => "age",
        }
    }
}

pub struct View {
    pub url: String,
    pub sort: SortBy,
    pub latest: Option<Scrape>,
    pub previous: Option<Scrape>,
    /// The last refresh's error, shown until a refresh succeeds.
    pub error: Option<String>,
    pub refreshes: u64,
}

impl View {
    pub fn new(url: String) -> View {
        View { url, sort: SortBy::PollTime, latest: None, previous: None, error: None, refreshes: 0 }
    }

    pub fn update(&mut self, result: Result<Scrape, String>) {
        self.refreshes += 1;
        match result {
            Ok(s) => {
                self.previous = self.latest.replace(s);
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
    }
}

fn fmt_rate(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

fn fmt_secs(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(s) if s.is_infinite() => "> max".into(),
        Some(s) if s >= 1.0 => format!("{s:.2} s"),
        Some(s) if s >= 1e-3 => format!("{:.1} ms", s * 1e3),
        Some(s) => format!("{:.0} us", s * 1e6),
    }
}

/// A sort key for an optional duration (absent sorts last).
fn secs(v: Option<f64>) -> f64 {
    v.unwrap_or(-1.0)
}

fn panel(title: &str) -> Block<'_> {
    Block::default().borders(Borders::ALL).title(title)
}

pub fn draw(frame: &mut Frame<'_>, view: &View) {
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(4), Constraint::Length(9), Constraint::Length(8), Constraint::Min(5)])
        .split(frame.area());
    let Some(now) = &view.latest else {
        let msg = view.error.clone().unwrap_or_else(|| "connecting...".into());
        frame.render_widget(Paragraph::new(format!("weft console  {}\n{msg}", view.url)).block(panel("weft")), rows[0]);
        return;
    };
    let rates = Rates { now, before: view.previous.as_ref() };
    header(frame, rows[0], view, &rates);
    let middle = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(60), Constraint::Percentage(40)])
        .split(rows[1]);
    workers(frame, middle[0], &rates);
    runtime(frame, middle[1], &rates);
    slowest(frame, rows[2], &now.tasks);
    tasks(frame, rows[3], view.sort, &now.tasks);
}

fn header(frame: &mut Frame<'_>, area: Rect, view: &View, r: &Rates<'_>) {
    let s = &r.now.series;
    let n = |k: &str| s.get(k).map_or_else(|| "-".into(), |v| format!("{v:.0}"));
    let first = format!(
        "weft console  {}   workers: {}   alive tasks: {}   spawned/s: {}   remote schedules/s: {}",
        view.url,
        n("weft_workers"),
        n("weft_alive_tasks"),
        fmt_rate(r.rate(|s| s.get("weft_spawned_tasks_total"))),
        fmt_rate(r.rate(|s| s.get("weft_remote_schedule_total"))),
    );
    let second = match &view.error {
        Some(e) => format!("refresh {} failed: {e}", view.refreshes),
        None => {
            format!("refresh {}   sorted by {}   keys: p poll time, a age, q quit", view.refreshes, view.sort.label())
        }
    };
    frame.render_widget(Paragraph::new(vec![Line::from(first), Line::from(second)]).block(panel("weft")), area);
}

fn workers(frame: &mut Frame<'_>, area: Rect, r: &Rates<'_>) {
    let s = &r.now.series;
    let count = s.get("weft_workers").unwrap_or(0.0) as usize;
    let rows = (0..count).map(|w| {
        let busy = r.rate(|s| s.worker("weft_worker_busy_duration_seconds_total", w));
        let parked = s.worker("weft_worker_park_unpark_total", w).map(|v| v as u64 % 2 == 1);
        Row::new(vec![
            w.to_string(),
            busy.map_or_else(|| "-".into(), |b| format!("{:.0}%", (b * 100.0).min(100.0))),
            s.worker("weft_worker_local_queue_depth", w).map_or_else(|| "-".into(), |v| format!("{v:.0}")),
            fmt_rate(r.rate(|s| s.worker("weft_worker_poll_total", w))),
            fmt_rate(r.rate(|s| s.worker("weft_worker_steal_total", w))),
            match parked {
                Some(true) => "parked".into(),
                Some(false) => "running".into(),
                None => "-".into(),
            },
            fmt_secs(s.worker("weft_worker_mean_poll_time_seconds", w)),
        ])
    });
    let widths = [3, 6, 7, 9, 9, 8, 10].map(Constraint::Length);
    let table = Table::new(rows, widths)
        .header(
            Row::new(["#", "busy", "queue", "polls/s", "steals/s", "state", "mean poll"])
                .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(panel("workers"));
    frame.render_widget(table, area);
}

fn runtime(frame: &mut Frame<'_>, area: Rect, r: &Rates<'_>) {
    let s = &r.now.series;
    let n = |k: &str| s.get(k).map_or_else(|| "-".into(), |v| format!("{v:.0}"));
    let lines = vec![
        Line::from(format!("global queue: {}", n("weft_global_queue_depth"))),
        Line::from(format!(
            "blocking pool: {} threads, {} idle, queue {}",
            n("weft_blocking_threads"),
            n("weft_idle_blocking_threads"),
            n("weft_blocking_queue_depth")
        )),
        Line::from(format!("blocking queue latency p99: {}", fmt_secs(r.p99("weft_blocking_queue_latency_seconds")))),
        Line::from(format!(
            "timers: {} live, {}/s fired",
            n("weft_live_timers"),
            fmt_rate(r.rate(|s| s.get("weft_timers_fired_total")))
        )),
        Line::from(format!(
            "I/O: {} events/s, {} fds registered",
            fmt_rate(r.rate(|s| s.get("weft_io_driver_ready_total"))),
            match (s.get("weft_io_driver_fd_registered_total"), s.get("weft_io_driver_fd_deregistered_total")) {
                (Some(a), Some(b)) => format!("{:.0}", a - b),
                _ => "-".into(),
            }
        )),
        Line::from(format!("forced yields/s: {}", fmt_rate(r.rate(|s| s.get("weft_budget_forced_yield_total"))))),
    ];
    frame.render_widget(Paragraph::new(lines).block(panel("runtime")), area);
}

/// The tasks with the longest single polls (per-task statistics of the task dump).
fn slowest(frame: &mut Frame<'_>, area: Rect, tasks: &[TaskRow]) {
    let mut timed: Vec<&TaskRow> = tasks.iter().filter(|t| t.max_poll_time_seconds.is_some()).collect();
    if timed.is_empty() && !tasks.is_empty() {
        let msg = "poll times are not recorded: build the runtime with enable_metrics_poll_time_histogram()";
        frame.render_widget(Paragraph::new(msg).block(panel("slowest polls")), area);
        return;
    }
    timed.sort_by(|a, b| secs(b.max_poll_time_seconds).total_cmp(&secs(a.max_poll_time_seconds)));
    let rows = timed.iter().take(area.height.saturating_sub(3) as usize).map(|t| {
        let mean = t.total_poll_time_seconds.map(|s| s / t.poll_count.max(1) as f64);
        Row::new(vec![
            fmt_secs(t.max_poll_time_seconds),
            fmt_secs(mean),
            t.poll_count.to_string(),
            t.id.to_string(),
            t.location(),
        ])
    });
    let widths = [10, 10, 9, 7].map(Constraint::Length).into_iter().chain([Constraint::Min(20)]);
    let table = Table::new(rows, widths)
        .header(
            Row::new(["max poll", "mean poll", "polls", "task", "spawned at"])
                .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(panel("slowest polls"));
    frame.render_widget(table, area);
}

fn tasks(frame: &mut Frame<'_>, area: Rect, sort: SortBy, tasks: &[TaskRow]) {
    let mut sorted: Vec<&TaskRow> = tasks.iter().collect();
    match sort {
        SortBy::PollTime => sorted.sort_by(|a, b| {
            let by_time = secs(b.total_poll_time_seconds).total_cmp(&secs(a.total_poll_time_seconds));
            by_time.then(b.poll_count.cmp(&a.poll_count))
        }),
        SortBy::Age => sorted.sort_by(|a, b| b.age_seconds.total_cmp(&a.age_seconds)),
    }
    let rows = sorted.iter().take(area.height.saturating_sub(3) as usize).map(|t| {
        Row::new(vec![
            t.id.to_string(),
            t.state.clone(),
            fmt_secs(Some(t.age_seconds)),
            t.poll_count.to_string(),
            fmt_secs(t.total_poll_time_seconds),
            t.location(),
        ])
    });
    let widths = [7, 10, 10, 9, 11].map(Constraint::Length).into_iter().chain([Constraint::Min(20)]);
    let title = format!("tasks ({}, sorted by {})", tasks.len(), sort.label());
    let table = Table::new(rows, widths)
        .header(
            Row::new(["task", "state", "age", "polls", "poll time", "spawned at"])
                .style(Style::default().add_modifier(Modifier::BOLD)),
        )
        .block(panel(&title));
    frame.render_widget(table, area);
}
