//! Optional silencing of task panics (`Builder::silence_task_panics`).
//!
//! The process has one panic hook. When a runtime asks for silence, a wrapper around the
//! previous hook is installed once; it skips printing while the current thread is polling a
//! task of a silencing runtime (a thread-local flag set around the poll), and defers to the
//! previous hook otherwise. Panics still reach the task's `JoinHandle`.

use std::cell::Cell;
use std::sync::Once;

thread_local! {
    static SILENCED: Cell<bool> = const { Cell::new(false) };
}

static INSTALL: Once = Once::new();

pub(crate) fn install() {
    INSTALL.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !SILENCED.try_with(|s| s.get()).unwrap_or(false) {
                prev(info);
            }
        }));
    });
}

/// Sets the silence flag for the duration of a task poll, if `silence`.
pub(crate) struct SilenceGuard(bool);

impl SilenceGuard {
    #[inline]
    pub(crate) fn new(silence: bool) -> SilenceGuard {
        if silence {
            let _ = SILENCED.try_with(|s| s.set(true));
        }
        SilenceGuard(silence)
    }
}

impl Drop for SilenceGuard {
    fn drop(&mut self) {
        if self.0 {
            let _ = SILENCED.try_with(|s| s.set(false));
        }
    }
}
