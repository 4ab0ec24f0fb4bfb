//! Drawing the interactive search: a query box, the hits (one line each, newest first), a
//! status line; the message, session and help screens.

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

use super::state::{Screen, State};
use crate::output::local_time;
use crate::record::Kind;

/// What a hit's row needs beside the hit: its project directory name.
pub trait Names {
    fn project(&self, file: u32) -> String;
}

fn role_style(k: Kind) -> Style {
    Style::default().fg(match k {
        Kind::User => Color::Green,
        Kind::Assistant => Color::Cyan,
        Kind::System => Color::Yellow,
        Kind::Summary => Color::Magenta,
    })
}

const HELP: &str = "\
Search
  type            search as you type (AND OR NOT, \"phrases\", /regex/i)
  Tab / Shift+Tab cycle the role filter: all, user, assistant, system, summary
  Up Down PgUp PgDn  select a hit          Enter  show the whole message
  Ctrl+S          the selected hit's session       Ctrl+O  newest / oldest first
  Ctrl+R          quit and print `claude --resume <session>` for the selected hit
  Ctrl+U Ctrl+K Ctrl+W  delete before / after the cursor / a word
  Esc or Ctrl+C   quit
Message and session screens
  Up Down PgUp PgDn (j k)  scroll or select     Enter  open a message of the session
  s  the message's session     i  copy the session id     f  copy the file path
  c  copy the message          r  quit and print `claude --resume <session>`
  Esc or q        back          F1 or ?  this help
Copies use OSC 52: they reach your clipboard through ssh and tmux (set-clipboard on).";

pub fn draw(f: &mut Frame, s: &State, names: &dyn Names) {
    draw_screen(f, s, &s.screen, names);
}

/// Draws `screen` (the state's, or the one under the help) from the state's fields.
fn draw_screen(f: &mut Frame, s: &State, screen: &Screen, names: &dyn Names) {
    let area = f.area();
    match screen {
        Screen::Search => search(f, area, s, names),
        Screen::Message { message, scroll, .. } => {
            let title = format!(
                " {} · {} · {} · line {} ",
                local_time(&message.timestamp),
                message.kind.name(),
                message.session_id,
                message.line
            );
            let chunks = Layout::default()
                .direction(Direction::Vertical)
                .constraints([Constraint::Min(3), Constraint::Length(1)])
                .split(area);
            let p = Paragraph::new(message.text.as_str())
                .block(Block::default().borders(Borders::ALL).title(title))
                .wrap(Wrap { trim: false })
                .scroll((*scroll, 0));
            f.render_widget(p, chunks[0]);
            status(f, chunks[1], s, "Esc back · s session · i/f/c copy id/file/message · r resume · F1 help");
        }
        Screen::Session { session_id, lines, selected, .. } => {
            let chunks = Layout::default()
                .direction(Direction::Vertical)
                .constraints([Constraint::Min(3), Constraint::Length(1)])
                .split(area);
            let items: Vec<ListItem> = lines
                .iter()
                .map(|l| {
                    let first = l.text.lines().next().unwrap_or("");
                    ListItem::new(Line::from(vec![
                        Span::styled(local_time(&l.timestamp), Style::default().add_modifier(Modifier::DIM)),
                        Span::raw(" "),
                        Span::styled(format!("{:<9}", l.kind.name()), role_style(l.kind)),
                        Span::raw(" "),
                        Span::raw(first.to_owned()),
                    ]))
                })
                .collect();
            let list = List::new(items)
                .block(
                    Block::default()
                        .borders(Borders::ALL)
                        .title(format!(" session {session_id} · {} messages ", lines.len())),
                )
                .highlight_style(Style::default().add_modifier(Modifier::REVERSED));
            let mut st = ListState::default().with_selected(Some(*selected));
            f.render_stateful_widget(list, chunks[0], &mut st);
            status(f, chunks[1], s, "Enter open · Esc back · i/f/c copy id/file/message · r resume · F1 help");
        }
        Screen::Help { back } => {
            draw_screen(f, s, back, names);
            let w = 90.min(area.width);
            let h = (HELP.lines().count() as u16 + 2).min(area.height);
            let r = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
            f.render_widget(Clear, r);
            f.render_widget(
                Paragraph::new(HELP).block(Block::default().borders(Borders::ALL).title(" keys (Esc closes) ")),
                r,
            );
        }
    }
}

fn search(f: &mut Frame, area: Rect, s: &State, names: &dyn Names) {
    let chunks = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Length(3), Constraint::Min(1), Constraint::Length(1)])
        .split(area);
    let role = match s.role_filter() {
        Some(k) => k.name(),
        None => "all roles",
    };
    let title = format!(" weft-search · {role} · {} ", if s.oldest_first { "oldest first" } else { "newest first" });
    let input = Paragraph::new(s.query.as_str()).block(Block::default().borders(Borders::ALL).title(title));
    f.render_widget(input, chunks[0]);
    let cursor_x = chunks[0].x + 1 + s.query.chars().take(s.cursor).count() as u16;
    f.set_cursor_position((cursor_x.min(chunks[0].right().saturating_sub(2)), chunks[0].y + 1));
    if let Some(e) = &s.error {
        f.render_widget(
            Paragraph::new(e.as_str()).style(Style::default().fg(Color::Red)).wrap(Wrap { trim: true }),
            chunks[1],
        );
    } else {
        let items: Vec<ListItem> = s
            .hits
            .iter()
            .map(|h| {
                let mut spans = vec![
                    Span::styled(local_time(&h.timestamp), Style::default().add_modifier(Modifier::DIM)),
                    Span::raw(" "),
                    Span::styled(format!("{:<9}", h.kind.name()), role_style(h.kind)),
                    Span::raw(" "),
                    Span::styled(format!("{:<20.20}", names.project(h.file)), Style::default().fg(Color::Blue)),
                    Span::raw(" "),
                ];
                match h.match_range {
                    Some((a, b)) => {
                        let (a, b) = (a as usize, b as usize);
                        spans.push(Span::raw(h.snippet[..a].to_owned()));
                        spans.push(Span::styled(
                            h.snippet[a..b].to_owned(),
                            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
                        ));
                        spans.push(Span::raw(h.snippet[b..].to_owned()));
                    }
                    None => spans.push(Span::raw(h.snippet.clone())),
                }
                ListItem::new(Line::from(spans))
            })
            .collect();
        let list = List::new(items).highlight_style(Style::default().add_modifier(Modifier::REVERSED));
        let mut st = ListState::default().with_selected((!s.hits.is_empty()).then_some(s.selected));
        f.render_stateful_widget(list, chunks[1], &mut st);
    }
    status(f, chunks[2], s, "Enter open · Tab role · Ctrl+S session · Ctrl+R resume · F1 help · Esc quit");
}

fn status(f: &mut Frame, area: Rect, s: &State, keys: &str) {
    let progress = if s.scanning {
        format!("searching {}/{} files · {} hits so far", s.files_done, s.files_total, s.total_hits)
    } else {
        format!("{} hits ({} shown) in {} files", s.total_hits, s.hits.len(), s.files_total)
    };
    let mut spans = vec![Span::styled(progress, Style::default().add_modifier(Modifier::BOLD))];
    if let Some(n) = &s.notice {
        spans.push(Span::raw(" · "));
        spans.push(Span::styled(n.clone(), Style::default().fg(Color::Green)));
    }
    spans.push(Span::raw(" · "));
    spans.push(Span::styled(keys.to_owned(), Style::default().add_modifier(Modifier::DIM)));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}
