use crate::support::{block_on, counting_waker, poll_once, MockWriter};
use bytes::Buf;
use std::io::{Cursor, ErrorKind, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use weft::io::{AsyncWrite, AsyncWriteExt};

#[test]
fn write_is_one_attempt() {
    let mut w = MockWriter::new(3);
    assert_eq!(block_on(w.write(b"hello")).unwrap(), 3);
    assert_eq!(w.data, b"hel");
    assert_eq!(block_on(w.write(b"")).unwrap(), 0);
}

#[test]
fn write_is_cancel_safe() {
    let mut w = MockWriter { pend: true, ..MockWriter::new(10) };
    let (_c, waker) = counting_waker();
    {
        let mut fut = w.write(b"abc");
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    assert!(w.data.is_empty());
}

#[test]
fn write_all_loops_until_done() {
    let mut w = MockWriter { pend: true, ..MockWriter::new(2) };
    block_on(w.write_all(b"hello")).unwrap();
    assert_eq!(w.data, b"hello");
    assert_eq!(w.writes, [2, 2, 1]);
}

#[test]
fn write_all_reports_write_zero() {
    let mut w = MockWriter::new(0);
    assert_eq!(block_on(w.write_all(b"x")).unwrap_err().kind(), ErrorKind::WriteZero);
    let mut full = [0u8; 2];
    let mut c = Cursor::new(&mut full[..]);
    assert_eq!(block_on(c.write_all(b"abc")).unwrap_err().kind(), ErrorKind::WriteZero);
}

#[test]
fn write_vectored_uses_default_or_native() {
    let bufs = [IoSlice::new(b""), IoSlice::new(b"ab"), IoSlice::new(b"cd")];
    let mut w = MockWriter::new(10);
    assert_eq!(block_on(w.write_vectored(&bufs)).unwrap(), 2, "default writes the first non-empty slice");
    let mut v = Vec::new();
    assert!(v.is_write_vectored());
    assert_eq!(block_on(v.write_vectored(&bufs)).unwrap(), 4);
    assert_eq!(v, b"abcd");
}

#[test]
fn write_buf_advances_by_written() {
    let mut w = MockWriter::new(2);
    let mut src = Cursor::new(b"abcde".to_vec());
    assert_eq!(block_on(w.write_buf(&mut src)).unwrap(), 2);
    assert_eq!(src.remaining(), 3);
    let mut empty = Cursor::new(Vec::<u8>::new());
    assert_eq!(block_on(w.write_buf(&mut empty)).unwrap(), 0);
}

#[test]
fn write_all_buf_plain_and_vectored() {
    let mut w = MockWriter::new(4);
    let mut src = (&b"hello"[..]).chain(&b"world"[..]);
    block_on(w.write_all_buf(&mut src)).unwrap();
    assert_eq!(w.data, b"helloworld");
    assert_eq!(w.writes, [4, 1, 4, 1], "one chunk at a time when not vectored");

    let mut w = MockWriter { vectored: true, ..MockWriter::new(7) };
    let mut src = (&b"hello"[..]).chain(&b"world"[..]);
    block_on(w.write_all_buf(&mut src)).unwrap();
    assert_eq!(w.data, b"helloworld");
    assert_eq!(w.writes, [7, 3], "chunks gathered when vectored");
    assert!(!src.has_remaining());
}

#[test]
fn write_all_buf_cancel_leaves_buf_advanced() {
    let mut w = MockWriter { pend: true, ..MockWriter::new(3) };
    let mut src = Cursor::new(b"abcdef".to_vec());
    let (_c, waker) = counting_waker();
    {
        let mut fut = w.write_all_buf(&mut src);
        assert!(poll_once(&mut fut, &waker).is_pending());
        assert!(poll_once(&mut fut, &waker).is_pending(), "wrote 3, then pending");
    }
    assert_eq!(w.data, b"abc");
    assert_eq!(src.remaining(), 3);
    block_on(w.write_all_buf(&mut src)).unwrap();
    assert_eq!(w.data, b"abcdef");
}

#[test]
fn write_all_buf_write_zero() {
    let mut w = MockWriter::new(0);
    let mut src = Cursor::new(b"a".to_vec());
    assert_eq!(block_on(w.write_all_buf(&mut src)).unwrap_err().kind(), ErrorKind::WriteZero);
}

#[test]
fn flush_and_shutdown_reach_writer() {
    let mut w = MockWriter::new(1);
    block_on(w.flush()).unwrap();
    block_on(w.shutdown()).unwrap();
    assert_eq!((w.flushes, w.shutdowns), (1, 1));
}

#[test]
fn numeric_write_through_one_byte_writer() {
    let mut w = MockWriter { pend: true, ..MockWriter::new(1) };
    block_on(w.write_u32(0xdeadbeef)).unwrap();
    block_on(w.write_i16_le(-2)).unwrap();
    assert_eq!(w.data, [0xde, 0xad, 0xbe, 0xef, 0xfe, 0xff]);
    let mut z = MockWriter::new(0);
    assert_eq!(block_on(z.write_u64(1)).unwrap_err().kind(), ErrorKind::WriteZero);
}

#[test]
fn cursor_writers() {
    let mut v = Vec::new();
    let mut c = Cursor::new(&mut v);
    block_on(c.write_all(b"abc")).unwrap();
    assert_eq!(v, b"abc");
    let mut c = Cursor::new(vec![0u8; 2]);
    block_on(c.write_all(b"xyz")).unwrap();
    assert_eq!(c.into_inner(), b"xyz", "Cursor<Vec> grows");
    let mut c = Cursor::new(vec![0u8; 2].into_boxed_slice());
    assert_eq!(block_on(c.write(b"xyz")).unwrap(), 2, "Cursor<Box<[u8]>> does not grow");
    block_on(c.shutdown()).unwrap();
}

#[test]
fn forwarding_impls_forward_every_method() {
    let mut inner = MockWriter { vectored: true, ..MockWriter::new(10) };
    {
        let mut boxed: Box<&mut MockWriter> = Box::new(&mut inner);
        assert!(boxed.is_write_vectored());
        block_on(boxed.write_all(b"ab")).unwrap();
        block_on(boxed.flush()).unwrap();
        let mut pinned = Pin::new(&mut boxed);
        let (_c, waker) = counting_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(matches!(
            pinned.as_mut().poll_write_vectored(&mut cx, &[IoSlice::new(b"c"), IoSlice::new(b"d")]),
            Poll::Ready(Ok(2))
        ));
        assert!(pinned.as_mut().poll_shutdown(&mut cx).is_ready());
    }
    assert_eq!(inner.data, b"abcd");
    assert_eq!((inner.flushes, inner.shutdowns), (1, 1));
    let mut dyn_w: Pin<Box<dyn AsyncWrite + Send>> = Box::pin(Vec::new());
    block_on(dyn_w.write_all(b"x")).unwrap();
}
