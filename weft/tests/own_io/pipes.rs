use crate::support::{block_on, counting_waker, poll_once, MockReader, Step};
use std::future::Future;
use std::io::{self, Cursor, ErrorKind, IoSlice};
use std::pin::{pin, Pin};
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use weft::io::{
    copy_bidirectional, copy_bidirectional_with_sizes, join, simplex, split, AsyncBufReadExt, AsyncRead, AsyncReadExt,
    AsyncWrite, AsyncWriteExt, ReadBuf, SimplexStream,
};

/// Polls two futures alternately until both finish.
fn join_all<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (pin!(a), pin!(b));
    let (mut ra, mut rb) = (None, None);
    let (_c, waker) = counting_waker();
    let mut cx = Context::from_waker(&waker);
    for _ in 0..100_000 {
        if ra.is_none() {
            if let Poll::Ready(v) = a.as_mut().poll(&mut cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let Poll::Ready(v) = b.as_mut().poll(&mut cx) {
                rb = Some(v);
            }
        }
        if let (Some(_), Some(_)) = (&ra, &rb) {
            return (ra.take().expect("checked"), rb.take().expect("checked"));
        }
    }
    panic!("futures did not complete");
}

#[test]
fn split_halves_share_stream_and_unsplit() {
    let (mut r, mut w) = split(Cursor::new(b"abc".to_vec()));
    assert!(r.is_pair_of(&w) && w.is_pair_of(&r));
    let mut s = String::new();
    block_on(r.read_to_string(&mut s)).unwrap();
    assert_eq!(s, "abc");
    block_on(w.write_all(b"def")).unwrap();
    assert!(w.is_write_vectored());
    block_on(w.flush()).unwrap();
    block_on(w.shutdown()).unwrap();
    let c = r.unsplit(w);
    assert_eq!(c.into_inner(), b"abcdef");
}

#[test]
#[should_panic]
fn unsplit_unrelated_halves_panics() {
    let (r1, _w1) = split(Cursor::new(Vec::<u8>::new()));
    let (_r2, w2) = split(Cursor::new(Vec::<u8>::new()));
    assert!(!r1.is_pair_of(&w2));
    let _ = r1.unsplit(w2);
}

#[test]
fn split_halves_are_send_and_usable_across_threads() {
    fn assert_send<T: Send + 'static>(_: &T) {}
    let (mut r, mut w) = simplex(64);
    assert_send(&r);
    assert_send(&w);
    let t = std::thread::spawn(move || block_on(w.write_all(b"from thread")).map(|_| w));
    let mut w = t.join().unwrap().unwrap();
    block_on(w.shutdown()).unwrap();
    let mut s = String::new();
    block_on(r.read_to_string(&mut s)).unwrap();
    assert_eq!(s, "from thread");
    assert!(format!("{r:?} {w:?}").contains("ReadHalf"));
}

/// A stream that is `!Unpin`, to check `split` pins it soundly.
struct NotUnpin {
    inner: Cursor<Vec<u8>>,
    _pin: std::marker::PhantomPinned,
}
impl AsyncRead for NotUnpin {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        // SAFETY: `inner` is never moved out of the pinned struct; it is `Unpin` itself.
        let inner = unsafe { &mut self.get_unchecked_mut().inner };
        Pin::new(inner).poll_read(cx, buf)
    }
}
impl AsyncWrite for NotUnpin {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        // SAFETY: `inner` is never moved out of the pinned struct; it is `Unpin` itself.
        let inner = unsafe { &mut self.get_unchecked_mut().inner };
        Pin::new(inner).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[test]
fn split_works_for_not_unpin_streams() {
    let (mut r, mut w) = split(NotUnpin { inner: Cursor::new(b"hi".to_vec()), _pin: std::marker::PhantomPinned });
    let mut s = String::new();
    block_on(r.read_to_string(&mut s)).unwrap();
    block_on(w.write_all(b"!")).unwrap();
    assert_eq!(s, "hi");
}

#[test]
fn join_combines_reader_and_writer() {
    let mut j = join(b"line\nrest".as_slice(), Vec::new());
    let mut l = String::new();
    block_on(j.read_line(&mut l)).unwrap();
    assert_eq!(l, "line\n");
    block_on(j.write_all(b"out")).unwrap();
    block_on(j.write_vectored(&[IoSlice::new(b"!")])).unwrap();
    assert!(j.is_write_vectored());
    block_on(j.flush()).unwrap();
    block_on(j.shutdown()).unwrap();
    assert_eq!(*j.reader(), b"rest");
    assert_eq!(j.writer(), b"out!");
    j.reader_mut();
    j.writer_mut().push(b'?');
    let mut pinned = Pin::new(&mut j);
    let _ = pinned.as_mut().reader_pin_mut();
    let _ = pinned.as_mut().writer_pin_mut();
    let (r, w) = j.into_inner();
    assert_eq!((r, w.as_slice()), (&b"rest"[..], &b"out!?"[..]));
}

#[test]
fn simplex_backpressure_wakes_pending_writer() {
    let (mut r, mut w) = simplex(4);
    let (count, waker) = counting_waker();
    let mut write = w.write_all(b"abcdefgh");
    assert!(poll_once(&mut write, &waker).is_pending(), "buffer full after 4 bytes");
    assert_eq!(count.0.load(Ordering::SeqCst), 0);
    let mut buf = [0u8; 3];
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 3);
    assert_eq!(&buf, b"abc");
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "reading made room and woke the writer");
    assert!(poll_once(&mut write, &waker).is_pending(), "wrote 3 more, full again");
    drop(write);
    let mut out = [0u8; 4];
    block_on(r.read_exact(&mut out)).unwrap();
    assert_eq!(&out, b"defg");
}

#[test]
fn simplex_pending_reader_is_woken_by_writer_and_eof_after_shutdown() {
    let (mut r, mut w) = simplex(16);
    let (count, waker) = counting_waker();
    let mut buf = [0u8; 8];
    {
        let mut read = r.read(&mut buf);
        assert!(poll_once(&mut read, &waker).is_pending());
        block_on(w.write_all(b"hey")).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(matches!(poll_once(&mut read, &waker), Poll::Ready(Ok(3))));
    }
    block_on(w.write_all(b"bye")).unwrap();
    block_on(w.shutdown()).unwrap();
    assert_eq!(block_on(w.write(b"x")).unwrap_err().kind(), ErrorKind::BrokenPipe);
    let mut rest = Vec::new();
    block_on(r.read_to_end(&mut rest)).unwrap();
    assert_eq!(rest, b"bye");
}

#[test]
fn simplex_concurrent_transfer_larger_than_capacity() {
    let (mut r, mut w) = simplex(7);
    let data: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    let writer = async {
        w.write_all(&data).await.unwrap();
        w.write_vectored(&[IoSlice::new(b"X"), IoSlice::new(b"YZ")]).await.unwrap();
        w.shutdown().await.unwrap();
    };
    let reader = async {
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        out
    };
    let ((), out) = join_all(writer, reader);
    assert_eq!(&out[..5000], &data[..]);
    assert!(out.len() >= 5001 && out.len() <= 5003);
}

#[test]
fn simplex_new_unsplit_reads_back_writes() {
    let mut s = SimplexStream::new_unsplit(8);
    block_on(s.write_all(b"ping")).unwrap();
    let mut buf = [0u8; 4];
    block_on(s.read_exact(&mut buf)).unwrap();
    assert_eq!(&buf, b"ping");
    assert_eq!(block_on(s.write(b"")).unwrap(), 0);
}

/// One end of a proxied connection: reads its script, records what it receives and whether
/// its write side was shut down.
struct Endpoint {
    input: MockReader,
    received: Vec<u8>,
    shutdown: bool,
    flushes: usize,
    max_write: usize,
}

fn endpoint(steps: Vec<Step>) -> Endpoint {
    Endpoint { input: MockReader::new(steps), received: Vec::new(), shutdown: false, flushes: 0, max_write: usize::MAX }
}

impl AsyncRead for Endpoint {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.input).poll_read(cx, buf)
    }
}
impl AsyncWrite for Endpoint {
    fn poll_write(mut self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        assert!(!self.shutdown, "write after shutdown");
        let n = buf.len().min(self.max_write);
        self.received.extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }
    fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.flushes += 1;
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shutdown = true;
        Poll::Ready(Ok(()))
    }
}

#[test]
fn copy_bidirectional_counts_and_propagates_shutdown() {
    let mut a = endpoint(vec![Step::Data(b"hello "), Step::Pending, Step::Data(b"server")]);
    let mut b = endpoint(vec![Step::Pending, Step::Pending, Step::Data(b"hi"), Step::Pending, Step::Pending]);
    let (ab, ba) = block_on(copy_bidirectional(&mut a, &mut b)).unwrap();
    assert_eq!((ab, ba), (12, 2));
    assert_eq!(b.received, b"hello server");
    assert_eq!(a.received, b"hi");
    assert!(a.shutdown && b.shutdown, "EOF on each side shut the other down");
    assert!(a.flushes >= 1 && b.flushes >= 1);
}

#[test]
fn copy_bidirectional_with_tiny_buffers_and_short_writes() {
    let mut a = endpoint(vec![Step::Data(b"abcdefghij")]);
    let mut b = endpoint(vec![Step::Data(b"0123456789"), Step::Data(b"xyz")]);
    a.max_write = 2;
    b.max_write = 1;
    let (ab, ba) = block_on(copy_bidirectional_with_sizes(&mut a, &mut b, 3, 1)).unwrap();
    assert_eq!((ab, ba), (10, 13));
    assert_eq!(b.received, b"abcdefghij");
    assert_eq!(a.received, b"0123456789xyz");
}

#[test]
fn copy_bidirectional_returns_first_error() {
    let mut a = endpoint(vec![Step::Data(b"ok"), Step::Error(ErrorKind::ConnectionReset)]);
    let mut b = endpoint(vec![Step::Pending, Step::Pending, Step::Pending]);
    let err = block_on(copy_bidirectional(&mut a, &mut b)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset);
}

#[test]
fn copy_bidirectional_over_simplex_pipes_waits_for_both_directions() {
    // Client side: writes a request on one pipe and reads the reply from another.
    let (mut to_proxy_r, mut to_proxy_w) = simplex(5);
    let (mut from_proxy_r, mut from_proxy_w) = simplex(5);
    let mut proxy_side = join(&mut to_proxy_r, &mut from_proxy_w);
    let mut server = endpoint(vec![Step::Data(b"reply-bytes")]);
    let client = async {
        to_proxy_w.write_all(b"request-bytes").await.unwrap();
        to_proxy_w.shutdown().await.unwrap();
        let mut got = Vec::new();
        from_proxy_r.read_to_end(&mut got).await.unwrap();
        got
    };
    let proxy = copy_bidirectional(&mut proxy_side, &mut server);
    let (got, counts) = join_all(client, proxy);
    assert_eq!(got, b"reply-bytes");
    assert_eq!(counts.unwrap(), (13, 11));
    assert_eq!(server.received, b"request-bytes");
    assert!(server.shutdown);
}
