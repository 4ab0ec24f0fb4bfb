//! `TcpStream`/`TcpSocket` `linger` and `quickack` round-trip through the kernel.

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
