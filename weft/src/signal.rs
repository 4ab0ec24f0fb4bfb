//! `ctrl_c()`: wait for SIGINT, for servers that shut down cleanly.
//!
//! Shaped around what a signal handler may do (async-signal-safe calls only): the handler
//! bumps a generation counter and writes one byte to a pipe; a small "weft-signal" thread,
//! started the first time `ctrl_c` is used, blocks reading that pipe and wakes every waiting
//! future. Going through a thread rather than registering the pipe with one runtime's I/O
//! driver means a `ctrl_c()` future works on any runtime (and across several), at the cost of
//! one sleeping thread for programs that ask for signals at all. The handler is installed
//! once and stays (like tokio: after the first `ctrl_c()`, SIGINT no longer kills the process
//! by default).
//!
//! Unlike the runtime proper, this module uses `std::sync` directly, not the `crate::loom`
//! facade: its state is touched by a signal handler and a thread that loom cannot model.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use crate::loom::unmodeled::AtomicU64;
use std::sync::atomic::Ordering::SeqCst;

/// SIGINTs received so far (bumped by the handler; a plain atomic: handlers are not modelled).
static GENERATION: AtomicU64 = AtomicU64::new(0);

struct Global {
    write_fd: i32,
    waiters: Mutex<Vec<Waker>>,
}

static GLOBAL: OnceLock<Result<Global, String>> = OnceLock::new();

extern "C" fn on_sigint(_: libc::c_int) {
    GENERATION.fetch_add(1, SeqCst);
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
    // SAFETY: a zeroed `sigaction` is a valid starting value; we set the handler and
    // SA_RESTART, and `on_sigint` only makes async-signal-safe calls.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) != 0 {
            return Err(format!("sigaction: {}", io::Error::last_os_error()));
        }
    }
    Ok(Global { write_fd, waiters: Mutex::new(Vec::new()) })
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
    let res = GLOBAL.get_or_init(init).as_ref().map(|_| ()).map_err(|e| io::Error::other(e.clone()));
    CtrlC { start: GENERATION.load(SeqCst), init: Some(res) }
}

/// Future returned by [`ctrl_c`].
#[must_use = "futures do nothing unless awaited"]
#[derive(Debug)]
pub struct CtrlC {
    start: u64,
    init: Option<io::Result<()>>,
}

impl Future for CtrlC {
    type Output = io::Result<()>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(Err(_)) = &this.init {
            return Poll::Ready(this.init.take().expect("checked"));
        }
        let Some(Ok(g)) = GLOBAL.get() else { unreachable!("initialised by ctrl_c()") };
        let mut waiters = lock(&g.waiters);
        if GENERATION.load(SeqCst) != this.start {
            return Poll::Ready(Ok(()));
        }
        if !waiters.iter().any(|w| w.will_wake(cx.waker())) {
            waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Locks a std mutex, ignoring poisoning (nothing panics while holding these locks).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
