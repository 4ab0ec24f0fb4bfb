//! UDP, Unix-domain sockets and `TcpSocket` on weft's I/O driver.

use std::time::Duration;

use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{TcpSocket, UdpSocket, UnixDatagram, UnixListener, UnixStream};
use weft::runtime::{Builder, Runtime};

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        ("current_thread", Builder::new_current_thread().enable_all().build().unwrap()),
        ("multi_thread", Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()),
    ]
}

fn temp_path(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("weft-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn udp_datagrams_keep_boundaries() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b_addr = b.local_addr().unwrap();
            let recv = weft::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 64];
                for _ in 0..100 {
                    let (n, from) = b.recv_from(&mut buf).await.unwrap();
                    got.push((buf[..n].to_vec(), from));
                }
                got
            });
            for i in 0..100u8 {
                a.send_to(&vec![i; i as usize % 7 + 1], b_addr).await.unwrap();
            }
            let got = weft::time::timeout(Duration::from_secs(10), recv)
                .await
                .expect("no datagram lost on loopback")
                .unwrap();
            assert_eq!(got.len(), 100, "{name}");
            for (i, (d, from)) in got.iter().enumerate() {
                assert_eq!(d, &vec![i as u8; i % 7 + 1], "{name}");
                assert_eq!(*from, a.local_addr().unwrap());
            }
            // connected send/recv
            let c = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            c.connect(a.local_addr().unwrap()).await.unwrap();
            c.send(b"ping").await.unwrap();
            let mut buf = [0u8; 8];
            let n = a.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"ping");
            assert_eq!(a.try_recv(&mut buf).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
        });
    }
}

#[test]
fn unix_stream_echo_and_half_close() {
    for (name, rt) in runtimes() {
        let path = temp_path(&format!("stream-{name}"));
        rt.block_on(async {
            let listener = UnixListener::bind(&path).unwrap();
            let server = weft::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut got = Vec::new();
                s.read_to_end(&mut got).await.unwrap();
                s.write_all(&got).await.unwrap();
            });
            let mut c = UnixStream::connect(&path).await.unwrap();
            let data = vec![42u8; 1 << 20];
            let (mut r, mut w) = weft::io::split(&mut c);
            let writer = async {
                w.write_all(&data).await.unwrap();
                w.shutdown().await.unwrap();
            };
            let reader = async {
                let mut back = Vec::new();
                r.read_to_end(&mut back).await.unwrap();
                back
            };
            let ((), back) = futures::join!(writer, reader);
            assert_eq!(back.len(), data.len(), "{name}");
            server.await.unwrap();
        });
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn unix_pairs_and_datagrams() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (mut a, mut b) = UnixStream::pair().unwrap();
            a.write_all(b"hi").await.unwrap();
            let mut buf = [0u8; 2];
            b.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"hi", "{name}");

            let (x, y) = UnixDatagram::pair().unwrap();
            for i in 0..50u8 {
                x.send(&[i, i]).await.unwrap();
            }
            let mut buf = [0u8; 16];
            for i in 0..50u8 {
                let n = y.recv(&mut buf).await.unwrap();
                assert_eq!(&buf[..n], &[i, i], "{name}");
            }
            let path = temp_path(&format!("dgram-{name}"));
            let server = UnixDatagram::bind(&path).unwrap();
            let client = UnixDatagram::unbound().unwrap();
            client.send_to(b"to path", &path).await.unwrap();
            let (n, _) = server.recv_from(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"to path");
            let _ = std::fs::remove_file(&path);
        });
    }
}

#[test]
fn tcp_socket_options_listen_and_connect() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let s = TcpSocket::new_v4().unwrap();
        s.set_reuseaddr(true).unwrap();
        assert!(s.reuseaddr().unwrap());
        s.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = s.listen(128).unwrap();
        let addr = listener.local_addr().unwrap();
        let c = TcpSocket::new_v4().unwrap();
        c.set_nodelay(true).unwrap();
        let mut stream = c.connect(addr).await.unwrap();
        let (mut srv, _) = listener.accept().await.unwrap();
        stream.write_all(b"abc").await.unwrap();
        let mut buf = [0u8; 3];
        srv.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"abc");
        // refused
        let dead = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let e = TcpSocket::new_v4().unwrap().connect(dead).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    });
}

#[test]
fn spawn_blocking_runs_off_the_workers_and_reports_panics() {
    let rt = Builder::new_current_thread().enable_all().max_blocking_threads(2).build().unwrap();
    rt.block_on(async {
        let worker = std::thread::current().id();
        let other = weft::task::spawn_blocking(move || std::thread::current().id() != worker).await.unwrap();
        assert!(other);
        // More closures than threads: they queue, and all run.
        let hs: Vec<_> = (0..10)
            .map(|i| {
                weft::task::spawn_blocking(move || {
                    std::thread::sleep(Duration::from_millis(5));
                    i
                })
            })
            .collect();
        let mut sum = 0;
        for h in hs {
            sum += h.await.unwrap();
        }
        assert_eq!(sum, 45);
        let e = weft::task::spawn_blocking(|| panic!("boom")).await.unwrap_err();
        assert!(e.is_panic());
        // The closure runs inside the runtime's context.
        weft::task::spawn_blocking(|| weft::runtime::Handle::current()).await.unwrap();
    });
}

#[test]
fn blocking_threads_exit_after_keep_alive_and_shutdown_timeout_detaches() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .thread_keep_alive(Duration::from_millis(50))
        .build()
        .unwrap();
    rt.block_on(async { weft::task::spawn_blocking(|| ()).await.unwrap() });
    // A long closure: shutdown_timeout returns without waiting for it.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    rt.spawn(async move {
        let _ = weft::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(5))).await;
    });
    std::thread::sleep(Duration::from_millis(20));
    let start = std::time::Instant::now();
    rt.shutdown_timeout(Duration::from_millis(50));
    // Generous bound (the closure would hold shutdown for 5 s): CI boxes are loaded.
    assert!(start.elapsed() < Duration::from_secs(4));
    drop(tx);
}

#[test]
#[should_panic(expected = "there is no weft runtime on this thread")]
fn socket_outside_a_runtime_panics_with_advice() {
    let std = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let _ = weft::net::TcpListener::from_std(std);
}
