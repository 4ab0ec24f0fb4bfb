//! The baseline peer: plain tokio tasks and `tokio::sync` channels (`plain_tasks.rs`).

super::plain_tasks::plain_tasks_peer!(
    crate: tokio,
    peer: TokioTasks,
    msg: Msg,
    name: "tokio",
    documented: tokio_tasks,
    block_on: block_on_tokio,
);

/// Runs `f` on a fresh tokio runtime of `threads` workers (current-thread for 1).
fn block_on_tokio<F: std::future::Future>(threads: usize, f: F) -> F::Output {
    let mut builder = if threads > 1 {
        let mut multi = tokio::runtime::Builder::new_multi_thread();
        multi.worker_threads(threads);
        multi
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder.enable_all().build().expect("tokio runtime").block_on(f)
}
