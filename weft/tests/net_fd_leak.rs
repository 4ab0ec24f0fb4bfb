//! fd-leak check: 10,000 sockets created and dropped leave no fd open. Its own test binary
//! (one test), because `/proc/self/fd` counts the whole process and parallel tests in the
//! same binary would open and close fds meanwhile.

use weft::net::{TcpListener, TcpStream};
use weft::runtime::Builder;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn no_fd_leak_after_dropping_10000_sockets() {
    let rt = Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // Warm up (lazily created fds such as the blocking pool's are not leaks).
        drop(TcpStream::connect(addr).await.unwrap());
        drop(listener.accept().await.unwrap());
        let before = open_fds();
        for batch in 0..100 {
            let mut keep = Vec::new();
            for _ in 0..50 {
                let c = TcpStream::connect(addr).await.unwrap();
                let (s, _) = listener.accept().await.unwrap();
                keep.push((c, s));
            }
            drop(keep);
            if batch % 10 == 0 {
                assert!(open_fds() <= before + 2, "fds grow: batch {batch}");
            }
        }
        // 10,000 socket objects were created and dropped (5,000 pairs), plus listeners:
        for _ in 0..100 {
            drop(TcpListener::bind("127.0.0.1:0").await.unwrap());
        }
        assert_eq!(open_fds(), before, "every socket's fd was closed");
    });
}
