//! `Interest::{ERROR, PRIORITY}`, `Interest::remove` and `Ready`'s operators (found missing by
//! the public-API diff, `compat/api-diff/`), checked against real kernel events: urgent TCP
//! data for `PRIORITY`, a refused non-blocking connect for `ERROR`.

use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

use weft::io::unix::AsyncFd;
use weft::io::{Interest, Ready};

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn interest_set_operations() {
    let mut i = Interest::READABLE;
    i |= Interest::WRITABLE;
    assert!(i.is_readable() && i.is_writable() && !i.is_error());
    assert_eq!(i.remove(Interest::READABLE), Some(Interest::WRITABLE));
    assert_eq!(Interest::ERROR.remove(Interest::ERROR), None);
    assert_eq!(format!("{:?}", Interest::READABLE | Interest::ERROR), "READABLE | ERROR");
    assert!(Interest::PRIORITY.is_priority() && !Interest::PRIORITY.is_readable());
}

#[test]
fn ready_operators() {
    let rw = Ready::READABLE | Ready::WRITABLE;
    assert_eq!(rw & Ready::READABLE, Ready::READABLE);
    assert_eq!(rw - Ready::READABLE, Ready::WRITABLE);
    let mut r = Ready::EMPTY;
    r |= Ready::ERROR;
    assert!(r.is_error() && !r.is_readable());
    assert!(Ready::ALL.is_priority() && Ready::ALL.is_read_closed() && Ready::ALL.is_error());
    assert!(Ready::EMPTY < Ready::READABLE, "Ready is ordered (as tokio's)");
}

#[test]
fn priority_interest_sees_urgent_tcp_data() {
    rt().block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        let fd = AsyncFd::with_interest(server, Interest::PRIORITY).unwrap();

        // Nothing urgent yet: the priority wait must not end on its own.
        let early = weft::time::timeout(Duration::from_millis(50), fd.ready(Interest::PRIORITY)).await;
        assert!(early.is_err(), "no urgent data was sent, yet the PRIORITY wait ended");

        // SAFETY: `send` reads 1 byte from a valid 1-byte buffer; the fd is a connected socket
        // that `client` owns and keeps open for the call.
        let sent = unsafe { libc::send(client.as_raw_fd(), b"!".as_ptr().cast(), 1, libc::MSG_OOB) };
        assert_eq!(sent, 1);
        let mut guard = weft::time::timeout(Duration::from_secs(5), fd.ready(Interest::PRIORITY))
            .await
            .expect("urgent data must wake a PRIORITY waiter")
            .unwrap();
        assert!(guard.ready().is_priority(), "{:?}", guard.ready());
        guard.clear_ready();
        drop(client);
    });
}

#[test]
fn error_interest_sees_a_refused_connect() {
    rt().block_on(async {
        // A port with no listener: bind one, note it, close it.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.set_nonblocking(true).unwrap();
        let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
        match sock.connect(&addr.into()) {
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
            other => panic!("a connect to a closed port should be refused or in progress: {other:?}"),
        }
        let fd = AsyncFd::with_interest(sock, Interest::ERROR).unwrap();
        let guard = weft::time::timeout(Duration::from_secs(5), fd.ready(Interest::ERROR))
            .await
            .expect("a refused connect must wake an ERROR waiter")
            .unwrap();
        assert!(guard.ready().is_error(), "{:?}", guard.ready());
        let err = fd.get_ref().take_error().unwrap().expect("the socket holds the connect error");
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    });
}
