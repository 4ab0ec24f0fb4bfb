//! Peak memory of an mpsc channel under a 10x overload: 10 producers, each trying to push as
//! many 1 KiB messages as the whole capacity, at a receiver that takes 1 ms per 100 messages.
//! Prints the process's peak RSS (VmHWM from /proc/self/status).
//!
//! `cargo run --release -p weft --example mpsc_overload_rss -- bounded`   (capacity 1,024)
//! `cargo run --release -p weft --example mpsc_overload_rss -- unbounded` (for comparison)

use std::time::{Duration, Instant};

const CAPACITY: usize = 1024;
const PRODUCERS: usize = 10;
const MESSAGE_BYTES: usize = 1024;

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let bounded = std::env::args().nth(1).as_deref() != Some("unbounded");
    let before = peak_rss_kib();
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let start = Instant::now();
    let received = rt.block_on(async {
        let per_producer = CAPACITY; // 10 producers x capacity = 10x overload
        let (tx, mut rx) = if bounded {
            let (tx, rx) = weft::sync::mpsc::channel::<Vec<u8>>(CAPACITY);
            (Either::Bounded(tx), Either::Bounded(rx))
        } else {
            let (tx, rx) = weft::sync::mpsc::unbounded_channel::<Vec<u8>>();
            (Either::Unbounded(tx), Either::Unbounded(rx))
        };
        for _ in 0..PRODUCERS {
            let tx = tx.clone();
            weft::spawn(async move {
                for _ in 0..per_producer {
                    tx.send(vec![1u8; MESSAGE_BYTES]).await;
                }
            });
        }
        drop(tx);
        let mut received = 0usize;
        while let Some(msg) = rx.recv().await {
            received += msg.len() / MESSAGE_BYTES;
            if received.is_multiple_of(100) {
                weft::time::sleep(Duration::from_millis(1)).await; // a slow consumer
            }
        }
        received
    });
    assert_eq!(received, PRODUCERS * CAPACITY);
    let kind = if bounded { "bounded(1024)" } else { "unbounded" };
    println!(
        "{kind}: {received} messages of {MESSAGE_BYTES} B in {:?}; peak RSS {} KiB (before the runtime: {} KiB); \
         capacity x message = {} KiB",
        start.elapsed(),
        peak_rss_kib().unwrap_or(0),
        before.unwrap_or(0),
        CAPACITY * MESSAGE_BYTES / 1024
    );
}

enum Either<B, U> {
    Bounded(B),
    Unbounded(U),
}

impl Clone for Either<weft::sync::mpsc::Sender<Vec<u8>>, weft::sync::mpsc::UnboundedSender<Vec<u8>>> {
    fn clone(&self) -> Self {
        match self {
            Either::Bounded(t) => Either::Bounded(t.clone()),
            Either::Unbounded(t) => Either::Unbounded(t.clone()),
        }
    }
}

impl Either<weft::sync::mpsc::Sender<Vec<u8>>, weft::sync::mpsc::UnboundedSender<Vec<u8>>> {
    async fn send(&self, v: Vec<u8>) {
        match self {
            Either::Bounded(t) => t.send(v).await.unwrap(),
            Either::Unbounded(t) => t.send(v).unwrap(),
        }
    }
}

impl Either<weft::sync::mpsc::Receiver<Vec<u8>>, weft::sync::mpsc::UnboundedReceiver<Vec<u8>>> {
    async fn recv(&mut self) -> Option<Vec<u8>> {
        match self {
            Either::Bounded(r) => r.recv().await,
            Either::Unbounded(r) => r.recv().await,
        }
    }
}
