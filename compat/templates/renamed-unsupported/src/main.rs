//! Never built to the end: `Cargo.toml` enables a tokio feature weft does not implement.

#[tokio::main]
async fn main() {}
