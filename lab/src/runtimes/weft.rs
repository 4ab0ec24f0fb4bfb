//! weft adapter (`weft-mt`, `weft-ct`), with `weft::sync` channels and `weft::net` sockets.
//! weft mirrors tokio's names, so the code is `tokio_shaped.rs`, shared with tokio.

super::tokio_shaped::tokio_shaped_adapter! {
    crate: weft,
    adapter: Weft,
    channels: WeftChannels,
    net: WeftNet,
    thread_name: "weft-lab",
    hyper_io: weft::compat::hyper::WeftIo,
}
