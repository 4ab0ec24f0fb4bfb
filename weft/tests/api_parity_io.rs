//! tokio I/O and networking items added for the conformance run: coop-aware `io::{repeat,
//! sink, empty}`, `simplex`/`copy_bidirectional_with_sizes`, `net::unix::pipe`,
//! `UnixSocket`, `peer_cred`, `TryFrom<std socket>`/`AsFd`, zero linger, `try_read_buf`,
//! `ReadHalf::peek`, accepted sockets starting out ready, the I/O event limits and
//! `File::set_times`. Assertions are on data and error kinds, never on timing.

mod support;

use std::os::fd::AsFd;

use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::unix::pipe;
use weft::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixSocket, UnixStream};

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-parity-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn repeat_sink_empty_copy_and_duplex_yield_when_the_budget_is_spent() {
    // Each loop never waits on anything external: it ends only because the always-ready
    // reader/writer spends coop budget and yields, letting the `yield_now` branch win.
    support::ct().block_on(async {
        weft::select! {
            biased;
            _ = async { loop { weft::io::repeat(7).read_exact(&mut [0u8; 64]).await.unwrap(); } } => {},
            _ = weft::task::yield_now() => {},
        }
        weft::select! {
            biased;
            _ = async { loop { weft::io::sink().write_all(b"abc").await.unwrap(); } } => {},
            _ = weft::task::yield_now() => {},
        }
        weft::select! {
            biased;
            _ = async { loop { let _ = weft::io::empty().read(&mut [0u8; 8]).await; } } => {},
            _ = weft::task::yield_now() => {},
        }
    });
    support::ct().block_on(async {
        weft::select! {
            biased;
            _ = async { loop { let _ = weft::io::copy(&mut &b"hello"[..], &mut Vec::new()).await; } } => {},
            _ = weft::task::yield_now() => {},
        }
        let (mut tx, mut rx) = weft::io::duplex(8192);
        weft::select! {
            biased;
            _ = async {
                loop {
                    tx.write_all(&[3u8; 4096]).await.unwrap();
                    let _ = rx.read(&mut [0u8; 4096]).await.unwrap();
                }
            } => {},
            _ = weft::task::yield_now() => {},
        }
        let (mut rx, mut tx) = weft::io::simplex(8192);
        weft::select! {
            biased;
            _ = async {
                loop {
                    tx.write_all(&[5u8; 4096]).await.unwrap();
                    let _ = rx.read(&mut [0u8; 4096]).await.unwrap();
                }
            } => {},
            _ = weft::task::yield_now() => {},
        }
    });
    let mut buf = [0u8; 4];
    futures::executor::block_on(weft::io::repeat(9).read_exact(&mut buf)).unwrap();
    assert_eq!(buf, [9; 4], "outside a runtime they are unconstrained");
}

#[test]
fn simplex_and_copy_bidirectional_with_sizes() {
    support::ct().block_on(async {
        let (mut rx, mut tx) = weft::io::simplex(16);
        tx.write_all(b"hi").await.unwrap();
        let mut buf = [0u8; 2];
        rx.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"hi");

        let (mut a, mut a_peer) = weft::io::duplex(64);
        let (mut b, mut b_peer) = weft::io::duplex(64);
        let copier = weft::spawn(async move { weft::io::copy_bidirectional_with_sizes(&mut a, &mut b, 4, 4).await });
        a_peer.write_all(b"ping").await.unwrap();
        let mut got = [0u8; 4];
        b_peer.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        drop(a_peer);
        drop(b_peer);
        assert_eq!(copier.await.unwrap().unwrap(), (4, 0));
    });
}

#[test]
fn anonymous_pipe_and_fifo_ends() {
    support::ct().block_on(async {
        let (mut tx, mut rx) = pipe::pipe().unwrap();
        tx.write_all(b"through").await.unwrap();
        let mut buf = [0u8; 7];
        rx.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"through");
        assert_eq!(rx.try_read(&mut buf).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
        drop(tx);
        assert_eq!(rx.read(&mut buf).await.unwrap(), 0, "all writers gone: end of file");

        let dir = temp_path("fifo");
        let fifo = dir.join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = pipe::OpenOptions::new().open_sender(&fifo).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENXIO), "no reader yet");
        let mut reader = pipe::OpenOptions::new().open_receiver(&fifo).unwrap();
        let mut writer = pipe::OpenOptions::new().open_sender(&fifo).unwrap();
        writer.write_all(b"fifo").await.unwrap();
        let mut buf = [0u8; 4];
        reader.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"fifo");

        let plain = dir.join("plain");
        std::fs::File::create(&plain).unwrap();
        let err = pipe::OpenOptions::new().open_receiver(&plain).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        let wrong_mode = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        assert_eq!(pipe::Receiver::from_file(wrong_mode).unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
        drop(writer);
        let fd = reader.into_blocking_fd().unwrap();
        // SAFETY: F_GETFL on an open fd we own.
        let flags = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&fd), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn unix_socket_builds_listeners_streams_and_datagrams() {
    support::ct().block_on(async {
        let dir = temp_path("unix-socket");
        let server = dir.join("server.sock");
        let sock = UnixSocket::new_stream().unwrap();
        sock.bind(&server).unwrap();
        let listener = sock.listen(16).unwrap();
        let (accepted, client) =
            futures::future::try_join(listener.accept(), UnixSocket::new_stream().unwrap().connect(&server))
                .await
                .unwrap();
        let (mut server_side, _) = accepted;
        let mut client = client;
        client.write_all(b"x").await.unwrap();
        let mut b = [0u8; 1];
        server_side.read_exact(&mut b).await.unwrap();
        assert_eq!(&b, b"x");

        let cred = client.peer_cred().unwrap();
        // SAFETY: geteuid has no preconditions.
        assert_eq!(cred.uid(), unsafe { libc::geteuid() });
        assert_eq!(cred.pid(), Some(std::process::id() as libc::pid_t));

        let err = UnixSocket::new_datagram().unwrap().listen(1).unwrap_err();
        assert_eq!(err.to_string(), "listen cannot be called on a datagram socket");
        let err = UnixSocket::new_stream().unwrap().datagram().unwrap_err();
        assert_eq!(err.to_string(), "datagram cannot be called on a stream socket");
        let dgram = UnixSocket::new_datagram().unwrap().datagram().unwrap();
        assert!(dgram.local_addr().unwrap().is_unnamed());
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn std_conversions_fds_linger_and_try_read_buf() {
    support::ct().block_on(async {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = std_listener.local_addr().unwrap();
        let listener = TcpListener::try_from(std_listener).unwrap();
        let std_client = std::net::TcpStream::connect(addr).unwrap();
        let client = TcpStream::try_from(std_client).unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let _: std::os::fd::BorrowedFd<'_> = client.as_fd();
        client.set_zero_linger().unwrap();
        assert_eq!(client.linger().unwrap(), Some(std::time::Duration::ZERO));

        // Data already queued at accept time is readable without waiting for an event.
        let mut client = client;
        client.write_all(b"abcd").await.unwrap();
        let mut peeked = [0u8; 4];
        {
            let (mut rd, _wr) = server.split();
            assert_eq!(rd.peek(&mut peeked).await.unwrap(), 4);
        }
        assert_eq!(&peeked, b"abcd");
        let mut buf = Vec::with_capacity(16);
        let n = loop {
            server.readable().await.unwrap();
            match server.try_read_buf(&mut buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!((n, &buf[..]), (4, &b"abcd"[..]));

        let udp = UdpSocket::try_from(std::net::UdpSocket::bind("127.0.0.1:0").unwrap()).unwrap();
        let _ = udp.as_fd();
        let (a, _b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        let _ = UnixDatagram::try_from(a).unwrap();
        let (s, _t) = std::os::unix::net::UnixStream::pair().unwrap();
        let _ = UnixStream::try_from(s).unwrap().as_fd();
        let dir = temp_path("try-from");
        let l = std::os::unix::net::UnixListener::bind(dir.join("l.sock")).unwrap();
        let _ = UnixListener::try_from(l).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn busy_tick_limit_still_delivers_every_event() {
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_io_events_per_tick(2)
        .max_io_events_per_busy_tick(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        weft::spawn(async move {
            loop {
                let (mut s, _) = listener.accept().await.unwrap();
                weft::spawn(async move {
                    let mut b = [0u8; 4];
                    while s.read_exact(&mut b).await.is_ok() {
                        s.write_all(&b).await.unwrap();
                    }
                });
            }
        });
        let clients: Vec<_> = (0..8)
            .map(|_| {
                weft::spawn(async move {
                    let mut s = TcpStream::connect(addr).await.unwrap();
                    for _ in 0..8 {
                        s.write_all(b"ping").await.unwrap();
                        let mut b = [0u8; 4];
                        s.read_exact(&mut b).await.unwrap();
                        assert_eq!(&b, b"ping");
                    }
                })
            })
            .collect();
        for c in clients {
            c.await.unwrap();
        }
    });
}

#[test]
fn file_set_times() {
    support::ct().block_on(async {
        let dir = temp_path("times");
        let path = dir.join("f");
        let file = weft::fs::File::create(&path).await.unwrap();
        let accessed = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
        let modified = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_500_000_000);
        file.set_times(weft::fs::FileTimes::new().set_accessed(accessed).set_modified(modified)).await.unwrap();
        let meta = file.metadata().await.unwrap();
        assert_eq!((meta.accessed().unwrap(), meta.modified().unwrap()), (accessed, modified));
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn udp_peek_sender_recv_buf_and_options() {
    support::ct().block_on(async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        b.send_to(b"one", a.local_addr().unwrap()).await.unwrap();
        assert_eq!(a.peek_sender().await.unwrap(), b.local_addr().unwrap());
        let mut buf = Vec::with_capacity(8);
        let (n, from) = a.recv_buf_from(&mut buf).await.unwrap();
        assert_eq!((n, from, &buf[..]), (3, b.local_addr().unwrap(), &b"one"[..]));
        assert_eq!(a.try_peek_sender().unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
        a.set_multicast_ttl_v4(3).unwrap();
        assert_eq!(a.multicast_ttl_v4().unwrap(), 3);
        a.set_tos_v4(96).unwrap();
        assert_eq!(a.tos_v4().unwrap(), 96);
        assert!(!a.broadcast().unwrap());
    });
}

#[test]
fn unix_datagram_recv_buf_and_stream_vectored_io() {
    support::ct().block_on(async {
        let (a, b) = UnixDatagram::pair().unwrap();
        a.send(b"dgram").await.unwrap();
        let mut buf = Vec::with_capacity(16);
        assert_eq!(b.recv_buf(&mut buf).await.unwrap(), 5);
        assert_eq!(&buf[..], b"dgram");

        let (c, d) = UnixStream::pair().unwrap();
        let n = c.try_write_vectored(&[std::io::IoSlice::new(b"ab"), std::io::IoSlice::new(b"cd")]).unwrap();
        assert_eq!(n, 4);
        std::future::poll_fn(|cx| d.poll_read_ready(cx)).await.unwrap();
        let mut buf = Vec::with_capacity(8);
        assert_eq!(d.try_read_buf(&mut buf).unwrap(), 4);
        assert_eq!(&buf[..], b"abcd");
        let std = d.into_std().unwrap();
        assert!(std.peer_addr().unwrap().is_unnamed());
    });
}

#[test]
fn worker_index_is_the_worker_or_none() {
    assert_eq!(weft::runtime::worker_index(), None);
    assert_eq!(support::ct().block_on(async { weft::runtime::worker_index() }), Some(0));
    let rt = support::mt(2);
    let index = rt.block_on(async { weft::spawn(async { weft::runtime::worker_index() }).await.unwrap() });
    assert!(matches!(index, Some(0 | 1)), "{index:?}");
    let outside = rt.block_on(async { weft::runtime::worker_index() });
    assert_eq!(outside, None, "block_on on a multi-thread runtime is not a worker");
}

#[test]
fn many_tasks_waiting_in_accept_are_all_served() {
    support::ct().block_on(async {
        let listener = std::sync::Arc::new(TcpListener::bind("127.0.0.1:0").await.unwrap());
        let addr = listener.local_addr().unwrap();
        let acceptors: Vec<_> = (0..8)
            .map(|_| {
                let l = listener.clone();
                weft::spawn(async move { l.accept().await.unwrap().1 })
            })
            .collect();
        weft::task::yield_now().await; // every acceptor is now waiting
        let mut clients = Vec::new();
        for _ in 0..8 {
            clients.push(TcpStream::connect(addr).await.unwrap());
        }
        let mut peers = Vec::new();
        for a in acceptors {
            peers.push(a.await.unwrap());
        }
        let mut locals: Vec<_> = clients.iter().map(|c| c.local_addr().unwrap()).collect();
        peers.sort();
        locals.sort();
        assert_eq!(peers, locals, "each connection accepted exactly once");
    });
}

#[test]
fn command_status_future_does_not_borrow_the_command() {
    support::ct().block_on(async {
        let status = weft::process::Command::new("true").status();
        assert!(status.await.unwrap().success());
        let out = weft::process::Command::new("echo").arg("hi").output();
        assert_eq!(out.await.unwrap().stdout, b"hi\n");
    });
}

#[test]
fn async_fd_try_new_gives_the_object_back_on_failure() {
    use weft::io::unix::AsyncFd;
    support::ct().block_on(async {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let fd = AsyncFd::try_new(a).unwrap();
        let a = fd.into_inner();
        // A regular file cannot be registered with epoll: the error hands the file back.
        let dir = temp_path("asyncfd");
        let file = std::fs::File::create(dir.join("f")).unwrap();
        let (file, err) = AsyncFd::try_new(file).unwrap_err().into_parts();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM));
        drop((a, file));
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
#[should_panic(expected = "`max_buf_size` must be greater than 0")]
fn a_pipe_of_zero_bytes_is_refused_as_tokio_refuses_it() {
    let _ = weft::io::simplex(0);
}

#[test]
fn chain_is_nameable_in_every_build() {
    support::ct().block_on(async {
        let mut chained: weft::io::Chain<&[u8], &[u8]> = (&b"ab"[..]).chain(&b"cd"[..]);
        let mut out = String::new();
        chained.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "abcd");
    });
}
