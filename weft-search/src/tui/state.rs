//! The interactive search's state and what each key does to it — no terminal, no threads, so
//! every key binding is testable as a plain function call.
//!
//! Screens: *search* (the query box and the hits), *message* (one message, whole), *session*
//! (a session's messages in order) and *help*. A key returns an [`Action`] for the loop to
//! carry out (start a search, load a session, copy, quit).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::record::Kind;
use crate::search::Hit;

/// The role filter Tab cycles through: all, then each role.
pub const ROLES: [Option<Kind>; 5] =
    [None, Some(Kind::User), Some(Kind::Assistant), Some(Kind::System), Some(Kind::Summary)];

/// One message of the session screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLine {
    pub line: u32,
    pub kind: Kind,
    pub timestamp: String,
    pub uuid: String,
    /// The whole content text.
    pub text: String,
}

/// A message shown whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub file: u32,
    pub line: u32,
    pub kind: Kind,
    pub timestamp: String,
    pub session_id: String,
    pub uuid: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Search,
    Message { message: Message, scroll: u16, from_session: bool },
    Session { file: u32, session_id: String, lines: Vec<SessionLine>, selected: usize },
    Help { back: Box<Screen> },
}

/// What to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copy {
    SessionId,
    FilePath,
    Message,
}

/// What the loop must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    None,
    /// The query or a filter changed: cancel the scan in flight and start another.
    Search,
    /// Show hit `index` whole (the loop re-reads its line).
    OpenHit(usize),
    /// Show the session of hit `index`, or of the message on screen.
    OpenSession {
        file: u32,
        session_id: String,
    },
    Copy(Copy),
    /// Leave, printing `claude --resume <id>`.
    Resume(String),
    Quit,
}

/// Everything on screen.
#[derive(Debug)]
pub struct State {
    pub query: String,
    /// Cursor position in `query`, in characters.
    pub cursor: usize,
    pub role: usize,
    pub oldest_first: bool,
    pub hits: Vec<Hit>,
    pub total_hits: u64,
    pub files_done: usize,
    pub files_total: usize,
    pub scanning: bool,
    pub selected: usize,
    /// The query's parse error, shown instead of hits.
    pub error: Option<String>,
    /// A one-line notice (copied, skipped files) and the screen it belongs to.
    pub notice: Option<String>,
    pub screen: Screen,
}

impl State {
    pub fn new(files_total: usize) -> State {
        State {
            query: String::new(),
            cursor: 0,
            role: 0,
            oldest_first: false,
            hits: Vec::new(),
            total_hits: 0,
            files_done: 0,
            files_total,
            scanning: false,
            selected: 0,
            error: None,
            notice: None,
            screen: Screen::Search,
        }
    }

    pub fn role_filter(&self) -> Option<Kind> {
        ROLES[self.role]
    }

    fn byte_at(&self, chars: usize) -> usize {
        self.query.char_indices().nth(chars).map_or(self.query.len(), |(i, _)| i)
    }

    fn edit(&mut self, f: impl FnOnce(&mut State)) -> Action {
        let before = self.query.clone();
        f(self);
        if self.query == before {
            Action::None
        } else {
            Action::Search
        }
    }

    /// Applies one key press.
    pub fn key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return Action::Quit;
        }
        if key.code == KeyCode::F(1) {
            if !matches!(self.screen, Screen::Help { .. }) {
                let back = std::mem::replace(&mut self.screen, Screen::Search);
                self.screen = Screen::Help { back: Box::new(back) };
            }
            return Action::None;
        }
        match &mut self.screen {
            Screen::Help { back } => {
                if matches!(key.code, KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter | KeyCode::Char('?')) {
                    let back = std::mem::replace(back.as_mut(), Screen::Search);
                    self.screen = back;
                }
                Action::None
            }
            Screen::Search => self.search_key(key, ctrl),
            Screen::Message { .. } => self.message_key(key),
            Screen::Session { .. } => self.session_key(key),
        }
    }

    fn search_key(&mut self, key: KeyEvent, ctrl: bool) -> Action {
        let page = 10;
        match key.code {
            KeyCode::Esc => Action::Quit,
            KeyCode::Enter if !self.hits.is_empty() => Action::OpenHit(self.selected),
            KeyCode::Tab => {
                self.role = (self.role + 1) % ROLES.len();
                Action::Search
            }
            KeyCode::BackTab => {
                self.role = (self.role + ROLES.len() - 1) % ROLES.len();
                Action::Search
            }
            KeyCode::Char('o') if ctrl => {
                self.oldest_first = !self.oldest_first;
                Action::Search
            }
            KeyCode::Char('s') if ctrl => self.selected_session(),
            KeyCode::Char('r') if ctrl => match self.hits.get(self.selected) {
                Some(h) if !h.session_id.is_empty() => Action::Resume(h.session_id.clone()),
                _ => Action::None,
            },
            KeyCode::Up => self.move_selection(-1),
            KeyCode::Char('p') if ctrl => self.move_selection(-1),
            KeyCode::Down => self.move_selection(1),
            KeyCode::Char('n') if ctrl => self.move_selection(1),
            KeyCode::PageUp => self.move_selection(-page),
            KeyCode::PageDown => self.move_selection(page),
            KeyCode::Char('a') if ctrl => {
                self.cursor = 0;
                Action::None
            }
            KeyCode::Home => {
                self.cursor = 0;
                Action::None
            }
            KeyCode::Char('e') if ctrl => {
                self.cursor = self.query.chars().count();
                Action::None
            }
            KeyCode::End => {
                self.cursor = self.query.chars().count();
                Action::None
            }
            KeyCode::Left => {
                self.cursor = self.cursor.saturating_sub(1);
                Action::None
            }
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(self.query.chars().count());
                Action::None
            }
            KeyCode::Char('u') if ctrl => self.edit(|s| {
                let at = s.byte_at(s.cursor);
                s.query.replace_range(..at, "");
                s.cursor = 0;
            }),
            KeyCode::Char('k') if ctrl => self.edit(|s| {
                let at = s.byte_at(s.cursor);
                s.query.truncate(at);
            }),
            KeyCode::Char('w') if ctrl => self.edit(|s| {
                let end = s.byte_at(s.cursor);
                let trimmed = s.query[..end].trim_end();
                let start = trimmed.rfind(char::is_whitespace).map_or(0, |i| i + 1);
                s.query.replace_range(start..end, "");
                s.cursor = s.query[..start].chars().count();
            }),
            KeyCode::Backspace => self.edit(|s| {
                if s.cursor > 0 {
                    let at = s.byte_at(s.cursor - 1);
                    s.query.remove(at);
                    s.cursor -= 1;
                }
            }),
            KeyCode::Delete => self.edit(|s| {
                if s.cursor < s.query.chars().count() {
                    let at = s.byte_at(s.cursor);
                    s.query.remove(at);
                }
            }),
            KeyCode::Char(c) if !ctrl => self.edit(|s| {
                let at = s.byte_at(s.cursor);
                s.query.insert(at, c);
                s.cursor += 1;
            }),
            _ => Action::None,
        }
    }

    fn selected_session(&self) -> Action {
        match self.hits.get(self.selected) {
            Some(h) if !h.session_id.is_empty() => {
                Action::OpenSession { file: h.file, session_id: h.session_id.clone() }
            }
            _ => Action::None,
        }
    }

    fn move_selection(&mut self, by: isize) -> Action {
        if !self.hits.is_empty() {
            self.selected = (self.selected as isize + by).clamp(0, self.hits.len() as isize - 1) as usize;
        }
        Action::None
    }

    fn message_key(&mut self, key: KeyEvent) -> Action {
        let Screen::Message { message, scroll, from_session } = &mut self.screen else { return Action::None };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Backspace => {
                if *from_session {
                    // The session screen is kept below the message (see `show_message`).
                    return Action::OpenSession { file: message.file, session_id: message.session_id.clone() };
                }
                self.screen = Screen::Search;
                Action::None
            }
            KeyCode::Char('s') if !message.session_id.is_empty() => {
                Action::OpenSession { file: message.file, session_id: message.session_id.clone() }
            }
            KeyCode::Char('r') if !message.session_id.is_empty() => Action::Resume(message.session_id.clone()),
            code => {
                // Space pages down, as in a pager.
                let movement = if code == KeyCode::Char(' ') { KeyCode::PageDown } else { code };
                match moved(usize::from(*scroll), movement, MESSAGE_PAGE, usize::from(u16::MAX)) {
                    Some(to) => {
                        *scroll = u16::try_from(to).unwrap_or(u16::MAX);
                        Action::None
                    }
                    None => self.viewer_key(code),
                }
            }
        }
    }

    fn session_key(&mut self, key: KeyEvent) -> Action {
        let Screen::Session { file, session_id, lines, selected } = &mut self.screen else { return Action::None };
        let last = lines.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Backspace => {
                self.screen = Screen::Search;
                Action::None
            }
            KeyCode::End | KeyCode::Char('G') => {
                *selected = last;
                Action::None
            }
            KeyCode::Enter => {
                let Some(l) = lines.get(*selected) else { return Action::None };
                let message = Message {
                    file: *file,
                    line: l.line,
                    kind: l.kind,
                    timestamp: l.timestamp.clone(),
                    session_id: session_id.clone(),
                    uuid: l.uuid.clone(),
                    text: l.text.clone(),
                };
                self.screen = Screen::Message { message, scroll: 0, from_session: true };
                Action::None
            }
            KeyCode::Char('r') => Action::Resume(session_id.clone()),
            code => match moved(*selected, code, SESSION_PAGE, last) {
                Some(to) => {
                    *selected = to;
                    Action::None
                }
                None => self.viewer_key(code),
            },
        }
    }

    /// The keys the message and session screens share: copies and help.
    fn viewer_key(&mut self, code: KeyCode) -> Action {
        match code {
            KeyCode::Char('i') => Action::Copy(Copy::SessionId),
            KeyCode::Char('f') => Action::Copy(Copy::FilePath),
            KeyCode::Char('c') => Action::Copy(Copy::Message),
            KeyCode::Char('?') => {
                let back = std::mem::replace(&mut self.screen, Screen::Search);
                self.screen = Screen::Help { back: Box::new(back) };
                Action::None
            }
            _ => Action::None,
        }
    }

    /// A new search started: its hits replace the old ones as they arrive.
    pub fn search_started(&mut self) {
        self.hits.clear();
        self.total_hits = 0;
        self.files_done = 0;
        self.selected = 0;
        self.scanning = true;
        self.error = None;
    }
}

/// Lines a page key scrolls the message screen.
const MESSAGE_PAGE: usize = 20;
/// Messages a page key moves the session screen's selection.
const SESSION_PAGE: usize = 10;

/// Where a movement key the message and session screens share takes a position in
/// `0..=last`: up and down by one, a page up and down by `page`, home to the top. `None` for any
/// other key.
fn moved(pos: usize, code: KeyCode, page: usize, last: usize) -> Option<usize> {
    Some(match code {
        KeyCode::Up | KeyCode::Char('k') => pos.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => pos.saturating_add(1).min(last),
        KeyCode::PageUp => pos.saturating_sub(page),
        KeyCode::PageDown => pos.saturating_add(page).min(last),
        KeyCode::Home | KeyCode::Char('g') => 0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(s: &mut State, code: KeyCode) -> Action {
        s.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn ctrl(s: &mut State, c: char) -> Action {
        s.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
    }

    #[test]
    fn typing_edits_the_query_and_asks_for_a_search() {
        let mut s = State::new(3);
        for c in "tokoi".chars() {
            assert_eq!(press(&mut s, KeyCode::Char(c)), Action::Search);
        }
        assert_eq!(press(&mut s, KeyCode::Left), Action::None);
        assert_eq!(press(&mut s, KeyCode::Backspace), Action::Search);
        assert_eq!(press(&mut s, KeyCode::Right), Action::None);
        assert_eq!(press(&mut s, KeyCode::Char('o')), Action::Search);
        assert_eq!(s.query, "tokio");
        assert_eq!(ctrl(&mut s, 'w'), Action::Search);
        assert_eq!(s.query, "");
        assert_eq!(press(&mut s, KeyCode::Backspace), Action::None);
    }

    #[test]
    fn tab_cycles_roles_and_escape_quits() {
        let mut s = State::new(0);
        let mut seen = Vec::new();
        for _ in 0..5 {
            assert_eq!(press(&mut s, KeyCode::Tab), Action::Search);
            seen.push(s.role_filter());
        }
        assert_eq!(seen, [Some(Kind::User), Some(Kind::Assistant), Some(Kind::System), Some(Kind::Summary), None]);
        assert_eq!(press(&mut s, KeyCode::Esc), Action::Quit);
        assert_eq!(ctrl(&mut s, 'c'), Action::Quit);
    }

    #[test]
    fn message_screen_keys() {
        let mut s = State::new(1);
        let message = Message {
            file: 0,
            line: 3,
            kind: Kind::User,
            timestamp: "t".into(),
            session_id: "S".into(),
            uuid: "U".into(),
            text: "x".into(),
        };
        s.screen = Screen::Message { message, scroll: 0, from_session: false };
        assert_eq!(press(&mut s, KeyCode::Char('i')), Action::Copy(Copy::SessionId));
        assert_eq!(press(&mut s, KeyCode::Char('f')), Action::Copy(Copy::FilePath));
        assert_eq!(press(&mut s, KeyCode::Char('c')), Action::Copy(Copy::Message));
        assert_eq!(press(&mut s, KeyCode::Char('r')), Action::Resume("S".into()));
        assert_eq!(press(&mut s, KeyCode::Char('s')), Action::OpenSession { file: 0, session_id: "S".into() });
        assert_eq!(press(&mut s, KeyCode::Esc), Action::None);
        assert_eq!(s.screen, Screen::Search);
    }

    #[test]
    fn movement_keys_stay_within_the_bounds() {
        let keys = [KeyCode::Up, KeyCode::Char('j'), KeyCode::PageUp, KeyCode::PageDown, KeyCode::Char('g')];
        assert_eq!(keys.map(|code| moved(5, code, 10, 7)), [Some(4), Some(6), Some(0), Some(7), Some(0)]);
        assert_eq!(moved(0, KeyCode::Char('k'), 10, 7), Some(0));
        assert_eq!(moved(7, KeyCode::Down, 10, 7), Some(7));
        assert_eq!(moved(5, KeyCode::Char('G'), 10, 7), None, "not a shared movement key");
    }
}
