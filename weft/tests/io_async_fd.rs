//! `weft::io::unix::AsyncFd` over a non-blocking pipe: readiness, `try_io` clearing, a full
//! pipe's writer woken by the reader, and `into_inner`.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};

use weft::io::unix::AsyncFd;
use weft::io::Interest;

fn pipe() -> (File, File) {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for `pipe2` to fill.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) }, 0);
    // SAFETY: `pipe2` succeeded, so both fds are open and owned by nobody else.
    unsafe { (File::from(OwnedFd::from_raw_fd(fds[0])), File::from(OwnedFd::from_raw_fd(fds[1]))) }
}

#[test]
fn pipe_readiness_round_trip() {
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let (r, w) = pipe();
        let reader = AsyncFd::with_interest(r, Interest::READABLE).unwrap();
        let writer = AsyncFd::new(w).unwrap();
        let total = 1_000_000usize; // far more than a pipe holds (64 KiB): the writer must wait
        let send = weft::spawn(async move {
            let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
            let mut sent = 0;
            while sent < total {
                let mut guard = writer.writable().await.unwrap();
                match guard.try_io(|fd| fd.get_ref().write(&data[sent..])) {
                    Ok(n) => sent += n.unwrap(),
                    Err(_would_block) => continue,
                }
            }
            writer.into_inner() // closing the write end ends the stream
        });
        let mut got = Vec::with_capacity(total);
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let mut guard = reader.readable().await.unwrap();
            assert!(guard.ready().is_readable() || guard.ready().is_read_closed());
            match guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
                Ok(Ok(0)) => break,
                Ok(n) => got.extend_from_slice(&buf[..n.unwrap()]),
                Err(_would_block) => {} // stale readiness, cleared by try_io: wait again
            }
            if got.len() == total {
                // Drop the write end, then read to EOF.
                drop(send.await.unwrap());
                let rest = reader.async_io(Interest::READABLE, |fd| (&*fd).read(&mut buf)).await.unwrap();
                assert_eq!(rest, 0);
                break;
            }
        }
        assert_eq!(got.len(), total);
        assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        // try_io on an empty pipe reports WouldBlock (readiness cleared).
        let (r2, _w2) = pipe();
        let r2 = AsyncFd::new(r2).unwrap();
        let err = r2.try_io(Interest::READABLE, |fd| (&*fd).read(&mut buf)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
        let file = r2.into_inner();
        assert!((&file).read(&mut buf).is_err(), "still open and non-blocking after into_inner");
    });
}
