//! weft adapter (`weft-mt`, `weft-ct`), with `weft::sync` channels and `weft::net` sockets.
//! weft mirrors tokio's names, so the code is `tokio_shaped.rs`, shared with tokio.

super::tokio_shaped::tokio_shaped_adapter! {
    crate: weft,
    adapter: Weft,
    channels: WeftChannels,
    net: WeftNet,
    thread_name: "weft-lab",
    hyper_io: weft::hyper::WeftIo,
    hyper_timer: weft::hyper::WeftTimer,
    configure: configure,
    long_polls: long_polls,
}

/// weft's opt-in metrics histograms (the `sweep` knobs measuring their cost), and its long-poll
/// warning lines off: the lab's spawn loops are true long polls (one poll spawns a million
/// tasks), counted into the report (`long_polls`) instead of interleaved with its tables.
fn configure(builder: &mut weft::runtime::Builder, config: &crate::framework::adapter::RtConfig) {
    builder.warn_on_long_polls(false);
    if config.poll_time_histogram {
        builder.enable_metrics_poll_time_histogram();
    }
    if config.schedule_latency_histogram {
        builder.enable_metrics_schedule_latency_histogram();
    }
}

fn long_polls(runtime: &weft::runtime::Runtime) -> u64 {
    runtime.metrics().long_poll_count()
}
