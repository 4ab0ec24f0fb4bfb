//! Code written for tokio ports by renaming the crate: this file uses only tokio's paths,
//! through `use weft as tokio;`.

use weft as tokio;

use std::time::Duration;
use tokio::task::{JoinError, JoinSet};
use tokio::time::{interval, sleep, timeout, Instant, MissedTickBehavior};

async fn work(i: u64) -> u64 {
    tokio::task::yield_now().await;
    sleep(Duration::from_millis(1)).await;
    i * 2
}

#[tokio::test]
async fn tokio_shaped_test_macro_and_apis() {
    let h: tokio::task::JoinHandle<u64> = tokio::spawn(work(21));
    assert_eq!(h.await.unwrap(), 42);

    let mut set = JoinSet::new();
    for i in 0..10 {
        set.spawn(work(i));
    }
    let mut sum = 0;
    while let Some(r) = set.join_next().await {
        sum += r.unwrap();
    }
    assert_eq!(sum, 90);

    let r = timeout(Duration::from_millis(5), sleep(Duration::from_secs(5))).await;
    assert!(r.is_err());

    let mut iv = interval(Duration::from_millis(2));
    iv.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let t0: Instant = iv.tick().await;
    let t1 = iv.tick().await;
    assert!(t1 > t0);

    let e: JoinError = tokio::spawn(async { panic!("boom") }).await.unwrap_err();
    assert!(e.is_panic());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_shaped_multi_thread() {
    let handle = tokio::runtime::Handle::current();
    let v = handle.spawn(async { 7 }).await.unwrap();
    assert_eq!(v, 7);
    let local = tokio::task::LocalSet::new();
    let rc = local.run_until(async { tokio::task::spawn_local(async { std::rc::Rc::new(5) }).await.unwrap() }).await;
    assert_eq!(*rc, 5);
}

#[test]
fn tokio_shaped_builder() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("ported")
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(async { tokio::spawn(work(1)).await.unwrap() }), 2);
    rt.shutdown_timeout(Duration::from_secs(1));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _g = rt.enter();
    drop(tokio::spawn(async {}));
}

/// A tokio-shaped TCP echo (only tokio paths): `tokio::net`, `tokio::io` ext traits and
/// `BufReader`, `tokio::task::spawn_blocking`, `tokio::net::lookup_host`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokio_shaped_networking() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::net::{TcpListener, TcpStream};

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        let (r, mut w) = socket.into_split();
        let mut lines = BufReader::new(r).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            w.write_all(format!("{}\n", line.to_uppercase()).as_bytes()).await.unwrap();
        }
    });
    let stream = TcpStream::connect(addr).await.unwrap();
    let (r, mut w) = tokio::io::split(stream);
    w.write_all(b"hello\nweft\n").await.unwrap();
    let mut lines = BufReader::new(r).lines();
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("HELLO"));
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("WEFT"));
    let n = tokio::task::spawn_blocking(|| 6 * 7).await.unwrap();
    assert_eq!(n, 42);
    assert!(tokio::net::lookup_host("localhost:1").await.unwrap().next().is_some());
}
