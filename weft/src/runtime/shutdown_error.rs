//! The error an I/O operation returns once its runtime is shutting down, and tokio's
//! `is_rt_shutdown_err` to recognise it.
//!
//! Recognised by type (a private error inside the `io::Error`), not by comparing text as tokio
//! does, so wrapping the message never breaks the check.

use std::fmt;
use std::io;

/// The inner error of [`shutdown_error`]; private so only weft can make one.
#[derive(Debug)]
struct RuntimeShutdown;

impl fmt::Display for RuntimeShutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Deliberately weft's wording (tokio: "A Tokio 1.x context was found, but it is being
        // shutdown."); use `is_rt_shutdown_err` rather than the text.
        f.write_str("a weft runtime was found, but it is being shut down (the I/O driver is gone)")
    }
}

impl std::error::Error for RuntimeShutdown {}

/// The error I/O futures return once their runtime is shutting down.
pub(crate) fn shutdown_error() -> io::Error {
    io::Error::other(RuntimeShutdown)
}

/// True when `err` was returned because the runtime that owns the I/O resource is shutting
/// down (or gone), as opposed to an operating-system error.
pub fn is_rt_shutdown_err(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::Other && err.get_ref().is_some_and(|inner| inner.is::<RuntimeShutdown>())
}
