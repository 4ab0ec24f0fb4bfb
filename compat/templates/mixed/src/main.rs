//! Never runs: the graph does not resolve (see Cargo.toml).

#[tokio::main]
async fn main() {
    pinned::start_background_work();
}
