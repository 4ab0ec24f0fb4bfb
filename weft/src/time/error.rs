//! Time errors.

use std::fmt;

/// A `timeout` elapsed before its future completed.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct Elapsed(());

impl Elapsed {
    pub(crate) fn new() -> Elapsed {
        Elapsed(())
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(_: Elapsed) -> std::io::Error {
        std::io::ErrorKind::TimedOut.into()
    }
}

/// A timer error, as tokio's `time::error::Error`: the kinds of failure a timer could report.
///
/// weft's timers never return it (a sleep outside a runtime panics with what to do; a deadline
/// past the wheel's range is clamped, not refused; the wheel has no capacity limit): the type
/// exists so code that names or matches on tokio's timer error builds unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Error(ErrorKind);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorKind {
    Shutdown,
    AtCapacity,
    Invalid,
}

impl Error {
    /// The timer was shut down (or used outside a runtime).
    pub fn shutdown() -> Error {
        Error(ErrorKind::Shutdown)
    }

    pub fn is_shutdown(&self) -> bool {
        self.0 == ErrorKind::Shutdown
    }

    /// The timer had no room for another entry.
    pub fn at_capacity() -> Error {
        Error(ErrorKind::AtCapacity)
    }

    pub fn is_at_capacity(&self) -> bool {
        self.0 == ErrorKind::AtCapacity
    }

    /// The duration exceeded what the timer can represent.
    pub fn invalid() -> Error {
        Error(ErrorKind::Invalid)
    }

    pub fn is_invalid(&self) -> bool {
        self.0 == ErrorKind::Invalid
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            ErrorKind::Shutdown => {
                "the timer is shut down; timers must be used from inside a runtime with time enabled"
            }
            ErrorKind::AtCapacity => "the timer is at capacity and cannot take another entry",
            ErrorKind::Invalid => "the timer duration exceeds the maximum duration",
        })
    }
}

impl std::error::Error for Error {}
