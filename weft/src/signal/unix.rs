//! `signal(SignalKind) -> Signal`: a stream of deliveries of one unix signal (tokio's
//! `signal::unix`), on the shared handler/pipe/thread machinery of `signal/mod.rs`.

use std::io;
use std::task::{Context, Poll};

use super::{generation, install, poll_delivery, Global};

/// Signals that cannot or must not be caught (tokio refuses the same set).
const FORBIDDEN: [i32; 5] = [libc::SIGILL, libc::SIGFPE, libc::SIGKILL, libc::SIGSEGV, libc::SIGSTOP];

/// A unix signal number, with tokio's named constructors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SignalKind(libc::c_int);

impl SignalKind {
    /// Any signal number (validated by [`signal`]).
    pub const fn from_raw(signum: std::os::raw::c_int) -> SignalKind {
        SignalKind(signum)
    }
    /// The signal number.
    pub const fn as_raw_value(&self) -> std::os::raw::c_int {
        self.0
    }
    pub const fn alarm() -> SignalKind {
        SignalKind(libc::SIGALRM)
    }
    pub const fn child() -> SignalKind {
        SignalKind(libc::SIGCHLD)
    }
    pub const fn hangup() -> SignalKind {
        SignalKind(libc::SIGHUP)
    }
    pub const fn interrupt() -> SignalKind {
        SignalKind(libc::SIGINT)
    }
    pub const fn io() -> SignalKind {
        SignalKind(libc::SIGIO)
    }
    pub const fn pipe() -> SignalKind {
        SignalKind(libc::SIGPIPE)
    }
    pub const fn quit() -> SignalKind {
        SignalKind(libc::SIGQUIT)
    }
    pub const fn terminate() -> SignalKind {
        SignalKind(libc::SIGTERM)
    }
    pub const fn user_defined1() -> SignalKind {
        SignalKind(libc::SIGUSR1)
    }
    pub const fn user_defined2() -> SignalKind {
        SignalKind(libc::SIGUSR2)
    }
    pub const fn window_change() -> SignalKind {
        SignalKind(libc::SIGWINCH)
    }
}

impl From<std::os::raw::c_int> for SignalKind {
    fn from(signum: std::os::raw::c_int) -> SignalKind {
        SignalKind(signum)
    }
}

impl From<SignalKind> for std::os::raw::c_int {
    fn from(kind: SignalKind) -> std::os::raw::c_int {
        kind.0
    }
}

/// Listens for `kind` from now on: each [`Signal::recv`] completes once per batch of
/// deliveries since the previous one. Installs weft's handler for that signal for the rest
/// of the process (the default action, e.g. termination, no longer happens). Errors for
/// signals that cannot be caught (`SIGKILL`, `SIGSTOP`, and the fault signals
/// `SIGILL`/`SIGFPE`/`SIGSEGV`) and for numbers out of range. Works outside a runtime too.
///
/// # Panics
/// Outside a runtime, or on one without I/O enabled (tokio's rules and messages), although
/// weft's signal handling itself is process-global.
#[track_caller]
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    let handle = crate::runtime::context::current_or_panic("`signal::unix::signal`");
    // tokio's signal driver is part of its I/O driver; require it the same way.
    if handle.driver().io().is_none() {
        panic!(
            "A Tokio 1.x context was found, but IO is disabled. Call `enable_io` on the runtime \
             builder to enable IO. (weft: signals need `Builder::enable_io()` or `enable_all()`)"
        );
    }
    let signum = kind.0;
    if FORBIDDEN.contains(&signum) {
        return Err(io::Error::other(format!("Refusing to register signal {signum}")));
    }
    let global = install(signum)?;
    Ok(Signal { global, signum, seen: generation(signum) })
}

/// A listener for one signal (see [`signal`]). Any number may exist per signal, on any
/// runtimes; each sees every delivery.
#[derive(Debug)]
pub struct Signal {
    global: &'static Global,
    signum: i32,
    seen: u64,
}

impl std::fmt::Debug for Global {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Global").finish_non_exhaustive()
    }
}

impl Signal {
    /// Waits for the next delivery. Always `Some(())` in weft (the delivery machinery lives
    /// for the whole process; tokio returns `None` once its driver is gone).
    pub async fn recv(&mut self) -> Option<()> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next delivery (cancel-safe: a delivery is consumed only by `Ready`).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        poll_delivery(self.global, self.signum, &mut self.seen, cx).map(Some)
    }
}
