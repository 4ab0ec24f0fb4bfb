//! A library that pins an exact tokio release, as some crates do.

/// Starts background work with `tokio::spawn` — the real tokio 1.40.0's.
pub fn start_background_work() {
    tokio::spawn(async {});
}
