//! Socket options and readiness methods: `TcpStream`/`TcpSocket` `linger`/`quickack`,
//! `UnixStream::split`, `UnixDatagram`/`UdpSocket` readiness and `try_*`.

use std::os::fd::AsRawFd;
use std::time::Duration;

use weft::net::{TcpListener, TcpSocket, TcpStream};

#[test]
fn linger_and_quickack_round_trip() {
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let socket = TcpSocket::new_v4().unwrap();
        assert_eq!(socket.linger().unwrap(), None);
        socket.set_linger(Some(Duration::from_secs(3))).unwrap();
        assert_eq!(socket.linger().unwrap(), Some(Duration::from_secs(3)));
        socket.set_quickack(true).unwrap();
        assert!(socket.quickack().unwrap());
        socket.set_nodelay(true).unwrap();
        assert!(socket.nodelay().unwrap());
        let stream = socket.connect(addr).await.unwrap();
        let (_server, _) = listener.accept().await.unwrap();

        let stream: TcpStream = stream;
        assert_eq!(stream.linger().unwrap(), Some(Duration::from_secs(3)));
        stream.set_linger(None).unwrap();
        assert_eq!(stream.linger().unwrap(), None);
        stream.set_quickack(false).unwrap();
        assert!(!stream.quickack().unwrap());
        stream.set_quickack(true).unwrap();
        assert!(stream.quickack().unwrap());
    });
}

#[test]
fn unix_stream_split_halves_work_at_once() {
    use weft::io::{AsyncReadExt, AsyncWriteExt};
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (mut a, mut b) = weft::net::UnixStream::pair().unwrap();
        let echo = weft::spawn(async move {
            let (mut r, mut w) = b.split();
            let n = weft::io::copy(&mut r, &mut w).await.unwrap();
            w.shutdown().await.unwrap();
            n
        });
        let (mut r, mut w) = a.split();
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let send = async {
            w.write_all(&data).await.unwrap();
            w.shutdown().await.unwrap();
        };
        let mut back = Vec::new();
        let recv = async { r.read_to_end(&mut back).await.unwrap() };
        let ((), n) = futures::join!(send, recv);
        assert_eq!(n, data.len());
        assert_eq!(back, data);
        assert_eq!(echo.await.unwrap(), data.len() as u64);
    });
}

#[test]
fn unix_datagram_and_udp_readiness_and_try_methods() {
    use weft::io::Interest;
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let dir = std::env::temp_dir().join(format!("weft-sockopts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let a = weft::net::UnixDatagram::bind(dir.join("a")).unwrap();
        let b = weft::net::UnixDatagram::bind(dir.join("b")).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(b.try_recv_from(&mut buf).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
        a.writable().await.unwrap();
        assert_eq!(a.try_send_to(b"one", dir.join("b")).unwrap(), 3);
        b.readable().await.unwrap();
        let (n, from) = b.try_recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"one");
        assert_eq!(from.as_pathname(), Some(dir.join("a").as_path()));
        a.connect(dir.join("b")).unwrap();
        assert_eq!(a.peer_addr().unwrap().as_pathname(), Some(dir.join("b").as_path()));
        a.send(b"two").await.unwrap();
        let n = b.async_io(Interest::READABLE, || raw_recv(b.as_raw_fd(), &mut buf)).await.unwrap();
        assert_eq!(&buf[..n], b"two");
        assert!(a.take_error().unwrap().is_none());
        std::future::poll_fn(|cx| a.poll_send_ready(cx)).await.unwrap();
        let _ = std::fs::remove_dir_all(&dir);

        let u1 = weft::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let u2 = weft::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        u1.connect(u2.local_addr().unwrap()).await.unwrap();
        std::future::poll_fn(|cx| u1.poll_send_ready(cx)).await.unwrap();
        u1.send(b"udp").await.unwrap();
        std::future::poll_fn(|cx| u2.poll_recv_ready(cx)).await.unwrap();
        let got = u2.async_io(Interest::READABLE, || raw_recv(u2.as_raw_fd(), &mut buf)).await.unwrap();
        assert_eq!(&buf[..got], b"udp");
        let err = u2.try_io(Interest::READABLE, || raw_recv(u2.as_raw_fd(), &mut buf)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
    });
}

/// A non-blocking `recv(2)` on a socket the caller keeps open.
fn raw_recv(fd: std::os::fd::RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `fd` is an open socket owned by a live weft socket for the whole call, and the
    // pointer/length describe `buf`, which `recv` may write.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
