//! tokio 1.54 APIs of `runtime` and `net` that weft lacked: `TryCurrentError`'s two causes,
//! `SO_BINDTODEVICE` and `take_error` on `TcpSocket`, `UdpSocket`'s multicast membership,
//! connected-peer peeks and `into_std`, `UnixListener::take_error`, the vectored and `BufMut`
//! `try_*` methods of TCP's split halves, and `UnixStream::into_split` with tokio's owned
//! halves. Each test checks real behaviour on loopback, on both runtime flavors where a
//! runtime is involved.

use std::future::poll_fn;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::mpsc;

use weft::io::{AsyncReadExt, AsyncWriteExt, Interest, ReadBuf};
use weft::net::{TcpListener, TcpSocket, TcpStream, UdpSocket, UnixListener, UnixStream};
use weft::runtime::{Builder, Handle, Runtime};

fn runtimes() -> Vec<(&'static str, Runtime)> {
    vec![
        ("current_thread", Builder::new_current_thread().enable_all().build().unwrap()),
        ("multi_thread", Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()),
    ]
}

fn temp_path(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("weft-api-gaps-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// Whether the peer of `s` has shut down its write direction: a non-blocking kernel-level
/// peek (the weft socket's fd is non-blocking) reads end of stream (`Ok(0)`) then, and
/// `WouldBlock` while the direction is open and nothing is queued.
fn peer_write_shut(s: &UnixStream) -> bool {
    let mut buf = [MaybeUninit::<u8>::uninit(); 1];
    match socket2::SockRef::from(s).peek(&mut buf) {
        Ok(0) => true,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
        other => panic!("unexpected peek result {other:?}"),
    }
}

/// Retries a non-blocking `try_*` read until it gets past `WouldBlock`, evaluating `$ready`
/// (a readiness wait) before each try: readiness can be spurious, so one wait does not promise
/// data. A macro, because the halves under test are distinct types with the same methods.
macro_rules! read_when_ready {
    ($ready:expr, $try_read:expr) => {
        loop {
            $ready;
            match $try_read {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                res => break res.unwrap(),
            }
        }
    };
}

/// One exchange through TCP halves `$r` and `$w` whose peer is `$server`: a vectored
/// `try_write` of `$w1` and `$w2`, which the peer reads back joined; the peer's write of `$x`
/// and `$y` joined, which a vectored `try_read` into buffers of their sizes splits back; and
/// the peer's write of `$buf`, which `try_read_buf` reads. The borrowed and owned halves are
/// distinct types with the same methods, so a macro serves both.
macro_rules! tcp_halves_exchange {
    ($name:expr, $r:expr, $w:expr, $server:expr,
     write: ($w1:expr, $w2:expr), read_vectored: ($x:expr, $y:expr), read_buf: $buf:expr) => {{
        let (name, r, w, server) = ($name, &$r, &$w, &mut $server);
        w.writable().await.unwrap();
        let n = w.try_write_vectored(&[IoSlice::new($w1), IoSlice::new($w2)]).unwrap();
        assert_eq!(n, $w1.len() + $w2.len(), "{name}");
        let mut got = vec![0u8; n];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(got, [&$w1[..], &$w2[..]].concat(), "{name}");

        server.write_all(&[&$x[..], &$y[..]].concat()).await.unwrap();
        let (mut x, mut y) = (vec![0u8; $x.len()], vec![0u8; $y.len()]);
        let n = read_when_ready!(
            r.readable().await.unwrap(),
            r.try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
        );
        assert_eq!((n, &x[..], &y[..]), ($x.len() + $y.len(), &$x[..], &$y[..]), "{name}");

        server.write_all($buf).await.unwrap();
        let mut v = Vec::with_capacity(8);
        let n = read_when_ready!(r.readable().await.unwrap(), r.try_read_buf(&mut v));
        assert_eq!((n, &v[..]), ($buf.len(), &$buf[..]), "{name}");
    }};
}

/// Two UDP sockets on loopback, not connected.
async fn udp_pair() -> (UdpSocket, UdpSocket) {
    (UdpSocket::bind("127.0.0.1:0").await.unwrap(), UdpSocket::bind("127.0.0.1:0").await.unwrap())
}

/// A connected TCP pair on loopback: (client, server's accepted end).
async fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (client, accepted) = weft::join!(TcpStream::connect(addr), listener.accept());
    (client.unwrap(), accepted.unwrap().0)
}

// ---- runtime::TryCurrentError ----

#[test]
fn try_current_outside_a_runtime_is_missing_context() {
    let err = Handle::try_current().unwrap_err();
    assert!(err.is_missing_context());
    assert!(!err.is_thread_local_destroyed());
    assert!(err.to_string().contains("no weft runtime"), "{err}");

    let rt = Builder::new_current_thread().build().unwrap();
    let _guard = rt.enter();
    assert!(Handle::try_current().is_ok());
}

#[test]
fn try_current_in_a_thread_local_destructor_reports_the_destroyed_context() {
    struct Probe(mpsc::Sender<(bool, bool, String)>);
    impl Drop for Probe {
        fn drop(&mut self) {
            let err = Handle::try_current().unwrap_err();
            let _ = self.0.send((err.is_thread_local_destroyed(), err.is_missing_context(), err.to_string()));
        }
    }
    thread_local! {
        static PROBE: std::cell::RefCell<Option<Probe>> = const { std::cell::RefCell::new(None) };
    }

    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Thread-local destructors run in the reverse order of registration: `PROBE`, touched
        // first, is destroyed after weft's context (touched by `try_current` below), so its
        // destructor runs when the context is already gone.
        PROBE.with(|p| *p.borrow_mut() = Some(Probe(tx)));
        assert!(Handle::try_current().unwrap_err().is_missing_context());
    })
    .join()
    .unwrap();
    let (destroyed, missing, text) = rx.recv().unwrap();
    assert!(destroyed, "expected is_thread_local_destroyed");
    assert!(!missing);
    assert!(text.starts_with("The Tokio context thread-local variable has been destroyed."), "{text}");
}

// ---- TcpSocket ----

#[test]
fn tcp_socket_device_binding_and_take_error() {
    let s = TcpSocket::new_v4().unwrap();
    assert!(s.take_error().unwrap().is_none(), "a fresh socket has no pending error");
    assert_eq!(s.device().unwrap(), None);
    s.bind_device(None).unwrap();
    assert_eq!(s.device().unwrap(), None);
    // Binding to a named device needs CAP_NET_RAW on older kernels: either it works and reads
    // back, or the kernel refuses with EPERM.
    match s.bind_device(Some(b"lo")) {
        Ok(()) => {
            assert_eq!(s.device().unwrap().as_deref(), Some(&b"lo"[..]));
            s.bind_device(None).unwrap();
            assert_eq!(s.device().unwrap(), None);
        }
        Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}"),
    }
}

// ---- UdpSocket ----

#[test]
fn udp_device_binding_and_take_error() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let s = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            assert_eq!(s.device().unwrap(), None, "{name}");
            s.bind_device(None).unwrap();
            assert_eq!(s.device().unwrap(), None, "{name}");
            assert!(s.take_error().unwrap().is_none(), "{name}");
        });
    }
}

#[test]
fn udp_multicast_v4_join_then_leave() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let s = UdpSocket::bind("0.0.0.0:0").await.unwrap();
            let group = Ipv4Addr::new(224, 0, 0, 123);
            match s.join_multicast_v4(group, Ipv4Addr::UNSPECIFIED) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                    eprintln!("skipped ({name}): no multicast-capable interface (ENODEV)");
                    return;
                }
                Err(e) => panic!("{name}: join_multicast_v4: {e}"),
            }
            // Joining twice is refused: the membership is real.
            let again = s.join_multicast_v4(group, Ipv4Addr::UNSPECIFIED).unwrap_err();
            assert_eq!(again.raw_os_error(), Some(libc::EADDRINUSE), "{name}: {again}");
            s.leave_multicast_v4(group, Ipv4Addr::UNSPECIFIED).unwrap();
            // Leaving a group not joined fails.
            let e = s.leave_multicast_v4(group, Ipv4Addr::UNSPECIFIED).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EADDRNOTAVAIL), "{name}: {e}");
        });
    }
}

#[test]
fn udp_multicast_v6_join_then_leave() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let s = match UdpSocket::bind("[::]:0").await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("skipped: no IPv6 ({e})");
                return;
            }
        };
        let group: Ipv6Addr = "ff02::123".parse().unwrap();
        match s.join_multicast_v6(&group, 0) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                eprintln!("skipped: no IPv6 multicast-capable interface (ENODEV)");
                return;
            }
            Err(e) => panic!("join_multicast_v6: {e}"),
        }
        s.leave_multicast_v6(&group, 0).unwrap();
        assert!(s.leave_multicast_v6(&group, 0).is_err(), "the group was left");
    });
}

#[test]
fn udp_peek_reads_the_connected_peers_datagram_without_consuming_it() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (a, b) = udp_pair().await;
            a.connect(b.local_addr().unwrap()).await.unwrap();
            b.connect(a.local_addr().unwrap()).await.unwrap();

            let mut buf = [0u8; 16];
            assert_eq!(b.try_peek(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock, "{name}");

            a.send(b"hello").await.unwrap();
            let n = b.peek(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"hello", "{name}");
            // Still queued: every peek form sees it again.
            let mut buf2 = [0u8; 16];
            assert_eq!(b.try_peek(&mut buf2).unwrap(), 5, "{name}");
            assert_eq!(&buf2[..5], b"hello", "{name}");
            let mut storage = [0u8; 16];
            let mut rb = ReadBuf::new(&mut storage);
            poll_fn(|cx| b.poll_peek(cx, &mut rb)).await.unwrap();
            assert_eq!(rb.filled(), b"hello", "{name}");
            // A short buffer gets the start of the datagram, which stays whole in the queue.
            let mut short = [0u8; 2];
            assert_eq!(b.peek(&mut short).await.unwrap(), 2, "{name}");
            assert_eq!(&short, b"he", "{name}");

            let mut got = [0u8; 16];
            let n = b.recv(&mut got).await.unwrap();
            assert_eq!(&got[..n], b"hello", "{name}: recv gets the datagram the peeks saw");
            assert_eq!(b.try_peek(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock, "{name}");
        });
    }
}

#[test]
fn udp_into_std_gives_a_non_blocking_socket_that_still_receives() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (a, b) = udp_pair().await;
            let a_addr = a.local_addr().unwrap();
            let std = a.into_std().unwrap();
            assert_eq!(std.local_addr().unwrap(), a_addr, "{name}");
            // Left non-blocking, as tokio documents.
            let mut buf = [0u8; 16];
            assert_eq!(std.recv(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock, "{name}");

            b.send_to(b"one", a_addr).await.unwrap();
            std.set_nonblocking(false).unwrap();
            std.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
            let (n, from) = std.recv_from(&mut buf).unwrap();
            assert_eq!((&buf[..n], from), (&b"one"[..], b.local_addr().unwrap()), "{name}");

            // Deregistered from the driver: it can be registered again.
            let back = UdpSocket::from_std(std).unwrap();
            b.send_to(b"two", a_addr).await.unwrap();
            let n = back.recv(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], b"two", "{name}");
        });
    }
}

// ---- UnixListener ----

#[test]
fn unix_listener_take_error_is_none_on_a_fresh_listener() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let path = temp_path("listener-take-error");
        let listener = UnixListener::bind(&path).unwrap();
        assert!(listener.take_error().unwrap().is_none());
        let _ = std::fs::remove_file(&path);
    });
}

// ---- TCP split halves ----

#[test]
fn tcp_halves_vectored_and_buf_try_methods() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (mut client, mut server) = tcp_pair().await;
            {
                let (r, w) = client.split();
                tcp_halves_exchange!(name, r, w, server,
                    write: (b"ab", b"cd"), read_vectored: (b"xy", b"zw"), read_buf: b"buf");
                assert_eq!(r.as_ref().peer_addr().unwrap(), w.as_ref().peer_addr().unwrap(), "{name}");
            }

            let (r, w) = client.into_split();
            tcp_halves_exchange!(name, r, w, server,
                write: (b"12", b"3"), read_vectored: (b"4", b"567"), read_buf: b"89");
            assert_eq!(r.as_ref().local_addr().unwrap(), w.as_ref().local_addr().unwrap(), "{name}");
        });
    }
}

// ---- UnixStream::into_split ----

#[test]
fn unix_owned_halves_read_write_and_reunite() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (a, mut b) = UnixStream::pair().unwrap();
            let (mut r, mut w) = a.into_split();
            // The halves can live in different tasks.
            let writer = weft::spawn(async move {
                w.write_all(b"ping").await.unwrap();
                w
            });
            let mut got = [0u8; 4];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ping", "{name}");
            let w = writer.await.unwrap();

            b.write_all(b"pong").await.unwrap();
            r.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"pong", "{name}");

            assert!(r.peer_addr().unwrap().is_unnamed(), "{name}");
            assert!(w.local_addr().unwrap().is_unnamed(), "{name}");
            assert!(r.as_ref().peer_cred().is_ok() && w.as_ref().peer_cred().is_ok(), "{name}");

            let mut a = r.reunite(w).unwrap();
            assert!(!peer_write_shut(&b), "{name}: reuniting does not shut the write direction");
            a.write_all(b"again").await.unwrap();
            let mut got = [0u8; 5];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"again", "{name}");
        });
    }
}

#[test]
fn unix_reunite_of_mismatched_halves_fails_and_returns_both() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (a1, _b1) = UnixStream::pair().unwrap();
        let (a2, _b2) = UnixStream::pair().unwrap();
        let (r1, w1) = a1.into_split();
        let (r2, w2) = a2.into_split();
        let weft::net::unix::ReuniteError(r1, w2) = r1.reunite(w2).unwrap_err();
        let err = w1.reunite(r2).unwrap_err();
        assert_eq!(err.to_string(), "tried to reunite halves that are not from the same socket");
        let _: &dyn std::error::Error = &err;
        let weft::net::unix::ReuniteError(r2, w1) = err;
        // Handed back intact: each pairs with its own sibling.
        r1.reunite(w1).unwrap();
        w2.reunite(r2).unwrap();
    });
}

#[test]
fn unix_dropping_the_owned_write_half_shuts_the_write_direction_unless_forgotten() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (a, mut b) = UnixStream::pair().unwrap();
            let (mut r, w) = a.into_split();
            assert!(!peer_write_shut(&b), "{name}");
            drop(w);
            assert!(peer_write_shut(&b), "{name}: dropping the write half shuts it down");
            let mut rest = Vec::new();
            assert_eq!(b.read_to_end(&mut rest).await.unwrap(), 0, "{name}");
            // The read direction still works.
            b.write_all(b"still").await.unwrap();
            let mut got = [0u8; 5];
            r.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"still", "{name}");

            let (a, b) = UnixStream::pair().unwrap();
            let (_r, w) = a.into_split();
            w.forget();
            assert!(!peer_write_shut(&b), "{name}: a forgotten write half leaves it open");

            let (a, b) = UnixStream::pair().unwrap();
            let (_r, mut w) = a.into_split();
            w.shutdown().await.unwrap();
            assert!(peer_write_shut(&b), "{name}: shutdown shuts the write direction");
            drop(w);
        });
    }
}

#[test]
fn unix_owned_halves_try_methods_and_readiness() {
    for (name, rt) in runtimes() {
        rt.block_on(async {
            let (a, mut b) = UnixStream::pair().unwrap();
            let (r, w) = a.into_split();

            assert!(w.ready(Interest::WRITABLE).await.unwrap().is_writable(), "{name}");
            w.writable().await.unwrap();
            assert_eq!(w.try_write(b"one").unwrap(), 3, "{name}");
            assert_eq!(w.try_write_vectored(&[IoSlice::new(b"tw"), IoSlice::new(b"o")]).unwrap(), 3, "{name}");
            let mut got = [0u8; 6];
            b.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"onetwo", "{name}");

            b.write_all(b"abc").await.unwrap();
            let mut buf = [0u8; 8];
            let n = read_when_ready!(r.readable().await.unwrap(), r.try_read(&mut buf));
            assert_eq!(&buf[..n], b"abc", "{name}");

            b.write_all(b"defg").await.unwrap();
            let (mut x, mut y) = ([0u8; 1], [0u8; 3]);
            let n = read_when_ready!(
                assert!(r.ready(Interest::READABLE).await.unwrap().is_readable(), "{name}"),
                r.try_read_vectored(&mut [IoSliceMut::new(&mut x), IoSliceMut::new(&mut y)])
            );
            assert_eq!((n, &x, &y), (4, b"d", b"efg"), "{name}");

            b.write_all(b"hi").await.unwrap();
            let mut v = Vec::with_capacity(4);
            let n = read_when_ready!(r.readable().await.unwrap(), r.try_read_buf(&mut v));
            assert_eq!((n, &v[..]), (2, &b"hi"[..]), "{name}");

            // Nothing queued now.
            assert_eq!(r.try_read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock, "{name}");
            assert!(r.as_ref().peer_addr().unwrap().is_unnamed(), "{name}");
        });
    }
}

#[test]
fn unix_borrowed_halves_have_tokios_methods() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let (r, mut w) = a.split();
        w.writable().await.unwrap();
        assert_eq!(w.try_write_vectored(&[IoSlice::new(b"a"), IoSlice::new(b"b")]).unwrap(), 2);
        w.write_all(b"c").await.unwrap();
        let mut got = [0u8; 3];
        b.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"abc");

        b.write_all(b"xyz").await.unwrap();
        let mut v = Vec::with_capacity(4);
        let n = read_when_ready!(r.readable().await.unwrap(), r.try_read_buf(&mut v));
        assert_eq!((n, &v[..]), (3, &b"xyz"[..]));
        assert!(r.local_addr().unwrap().is_unnamed() && w.peer_addr().unwrap().is_unnamed());
    });
}

// ---- net::unix::{uid_t, gid_t, pid_t} ----

#[test]
fn ucred_fields_have_tokios_alias_types() {
    use std::os::unix::fs::MetadataExt;
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (a, _b) = UnixStream::pair().unwrap();
        let cred = a.peer_cred().unwrap();
        let uid: weft::net::unix::uid_t = cred.uid();
        let gid: weft::net::unix::gid_t = cred.gid();
        let pid: Option<weft::net::unix::pid_t> = cred.pid();
        // A file this process creates is owned by its effective uid (and, on most file
        // systems, its effective gid).
        let path = temp_path("ucred-owner");
        std::fs::write(&path, b"").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(uid, meta.uid());
        let _ = gid;
        assert_eq!(pid, Some(std::process::id() as weft::net::unix::pid_t));
    });
}
