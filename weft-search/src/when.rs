//! Time filters: what `--after`, `--before` and `--since` accept, turned into instants.
//!
//! Accepted forms (every other input is a [`TimeError`] that quotes it and lists these):
//! - RFC 3339 / ISO 8601 with an offset: `2025-06-01T12:00:00Z`, `2025-06-01T14:00:00+02:00`;
//! - a civil date-time or date, read in the local time zone: `2025-06-01 12:00`, `2025-06-01`;
//! - a Unix timestamp in seconds: `1748779200`;
//! - a span before now: `2h`, `90m`, `1 day ago`, `3 weeks`, `1h30m` (jiff's friendly format,
//!   with an optional trailing `ago`), and the words `today` (local midnight) and `yesterday`.
//!
//! A line's own `timestamp` field is RFC 3339 (Claude Code writes UTC with milliseconds); a line
//! without one, or with one that does not parse, never passes a time filter (it cannot be shown
//! to be inside the range).

use std::fmt;

use jiff::{civil, tz::TimeZone, Span, Timestamp, Zoned};

/// A time filter argument that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeError {
    pub flag: &'static str,
    pub input: String,
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:?} is not a time; write RFC 3339 (2025-06-01T12:00:00Z), a date (2025-06-01), \
             a date and time (2025-06-01 12:00), Unix seconds, or a span before now (2h, 1 day ago, yesterday)",
            self.flag, self.input
        )
    }
}

impl std::error::Error for TimeError {}

/// Reads one time argument relative to `now` (passed in so tests are deterministic).
pub fn parse(flag: &'static str, input: &str, now: &Zoned) -> Result<Timestamp, TimeError> {
    let err = || TimeError { flag, input: input.to_owned() };
    let s = input.trim();
    if s.is_empty() {
        return Err(err());
    }
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Ok(ts);
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && s.len() >= 9 {
        let secs: i64 = s.parse().map_err(|_| err())?;
        return Timestamp::from_second(secs).map_err(|_| err());
    }
    let tz = now.time_zone().clone();
    let local = |dt: civil::DateTime| dt.to_zoned(tz.clone()).map(|z| z.timestamp()).map_err(|_| err());
    match s.to_ascii_lowercase().as_str() {
        "now" => return Ok(now.timestamp()),
        "today" => return local(now.date().to_datetime(civil::Time::midnight())),
        "yesterday" => {
            let d = now.date().yesterday().map_err(|_| err())?;
            return local(d.to_datetime(civil::Time::midnight()));
        }
        _ => {}
    }
    if let Ok(dt) = s.parse::<civil::DateTime>() {
        return local(dt);
    }
    if let Ok(d) = s.parse::<civil::Date>() {
        return local(d.to_datetime(civil::Time::midnight()));
    }
    let span_text = s.strip_suffix("ago").unwrap_or(s).trim();
    if let Ok(span) = span_text.parse::<Span>() {
        if span.is_negative() || span.is_zero() {
            return Err(err());
        }
        return now.checked_sub(span).map(|z| z.timestamp()).map_err(|_| err());
    }
    Err(err())
}

/// The system's time zone, or UTC where it cannot be found.
pub fn now() -> Zoned {
    Zoned::now().with_time_zone(TimeZone::try_system().unwrap_or(TimeZone::UTC))
}

/// A closed window: a line passes when `after <= t <= before`, as ccms compares (`--since` is an
/// `--after`; giving both is a usage error).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub after: Option<Timestamp>,
    pub before: Option<Timestamp>,
}

impl Window {
    pub fn is_open(&self) -> bool {
        self.after.is_none() && self.before.is_none()
    }

    /// Whether a line with this `timestamp` text passes.
    pub fn contains(&self, timestamp: Option<&str>) -> bool {
        if self.is_open() {
            return true;
        }
        let Some(t) = timestamp.and_then(|s| s.parse::<Timestamp>().ok()) else { return false };
        self.after.is_none_or(|a| t >= a) && self.before.is_none_or(|b| t <= b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Zoned {
        "2025-06-10T12:00:00+00:00[UTC]".parse().unwrap()
    }

    fn p(s: &str) -> Result<String, TimeError> {
        parse("--since", s, &at()).map(|t| t.to_string())
    }

    #[test]
    fn absolute_forms() {
        assert_eq!(p("2025-06-01T12:00:00Z").unwrap(), "2025-06-01T12:00:00Z");
        assert_eq!(p("2025-06-01T14:00:00+02:00").unwrap(), "2025-06-01T12:00:00Z");
        assert_eq!(p("2025-06-01").unwrap(), "2025-06-01T00:00:00Z");
        assert_eq!(p("2025-06-01 08:30").unwrap(), "2025-06-01T08:30:00Z");
        assert_eq!(p("1748779200").unwrap(), "2025-06-01T12:00:00Z");
    }

    #[test]
    fn relative_forms() {
        assert_eq!(p("2h").unwrap(), "2025-06-10T10:00:00Z");
        assert_eq!(p("1 day ago").unwrap(), "2025-06-09T12:00:00Z");
        assert_eq!(p("3 weeks").unwrap(), "2025-05-20T12:00:00Z");
        assert_eq!(p("1h30m").unwrap(), "2025-06-10T10:30:00Z");
        assert_eq!(p("yesterday").unwrap(), "2025-06-09T00:00:00Z");
        assert_eq!(p("today").unwrap(), "2025-06-10T00:00:00Z");
    }

    #[test]
    fn bad_input_names_the_flag_and_the_text() {
        for bad in ["", "soon", "2025-13-01", "-2h", "0s", "12"] {
            let e = p(bad).unwrap_err();
            assert_eq!(e.input, bad);
            assert!(e.to_string().starts_with("--since"), "{e}");
        }
    }

    #[test]
    fn window_is_closed_and_rejects_lines_without_time() {
        let w = Window {
            after: Some("2025-06-01T00:00:00Z".parse().unwrap()),
            before: Some("2025-06-02T00:00:00Z".parse().unwrap()),
        };
        assert!(w.contains(Some("2025-06-01T10:00:00.123Z")));
        assert!(w.contains(Some("2025-06-01T00:00:00Z")));
        assert!(w.contains(Some("2025-06-02T00:00:00.000+00:00")));
        assert!(!w.contains(Some("2025-06-02T00:00:00.001Z")));
        assert!(!w.contains(Some("2025-05-31T23:59:59.999Z")));
        assert!(!w.contains(None));
        assert!(!w.contains(Some("yesterday")));
        assert!(Window::default().contains(None));
    }
}
