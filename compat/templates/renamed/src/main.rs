//! Code written for tokio, unchanged: `#[tokio::main]`, `tokio::spawn`, timers, a loopback TCP
//! round trip with the `io-util` extension traits. It prints `renamed: ok` and then proves the
//! runtime is weft's by reading a weft-only metric.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 5];
        socket.read_exact(&mut buf).await.unwrap();
        socket.write_all(&buf).await.unwrap();
    });
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(b"hello").await.unwrap();
    let mut echoed = [0u8; 5];
    client.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, b"hello");
    server.await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), tokio::time::sleep(Duration::from_millis(1))).await.unwrap();
    // weft-only metrics (tokio has neither method): this is weft's runtime.
    let metrics = tokio::runtime::Handle::current().metrics();
    println!(
        "renamed: ok (weft runtime: {} workers, {} long polls, {} compensating threads started)",
        metrics.num_workers(),
        metrics.long_poll_count(),
        metrics.compensating_threads_started_count()
    );
}
