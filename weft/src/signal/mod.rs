//! Signals: `ctrl_c()` and, on unix, `unix::signal(SignalKind)` — wait for a signal from any
//! runtime, with any number of listeners per signal.
//!
//! # Shape
//! Shaped around what a signal handler may do (async-signal-safe calls only): the handler
//! bumps that signal's generation counter (`GENERATIONS[signum]`) and writes one byte to a
//! pipe; a small "weft-signal" thread, started the first time any signal is asked for,
//! blocks reading that pipe and wakes every registered waker. A listener remembers the
//! generation it has seen and completes when the counter moves past it, so several
//! deliveries between two `recv`s coalesce into one (as in tokio), and any number of
//! listeners, on any number of runtimes, each see every delivery.
//!
//! # Rejected alternatives
//! - *The pipe registered with one runtime's I/O driver* (tokio's design): ties signals to
//!   the runtime that first asked, which then cannot shut down while others listen. One
//!   sleeping thread is the price of working on any runtime (and across several).
//! - *Waking only the listeners of the delivered signal*: the thread would have to read the
//!   signal numbers back from the pipe, which can be full (the handler cannot block); waking
//!   every waiter and letting each recheck its own counter is correct in every case, and
//!   signals are rare.
//!
//! A handler, once installed, stays for the life of the process (like tokio: after the
//! first `ctrl_c()`, SIGINT no longer kills the process by default).
//!
//! Unlike the runtime proper, this module uses `std::sync` directly, not the `crate::loom`
//! facade: its state is touched by a signal handler and a thread that loom cannot model.

#[cfg(unix)]
pub mod unix;

use std::future::Future;
use std::io;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use crate::loom::unmodeled::AtomicU64;
use std::sync::atomic::Ordering::SeqCst;

/// One more than the largest signal number weft accepts (Linux real-time signals end at 64).
const NSIG: usize = 65;

/// Deliveries so far, per signal number (bumped by the handler; plain atomics: handlers are
/// not modelled).
static GENERATIONS: [AtomicU64; NSIG] = [const { AtomicU64::new(0) }; NSIG];

struct Global {
    write_fd: i32,
    waiters: Mutex<Vec<Waker>>,
    /// Which signals have our handler installed.
    installed: Mutex<[bool; NSIG]>,
}

static GLOBAL: OnceLock<Result<Global, String>> = OnceLock::new();

extern "C" fn on_signal(signum: libc::c_int) {
    if let Some(generation) = GENERATIONS.get(signum as usize) {
        generation.fetch_add(1, SeqCst);
    }
    if let Some(Ok(g)) = GLOBAL.get() {
        let byte = 1u8;
        // SAFETY: `write` is async-signal-safe; the fd is a non-blocking pipe end that lives
        // for the rest of the process, and `byte` is a valid 1-byte buffer. A full pipe
        // (EAGAIN) is fine: the reader wakes anyway.
        unsafe { libc::write(g.write_fd, &byte as *const u8 as *const libc::c_void, 1) };
    }
}

fn init() -> Result<Global, String> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for `pipe2` to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe2: {}", io::Error::last_os_error()));
    }
    let (read_fd, write_fd) = (fds[0], fds[1]);
    // SAFETY: `write_fd` is the pipe end we just created; O_NONBLOCK so the handler never blocks.
    unsafe { libc::fcntl(write_fd, libc::F_SETFL, libc::O_NONBLOCK) };
    std::thread::Builder::new()
        .name("weft-signal".into())
        .spawn(move || {
            let mut buf = [0u8; 64];
            loop {
                // SAFETY: `read_fd` is our pipe's read end (owned by this thread for the rest
                // of the process) and `buf` is a valid writable buffer of its length.
                let n = unsafe { libc::read(read_fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
                if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    return;
                }
                if let Some(Ok(g)) = GLOBAL.get() {
                    let wakers = std::mem::take(&mut *lock(&g.waiters));
                    for w in wakers {
                        w.wake();
                    }
                }
            }
        })
        .map_err(|e| format!("spawning the signal thread: {e}"))?;
    Ok(Global { write_fd, waiters: Mutex::new(Vec::new()), installed: Mutex::new([false; NSIG]) })
}

/// Makes sure our handler is installed for `signum` (and the pipe thread runs).
fn install(signum: i32) -> io::Result<&'static Global> {
    let g = GLOBAL.get_or_init(init).as_ref().map_err(|e| io::Error::other(e.clone()))?;
    let Some(idx) = usize::try_from(signum).ok().filter(|&i| i > 0 && i < NSIG) else {
        return Err(io::Error::other(format!("Refusing to register signal {signum}")));
    };
    let mut installed = lock(&g.installed);
    if !installed[idx] {
        // SAFETY: a zeroed `sigaction` is a valid starting value; we set the handler and
        // SA_RESTART, and `on_signal` only makes async-signal-safe calls.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signum, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        installed[idx] = true;
    }
    Ok(g)
}

/// The current delivery count of `signum` (which `install` has validated).
fn generation(signum: i32) -> u64 {
    GENERATIONS[signum as usize].load(SeqCst)
}

/// Completes (`Ready(true)`) when `signum`'s counter has moved past `*seen`, updating it.
fn poll_delivery(g: &Global, signum: i32, seen: &mut u64, cx: &mut Context<'_>) -> Poll<()> {
    let mut waiters = lock(&g.waiters);
    // Checked under the waiters lock: the signal thread takes the same lock before waking,
    // so a delivery after this check finds our waker registered.
    let now = generation(signum);
    if now != *seen {
        *seen = now;
        return Poll::Ready(());
    }
    if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
        waiters.push(cx.waker().clone());
    }
    Poll::Pending
}

/// Completes when the process next receives SIGINT (Ctrl-C) after this call.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// weft::signal::ctrl_c().await?;
/// println!("shutting down");
/// # Ok(())
/// # }
/// ```
pub fn ctrl_c() -> CtrlC {
    match install(libc::SIGINT) {
        Ok(_) => CtrlC { start: generation(libc::SIGINT), init: Some(Ok(())), _pin: PhantomPinned },
        Err(e) => CtrlC { start: 0, init: Some(Err(e)), _pin: PhantomPinned },
    }
}

/// Future returned by [`ctrl_c`].
#[must_use = "futures do nothing unless awaited"]
#[derive(Debug)]
pub struct CtrlC {
    start: u64,
    init: Option<io::Result<()>>,
    /// `!Unpin`, as tokio's `ctrl_c()` future (an `async fn`'s) is: code written for tokio
    /// pins it, and tokio's own tests assert it.
    _pin: PhantomPinned,
}

impl Future for CtrlC {
    type Output = io::Result<()>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: no field is structurally pinned (the marker is the only reason for `!Unpin`):
        // nothing here is moved out of `this` or relies on its address.
        let this = unsafe { self.get_unchecked_mut() };
        if let Some(Err(_)) = &this.init {
            return Poll::Ready(this.init.take().expect("checked"));
        }
        let Some(Ok(g)) = GLOBAL.get() else { unreachable!("initialised by ctrl_c()") };
        poll_delivery(g, libc::SIGINT, &mut this.start, cx).map(Ok)
    }
}

/// Locks a std mutex, ignoring poisoning (nothing panics while holding these locks).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
