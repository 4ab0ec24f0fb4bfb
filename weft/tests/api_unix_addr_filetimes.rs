//! `weft::net::unix::SocketAddr` and `weft::fs::FileTimes`: weft's own types (as tokio's), not
//! re-exports of std's, and every Unix address API speaks weft's `SocketAddr`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use weft::fs::{File, FileTimes};
use weft::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::unix::SocketAddr;
use weft::net::{UnixDatagram, UnixListener, UnixStream};

fn temp_path(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("weft-addr-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn listener_local_addr_is_the_socket_path() {
    rt().block_on(async {
        let path = temp_path("listener.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        assert!(!addr.is_unnamed());
        assert_eq!(addr.as_pathname(), Some(path.as_path()));
        #[cfg(target_os = "linux")]
        assert_eq!(addr.as_abstract_name(), None);
        assert_eq!(format!("{addr:?}"), format!("{:?}", std::os::unix::net::SocketAddr::from(addr.clone())));

        // The connecting side sees the listener's path as its peer; the accepted stream's peer
        // (an unbound client) is unnamed, as is the address `accept` reports.
        let client = weft::spawn({
            let path = path.clone();
            async move {
                let mut s = UnixStream::connect(&path).await.unwrap();
                let peer: SocketAddr = s.peer_addr().unwrap();
                assert_eq!(peer.as_pathname(), Some(path.as_path()));
                assert!(s.local_addr().unwrap().is_unnamed());
                let (r, w) = s.split();
                assert_eq!(r.peer_addr().unwrap().as_pathname(), Some(path.as_path()));
                assert!(w.local_addr().unwrap().is_unnamed());
                s.write_all(b"hi").await.unwrap();
            }
        });
        let (mut stream, from): (UnixStream, SocketAddr) = listener.accept().await.unwrap();
        assert!(from.is_unnamed());
        assert_eq!(stream.local_addr().unwrap().as_pathname(), Some(path.as_path()));
        let mut buf = [0u8; 2];
        stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"hi");
        client.await.unwrap();

        let (read, write) = stream.into_split();
        assert_eq!(read.local_addr().unwrap().as_pathname(), Some(path.as_path()));
        assert!(write.peer_addr().unwrap().is_unnamed());
        let _ = std::fs::remove_file(&path);
    });
}

#[test]
fn socketpair_addresses_are_unnamed() {
    rt().block_on(async {
        let (a, b) = UnixStream::pair().unwrap();
        let peer = a.peer_addr().unwrap();
        assert!(peer.is_unnamed());
        assert_eq!(peer.as_pathname(), None);
        #[cfg(target_os = "linux")]
        assert_eq!(peer.as_abstract_name(), None);
        assert!(b.local_addr().unwrap().is_unnamed());
        assert_eq!(format!("{peer:?}"), "(unnamed)");

        let (x, _y) = UnixDatagram::pair().unwrap();
        assert!(x.local_addr().unwrap().is_unnamed());
        assert!(x.peer_addr().unwrap().is_unnamed());
    });
}

#[cfg(target_os = "linux")]
#[test]
fn abstract_name_is_reported() {
    use std::os::linux::net::SocketAddrExt;

    rt().block_on(async {
        let name = format!("weft-abstract-{}", std::process::id());
        let std_addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let std_listener = std::os::unix::net::UnixListener::bind_addr(&std_addr).unwrap();
        let listener = UnixListener::from_std(std_listener).unwrap();
        let addr = listener.local_addr().unwrap();
        assert_eq!(addr.as_abstract_name(), Some(name.as_bytes()));
        assert_eq!(addr.as_pathname(), None);
        assert!(!addr.is_unnamed());

        // `connect_addr` takes weft's address.
        let client = UnixStream::connect_addr(&addr).await.unwrap();
        let (_server, _) = listener.accept().await.unwrap();
        assert_eq!(client.peer_addr().unwrap().as_abstract_name(), Some(name.as_bytes()));
    });
}

#[cfg(target_os = "linux")]
#[test]
fn bind_addr_takes_weft_address() {
    use std::os::linux::net::SocketAddrExt;

    rt().block_on(async {
        let name = format!("weft-bind-addr-{}", std::process::id());
        let addr: SocketAddr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap().into();
        let listener = UnixListener::bind_addr(&addr).unwrap();
        assert_eq!(listener.local_addr().unwrap().as_abstract_name(), Some(name.as_bytes()));
    });
}

#[test]
fn conversions_round_trip() {
    let path = Path::new("/tmp/weft-round-trip.sock");
    let std_addr = std::os::unix::net::SocketAddr::from_pathname(path).unwrap();
    let weft_addr = SocketAddr::from(std_addr);
    assert_eq!(weft_addr.as_pathname(), Some(path));
    let cloned = weft_addr.clone();
    let back: std::os::unix::net::SocketAddr = weft_addr.into();
    assert_eq!(back.as_pathname(), Some(path));
    let again: SocketAddr = back.into();
    assert_eq!(again.as_pathname(), cloned.as_pathname());
    assert_eq!(format!("{again:?}"), format!("{:?}", std::os::unix::net::SocketAddr::from(cloned)));
    assert_eq!(format!("{again:?}"), "\"/tmp/weft-round-trip.sock\" (pathname)");
}

#[test]
fn datagram_recv_from_reports_the_sender_path() {
    rt().block_on(async {
        let a_path = temp_path("dgram-a.sock");
        let b_path = temp_path("dgram-b.sock");
        let a = UnixDatagram::bind(&a_path).unwrap();
        let b = UnixDatagram::bind(&b_path).unwrap();
        assert_eq!(a.local_addr().unwrap().as_pathname(), Some(a_path.as_path()));

        a.send_to(b"one", &b_path).await.unwrap();
        let mut buf = [0u8; 16];
        let (n, from): (usize, SocketAddr) = b.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"one");
        assert_eq!(from.as_pathname(), Some(a_path.as_path()));

        a.send_to(b"two", &b_path).await.unwrap();
        b.readable().await.unwrap();
        let (n, from) = b.try_recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"two");
        assert_eq!(from.as_pathname(), Some(a_path.as_path()));

        a.send_to(b"three", &b_path).await.unwrap();
        let mut vec = Vec::with_capacity(16);
        let (n, from) = b.recv_buf_from(&mut vec).await.unwrap();
        assert_eq!(&vec[..n], b"three");
        assert_eq!(from.as_pathname(), Some(a_path.as_path()));

        a.send_to(b"four", &b_path).await.unwrap();
        let mut storage = [0u8; 16];
        let mut read_buf = weft::io::ReadBuf::new(&mut storage);
        let from = std::future::poll_fn(|cx| b.poll_recv_from(cx, &mut read_buf)).await.unwrap();
        assert_eq!(read_buf.filled(), b"four");
        assert_eq!(from.as_pathname(), Some(a_path.as_path()));

        a.connect(&b_path).unwrap();
        assert_eq!(a.peer_addr().unwrap().as_pathname(), Some(b_path.as_path()));

        let _ = std::fs::remove_file(&a_path);
        let _ = std::fs::remove_file(&b_path);
    });
}

#[test]
fn file_times_set_modified_is_what_metadata_reports() {
    rt().block_on(async {
        let path = temp_path("file-times.txt");
        let mut file = File::create(&path).await.unwrap();
        file.write_all(b"data").await.unwrap();
        let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let accessed = SystemTime::UNIX_EPOCH + Duration::from_secs(1_100_000_000);
        let times: FileTimes = FileTimes::new().set_modified(when).set_accessed(accessed);
        file.set_times(times.clone()).await.unwrap();
        drop(file);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.modified().unwrap(), when);
        assert_eq!(meta.accessed().unwrap(), accessed);

        // `set_modified` goes through the same type.
        let later = when + Duration::from_secs(60);
        let file = File::options().write(true).open(&path).await.unwrap();
        file.set_modified(later).await.unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), later);

        // Debug and Default as tokio's derive them.
        assert_eq!(format!("{:?}", FileTimes::default()), "FileTimes { accessed: None, modified: None }");
        let _ = std::fs::remove_file(&path);
    });
}

/// A path whose first byte is NUL names the abstract namespace, for `bind` and `connect` alike
/// (tokio's `uds_stream::abstract_socket_name`).
#[cfg(target_os = "linux")]
#[test]
fn a_leading_nul_binds_and_connects_an_abstract_name() {
    rt().block_on(async {
        let name = format!("\0weft-abstract-nul-{}", std::process::id());
        let listener = weft::net::UnixListener::bind(&name).unwrap();
        let expected = name.as_bytes()[1..].to_vec();
        assert_eq!(listener.local_addr().unwrap().as_abstract_name(), Some(&expected[..]));
        let (client, accepted) = weft::join!(weft::net::UnixStream::connect(&name), listener.accept());
        let client = client.unwrap();
        let (server, _) = accepted.unwrap();
        assert_eq!(client.peer_addr().unwrap().as_abstract_name(), Some(&expected[..]));
        assert!(server.local_addr().unwrap().as_abstract_name().is_some());
        assert!(!std::path::Path::new(&name[1..]).exists(), "no file is created for an abstract name");
    });
}
