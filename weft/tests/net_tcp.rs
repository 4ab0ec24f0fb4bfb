//! TCP on weft's I/O driver: echo round trips, concurrency, half-close, resets, stalled
//! peers, backpressure, fd leaks, and a readiness race — on both runtime flavors.

use std::time::Duration;

use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{TcpListener, TcpStream};
use weft::runtime::{Builder, Runtime};

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        ("current_thread", Builder::new_current_thread().enable_all().build().unwrap()),
        ("multi_thread", Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()),
    ]
}

async fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    weft::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else { return };
            weft::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = weft::io::copy(&mut r, &mut w).await;
                let _ = w.shutdown().await;
            });
        }
    });
    addr
}

#[test]
fn echo_round_trips_1_byte_to_16_mib() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let addr = echo_server().await;
            for size in [1usize, 7, 4096, 65_537, 1 << 20, 16 << 20] {
                let data: Vec<u8> = (0..size).map(|i| (i * 31 % 251) as u8).collect();
                let s = TcpStream::connect(addr).await.unwrap();
                s.set_nodelay(true).unwrap();
                let (mut r, mut w) = s.into_split();
                let expected = data.clone();
                let writer = weft::spawn(async move {
                    w.write_all(&data).await.unwrap();
                    w.shutdown().await.unwrap();
                });
                let mut got = Vec::with_capacity(size);
                r.read_to_end(&mut got).await.unwrap();
                writer.await.unwrap();
                assert_eq!(got.len(), size, "{name}: size {size}");
                assert!(got == expected, "{name}: bytes differ at size {size}");
            }
        });
    }
}

#[test]
fn thousand_concurrent_connections() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let addr = echo_server().await;
            let mut handles = Vec::new();
            for i in 0..1000u32 {
                handles.push(weft::spawn(async move {
                    let mut s = TcpStream::connect(addr).await.unwrap();
                    let msg = i.to_le_bytes();
                    let mut buf = [0u8; 4];
                    for _ in 0..3 {
                        s.write_all(&msg).await.unwrap();
                        s.read_exact(&mut buf).await.unwrap();
                        assert_eq!(buf, msg);
                    }
                }));
            }
            let mut ok = 0;
            for h in handles {
                h.await.unwrap();
                ok += 1;
            }
            assert_eq!(ok, 1000, "{name}");
        });
    }
}

#[test]
fn half_close_reads_eof_and_can_still_write() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = weft::spawn(async move {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut got = Vec::new();
                s.read_to_end(&mut got).await.unwrap(); // client half-closed
                s.write_all(b"after your FIN: ").await.unwrap();
                s.write_all(&got).await.unwrap();
            });
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(b"hello").await.unwrap();
            c.shutdown().await.unwrap();
            let mut reply = String::new();
            c.read_to_string(&mut reply).await.unwrap();
            assert_eq!(reply, "after your FIN: hello", "{name}");
            server.await.unwrap();
        });
    }
}

#[test]
fn peer_reset_is_an_error_not_a_hang() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let mut c = TcpStream::connect(addr).await.unwrap();
            let (s, _) = listener.accept().await.unwrap();
            // SO_LINGER 0 then close: the kernel sends RST.
            let std = s.into_std().unwrap();
            socket2::SockRef::from(&std).set_linger(Some(Duration::ZERO)).unwrap();
            drop(std);
            let res = weft::time::timeout(Duration::from_secs(5), async {
                let mut buf = [0u8; 16];
                loop {
                    match c.read(&mut buf).await {
                        Ok(0) => return Ok(0),
                        Ok(_) => continue,
                        Err(e) => return Err(e),
                    }
                }
            })
            .await
            .expect("a reset peer must not hang the reader");
            assert_eq!(res.unwrap_err().kind(), std::io::ErrorKind::ConnectionReset, "{name}");
        });
    }
}

#[test]
fn timeout_fires_on_peer_that_never_sends() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let _c = TcpStream::connect(addr).await.unwrap();
            let (mut s, _) = listener.accept().await.unwrap();
            let start = std::time::Instant::now();
            let mut buf = [0u8; 8];
            let r = weft::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await;
            assert!(r.is_err(), "{name}: read should time out");
            assert!(start.elapsed() >= Duration::from_millis(100), "{name}");
            assert!(start.elapsed() < Duration::from_secs(20), "{name}: timeout never fired");
            // readable() too.
            let r = weft::time::timeout(Duration::from_millis(20), s.readable()).await;
            assert!(r.is_err(), "{name}");
        });
    }
}

#[test]
fn writer_to_a_peer_that_stops_reading_gets_backpressure() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let c = TcpStream::connect(addr).await.unwrap();
            let (_s, _) = listener.accept().await.unwrap(); // never reads
            let chunk = vec![7u8; 64 * 1024];
            let mut written = 0usize;
            loop {
                match c.try_write(&chunk) {
                    Ok(n) => written += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{name}: {e}"),
                }
                assert!(written < 256 << 20, "{name}: kernel buffers should fill long before 256 MiB");
            }
            assert!(written > 0, "{name}");
            // The async write now waits (bounded memory: nothing is buffered by weft).
            let mut c = c;
            let r = weft::time::timeout(Duration::from_millis(100), c.write_all(&chunk)).await;
            assert!(r.is_err(), "{name}: write to a full socket must wait");
        });
    }
}

#[test]
fn readiness_race_wake_while_worker_enters_poll() {
    // Ping-pong over many connections with tiny messages: every message's wake races with
    // the receiving worker going back into epoll. A lost wake shows up as a hang (caught by
    // the timeout).
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let addr = echo_server().await;
            let mut hs = Vec::new();
            for _ in 0..8 {
                hs.push(weft::spawn(async move {
                    let mut s = TcpStream::connect(addr).await.unwrap();
                    let mut b = [0u8; 1];
                    for i in 0..2000u32 {
                        s.write_all(&[i as u8]).await.unwrap();
                        s.read_exact(&mut b).await.unwrap();
                        assert_eq!(b[0], i as u8);
                    }
                }));
            }
            let all = async {
                for h in hs {
                    h.await.unwrap();
                }
            };
            weft::time::timeout(Duration::from_secs(60), all).await.unwrap_or_else(|_| panic!("{name}: lost wake-up"));
        });
    }
}

#[test]
fn wake_from_plain_thread_reaches_worker_blocked_in_epoll() {
    let rt = Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    for _ in 0..200 {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let h = rt.spawn(async move {
            // Park every worker (one blocks in epoll), then get woken from outside.
            weft::task::spawn_blocking(move || rx.recv().unwrap()).await.unwrap();
        });
        std::thread::sleep(Duration::from_micros(200));
        tx.send(()).unwrap();
        rt.block_on(async { weft::time::timeout(Duration::from_secs(5), h).await.expect("woken").unwrap() });
    }
}

#[test]
fn peek_try_read_ready_and_addrs() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut c = TcpStream::connect(addr).await.unwrap();
        let (s, peer) = listener.accept().await.unwrap();
        assert_eq!(peer, c.local_addr().unwrap());
        assert_eq!(s.peer_addr().unwrap(), c.local_addr().unwrap());
        c.set_nodelay(true).unwrap();
        assert!(c.nodelay().unwrap());
        assert_eq!(s.try_read(&mut [0u8; 4]).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
        c.write_all(b"peekaboo").await.unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(s.peek(&mut buf).await.unwrap(), 4);
        assert_eq!(&buf, b"peek");
        let ready = s.ready(weft::io::Interest::READABLE | weft::io::Interest::WRITABLE).await.unwrap();
        assert!(ready.is_readable() || ready.is_writable());
        s.readable().await.unwrap();
        let mut all = [0u8; 8];
        let n = s.try_read(&mut all).unwrap();
        assert_eq!(&all[..n], &b"peekaboo"[..n]);
        s.writable().await.unwrap();
        assert_eq!(s.try_write(b"x").unwrap(), 1);
    });
}

#[test]
fn connect_to_closed_port_is_refused() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let err = TcpStream::connect(("127.0.0.1", port)).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    });
}

#[test]
fn lookup_host_resolves_localhost_and_literals() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let v: Vec<_> = weft::net::lookup_host("127.0.0.1:80").await.unwrap().collect();
        assert_eq!(v, vec!["127.0.0.1:80".parse().unwrap()]);
        let v: Vec<_> = weft::net::lookup_host(("localhost", 8080)).await.unwrap().collect();
        assert!(v.iter().all(|a| a.port() == 8080) && !v.is_empty());
        assert!(weft::net::lookup_host("no-such-host.invalid:80").await.is_err());
    });
}

#[test]
fn io_after_runtime_shutdown_is_an_error() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let (mut c, _s) = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let s = listener.accept().await.unwrap();
        (c, s)
    });
    drop(rt);
    let rt2 = Builder::new_current_thread().enable_all().build().unwrap();
    let err = rt2.block_on(async { c.read(&mut [0u8; 4]).await }).unwrap_err();
    assert!(err.to_string().contains("being shut down"), "{err}");
}

#[test]
#[should_panic(expected = "enable_io")]
fn socket_without_io_driver_panics_with_advice() {
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(async {
        let _ = TcpListener::bind("127.0.0.1:0").await;
    });
}

#[test]
fn busy_runtime_still_polls_io_every_event_interval() {
    // A task that never stops yielding keeps the current-thread runtime from ever parking,
    // so the only way socket readiness arrives is the maintenance poll every
    // `event_interval` ticks. Without it this ping-pong would hang.
    let rt = Builder::new_current_thread().enable_all().event_interval(7).build().unwrap();
    rt.block_on(async {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop2 = stop.clone();
        let spinner = weft::spawn(async move {
            while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
                weft::task::yield_now().await;
            }
        });
        let addr = echo_server().await;
        let mut s = TcpStream::connect(addr).await.unwrap();
        let mut b = [0u8; 3];
        for _ in 0..100 {
            s.write_all(b"abc").await.unwrap();
            s.read_exact(&mut b).await.unwrap();
        }
        assert_eq!(&b, b"abc");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.await.unwrap();
    });
}

/// A short read clears the read readiness it observed (so the next read waits for the next
/// edge instead of failing a `recv` with `EAGAIN`); data that arrives afterwards, or that was
/// already queued beyond a full buffer, is still delivered, byte for byte, in order.
#[test]
fn reads_after_a_short_read_still_see_every_later_byte() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let (tx, rx) = weft::sync::oneshot::channel::<()>();
            let writer = weft::spawn(async move {
                let mut c = TcpStream::connect(addr).await.unwrap();
                c.write_all(b"0123456789").await.unwrap();
                // The second burst only after the reader's short read returned.
                rx.await.unwrap();
                for chunk in 0..50u8 {
                    c.write_all(&[chunk; 7]).await.unwrap();
                }
            });
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 64];
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0 && n <= 10, "{name}: first read {n}");
            let mut got = buf[..n].to_vec();
            while got.len() < 10 {
                let n = s.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got, b"0123456789", "{name}");
            tx.send(()).unwrap();
            let mut rest = Vec::new();
            // A 4-byte buffer makes some reads full (readiness kept) and some short (cleared).
            let mut small = [0u8; 4];
            while rest.len() < 350 {
                let n = s.read(&mut small).await.unwrap();
                assert!(n > 0, "{name}: early EOF after {} bytes", rest.len());
                rest.extend_from_slice(&small[..n]);
            }
            let want: Vec<u8> = (0..50u8).flat_map(|c| [c; 7]).collect();
            assert_eq!(rest, want, "{name}");
            writer.await.unwrap();
            assert_eq!(s.read(&mut buf).await.unwrap(), 0, "{name}: EOF after the writer is gone");
        });
    }
}
