//! The executor behind `weft::sync`'s `blocking_*` methods (`Mutex::blocking_lock`,
//! `mpsc::Receiver::blocking_recv`, …): a guard against calling them on a runtime thread, then
//! the runtime's one block-on loop. Kept apart from `sync/mod.rs`, which is the design essay.

/// Runs `fut` to completion on the calling thread (for the `blocking_*` methods), in the
/// runtime's one block-on loop (`runtime::park::block_on`).
#[track_caller]
pub(crate) fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    assert!(
        !crate::runtime::context::is_entered(),
        "Cannot block the current thread from within a runtime: a `blocking_*` method of \
         weft::sync was called on a thread that drives async tasks, which it would stall. Use \
         the async method instead (tokio's message starts the same way)."
    );
    crate::runtime::park::block_on(fut)
}
