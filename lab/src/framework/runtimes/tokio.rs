//! tokio adapter (`tokio-mt`, `tokio-ct`), with tokio's own `sync` channels and `net`
//! sockets — the reference point of most ratios. The code is `tokio_shaped.rs`, shared with
//! weft.

super::tokio_shaped::tokio_shaped_adapter! {
    crate: tokio,
    adapter: Tokio,
    channels: TokioChannels,
    net: TokioNet,
    thread_name: "tokio-lab",
    hyper_io: hyper_util::rt::TokioIo,
    hyper_timer: hyper_util::rt::TokioTimer,
    configure: configure,
    long_polls: no_long_polls,
}

/// Nothing: the settings `configure` exists for are weft's (tokio's poll-time histogram needs
/// `--cfg tokio_unstable`).
fn configure(_builder: &mut tokio::runtime::Builder, _config: &crate::framework::adapter::RtConfig) {}

/// tokio has no long-poll monitor.
fn no_long_polls(_runtime: &tokio::runtime::Runtime) -> u64 {
    0
}
