use crate::support::{block_on, counting_waker, poll_once, MockReader, Step};
use bytes::BytesMut;
use std::io::{Cursor, ErrorKind};
use std::pin::Pin;
use std::task::Poll;
use weft::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt};

#[test]
fn read_returns_what_is_available() {
    let mut r = MockReader::new(vec![Step::Pending, Step::Data(b"hello"), Step::Data(b"!")]);
    let mut buf = [0u8; 3];
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 3);
    assert_eq!(&buf, b"hel");
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 2);
    assert_eq!(&buf[..2], b"lo");
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 1);
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 0);
}

#[test]
fn read_on_slices_and_cursors() {
    let mut s: &[u8] = b"abcdef";
    let mut buf = [0u8; 4];
    assert_eq!(block_on(s.read(&mut buf)).unwrap(), 4);
    assert_eq!(s, b"ef");
    let mut c = Cursor::new(b"xyz".to_vec());
    assert_eq!(block_on(c.read(&mut buf)).unwrap(), 3);
    assert_eq!(c.position(), 3);
    assert_eq!(block_on(c.read(&mut buf)).unwrap(), 0);
    c.set_position(10);
    assert_eq!(block_on(c.read(&mut buf)).unwrap(), 0, "past the end reads EOF");
}

#[test]
fn read_is_cancel_safe() {
    let mut r = MockReader::new(vec![Step::Pending, Step::Data(b"abc")]);
    let (_c, waker) = counting_waker();
    let mut buf = [0u8; 8];
    {
        let mut fut = r.read(&mut buf);
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 3);
}

#[test]
fn read_buf_advances_bufmut() {
    let mut r = MockReader::new(vec![Step::Data(b"abc"), Step::Data(b"defg")]);
    let mut buf = BytesMut::with_capacity(16);
    assert_eq!(block_on(r.read_buf(&mut buf)).unwrap(), 3);
    assert_eq!(block_on(r.read_buf(&mut buf)).unwrap(), 4);
    assert_eq!(&buf[..], b"abcdefg");
    let mut v = Vec::new();
    assert_eq!(block_on(r.read_buf(&mut v)).unwrap(), 0);
    let mut full = [0u8; 0];
    let mut full = &mut full[..];
    assert_eq!(block_on(b"zz".as_slice().read_buf(&mut full)).unwrap(), 0, "no room reads nothing");
}

#[test]
fn read_exact_fills_or_fails_with_eof() {
    let mut r = MockReader::new(vec![Step::Data(b"ab"), Step::Pending, Step::Data(b"cdef")]);
    let mut buf = [0u8; 5];
    assert_eq!(block_on(r.read_exact(&mut buf)).unwrap(), 5);
    assert_eq!(&buf, b"abcde");
    let err = block_on(r.read_exact(&mut buf)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    let mut empty = [0u8; 0];
    assert_eq!(block_on(r.read_exact(&mut empty)).unwrap(), 0);
}

#[test]
fn read_exact_propagates_errors() {
    let mut r = MockReader::new(vec![Step::Data(b"a"), Step::Error(ErrorKind::ConnectionReset)]);
    let mut buf = [0u8; 4];
    assert_eq!(block_on(r.read_exact(&mut buf)).unwrap_err().kind(), ErrorKind::ConnectionReset);
}

#[test]
fn read_to_end_appends_everything() {
    let big: &'static [u8] = Box::leak(vec![9u8; 10_000].into_boxed_slice());
    let mut r = MockReader::new(vec![Step::Data(b"x"), Step::Pending, Step::Data(big)]);
    let mut out = b"pre".to_vec();
    assert_eq!(block_on(r.read_to_end(&mut out)).unwrap(), 10_001);
    assert_eq!(out.len(), 10_004);
    assert_eq!(&out[..4], b"prex");
}

#[test]
fn read_to_end_keeps_data_on_error() {
    let mut r = MockReader::new(vec![Step::Data(b"abc"), Step::Error(ErrorKind::Other)]);
    let mut out = Vec::new();
    assert!(block_on(r.read_to_end(&mut out)).is_err());
    assert_eq!(out, b"abc");
}

#[test]
fn read_to_string_appends_valid_utf8() {
    let mut r = MockReader::new(vec![Step::Data("h\u{e9}".as_bytes()), Step::Pending, Step::Data(b"llo")]);
    let mut s = String::from(">");
    assert_eq!(block_on(r.read_to_string(&mut s)).unwrap(), 6);
    assert_eq!(s, ">h\u{e9}llo");
    let mut empty = String::new();
    assert_eq!(block_on(b"xyz".as_slice().read_to_string(&mut empty)).unwrap(), 3);
    assert_eq!(empty, "xyz");
}

#[test]
fn read_to_string_invalid_utf8_leaves_dst_unchanged() {
    let mut r = MockReader::new(vec![Step::Data(b"ok"), Step::Data(&[0xff, 0xfe])]);
    let mut s = String::from("keep");
    let err = block_on(r.read_to_string(&mut s)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert_eq!(s, "keep");
}

#[test]
fn read_to_string_io_error_and_cancel_leave_dst_unchanged() {
    let mut r = MockReader::new(vec![Step::Data(b"ab"), Step::Error(ErrorKind::BrokenPipe)]);
    let mut s = String::from("k");
    assert_eq!(block_on(r.read_to_string(&mut s)).unwrap_err().kind(), ErrorKind::BrokenPipe);
    assert_eq!(s, "k");
    let mut r = MockReader::new(vec![Step::Data(b"ab"), Step::Pending, Step::Data(b"cd")]);
    let (_c, waker) = counting_waker();
    {
        let mut fut = r.read_to_string(&mut s);
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    assert_eq!(s, "k");
}

#[test]
fn numeric_reads_round_trip_all_widths_and_endianness() {
    let mut w = Vec::new();
    block_on(async {
        w.write_u8(0xab).await.unwrap();
        w.write_i8(-2).await.unwrap();
        w.write_u16(0x0102).await.unwrap();
        w.write_i16(-300).await.unwrap();
        w.write_u32(0x01020304).await.unwrap();
        w.write_i32(-70_000).await.unwrap();
        w.write_u64(u64::MAX - 1).await.unwrap();
        w.write_i64(i64::MIN).await.unwrap();
        w.write_u128(u128::MAX / 3).await.unwrap();
        w.write_i128(-(1i128 << 100)).await.unwrap();
        w.write_f32(1.5).await.unwrap();
        w.write_f64(-2.25).await.unwrap();
        w.write_u16_le(0x0102).await.unwrap();
        w.write_i16_le(-300).await.unwrap();
        w.write_u32_le(0x01020304).await.unwrap();
        w.write_i32_le(-70_000).await.unwrap();
        w.write_u64_le(7).await.unwrap();
        w.write_i64_le(-7).await.unwrap();
        w.write_u128_le(u128::MAX / 5).await.unwrap();
        w.write_i128_le(-5).await.unwrap();
        w.write_f32_le(0.5).await.unwrap();
        w.write_f64_le(1e300).await.unwrap();
    });
    assert_eq!(&w[2..4], &[1, 2], "big endian");
    let le_start = 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 16 + 16 + 4 + 8;
    assert_eq!(&w[le_start..le_start + 2], &[2, 1], "little endian");
    // Read back through a reader that yields one byte at a time.
    let bytes: &'static [u8] = Box::leak(w.into_boxed_slice());
    let mut r = MockReader::new(bytes.chunks(1).flat_map(|c| [Step::Data(c), Step::Pending]).collect());
    block_on(async {
        assert_eq!(r.read_u8().await.unwrap(), 0xab);
        assert_eq!(r.read_i8().await.unwrap(), -2);
        assert_eq!(r.read_u16().await.unwrap(), 0x0102);
        assert_eq!(r.read_i16().await.unwrap(), -300);
        assert_eq!(r.read_u32().await.unwrap(), 0x01020304);
        assert_eq!(r.read_i32().await.unwrap(), -70_000);
        assert_eq!(r.read_u64().await.unwrap(), u64::MAX - 1);
        assert_eq!(r.read_i64().await.unwrap(), i64::MIN);
        assert_eq!(r.read_u128().await.unwrap(), u128::MAX / 3);
        assert_eq!(r.read_i128().await.unwrap(), -(1i128 << 100));
        assert_eq!(r.read_f32().await.unwrap(), 1.5);
        assert_eq!(r.read_f64().await.unwrap(), -2.25);
        assert_eq!(r.read_u16_le().await.unwrap(), 0x0102);
        assert_eq!(r.read_i16_le().await.unwrap(), -300);
        assert_eq!(r.read_u32_le().await.unwrap(), 0x01020304);
        assert_eq!(r.read_i32_le().await.unwrap(), -70_000);
        assert_eq!(r.read_u64_le().await.unwrap(), 7);
        assert_eq!(r.read_i64_le().await.unwrap(), -7);
        assert_eq!(r.read_u128_le().await.unwrap(), u128::MAX / 5);
        assert_eq!(r.read_i128_le().await.unwrap(), -5);
        assert_eq!(r.read_f32_le().await.unwrap(), 0.5);
        assert_eq!(r.read_f64_le().await.unwrap(), 1e300);
        assert_eq!(r.read_u8().await.unwrap_err().kind(), ErrorKind::UnexpectedEof);
    });
}

#[test]
fn numeric_read_short_stream_is_unexpected_eof() {
    let mut r: &[u8] = &[1, 2, 3];
    assert_eq!(block_on(r.read_u32()).unwrap_err().kind(), ErrorKind::UnexpectedEof);
}

#[test]
fn take_limits_reads() {
    let mut t = b"hello world".as_slice().take(5);
    let mut out = String::new();
    assert_eq!(block_on(t.read_to_string(&mut out)).unwrap(), 5);
    assert_eq!(out, "hello");
    assert_eq!(t.limit(), 0);
    t.set_limit(3);
    let mut buf = [0u8; 10];
    assert_eq!(block_on(t.read(&mut buf)).unwrap(), 3);
    assert_eq!(&buf[..3], b" wo");
    assert_eq!(*t.get_ref(), b"rld");
    let inner = t.get_mut();
    *inner = &inner[1..];
    assert_eq!(t.into_inner(), b"ld");
}

#[test]
fn take_with_small_limit_and_large_buffer() {
    let mut r = MockReader::new(vec![Step::Data(b"abcdef")]).take(2);
    let mut buf = [0u8; 16];
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 2);
    assert_eq!(block_on(r.read(&mut buf)).unwrap(), 0);
    assert_eq!(r.get_ref().steps.len(), 1, "the rest is left in the inner reader");
}

#[test]
fn take_as_buf_read() {
    let mut t = b"line1\nline2\n".as_slice().take(8);
    let mut line = String::new();
    assert_eq!(block_on(t.read_line(&mut line)).unwrap(), 6);
    line.clear();
    assert_eq!(block_on(t.read_line(&mut line)).unwrap(), 2);
    assert_eq!(line, "li");
    let (_c, waker) = counting_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    match Pin::new(&mut t).poll_fill_buf(&mut cx) {
        Poll::Ready(Ok(b)) => assert!(b.is_empty()),
        _ => panic!("expected EOF"),
    }
}

#[test]
fn chain_switches_after_first_eof() {
    let first = MockReader::new(vec![Step::Data(b"ab"), Step::Pending, Step::Data(b"c")]);
    let mut c = first.chain(b"de".as_slice());
    let mut out = Vec::new();
    assert_eq!(block_on(c.read_to_end(&mut out)).unwrap(), 5);
    assert_eq!(out, b"abcde");
    let (first, second) = c.get_ref();
    assert!(first.steps.is_empty() && second.is_empty());
    let (_f, s) = c.get_mut();
    assert!(s.is_empty());
    let (_f, s) = c.into_inner();
    assert!(s.is_empty());
}

#[test]
fn chain_does_not_switch_on_zero_capacity_read() {
    let mut c = b"a".as_slice().chain(b"b".as_slice());
    let (_cnt, waker) = counting_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let mut empty = [0u8; 0];
    let mut rb = weft::io::ReadBuf::new(&mut empty);
    assert!(Pin::new(&mut c).poll_read(&mut cx, &mut rb).is_ready());
    let mut out = String::new();
    block_on(c.read_to_string(&mut out)).unwrap();
    assert_eq!(out, "ab");
}

#[test]
fn chain_as_buf_read_crosses_boundary() {
    let mut c = b"one\ntw".as_slice().chain(b"o\nthree".as_slice());
    let mut lines = Vec::new();
    block_on(async {
        let mut l = String::new();
        while c.read_line(&mut l).await.unwrap() > 0 {
            lines.push(std::mem::take(&mut l));
        }
    });
    assert_eq!(lines, ["one\n", "two\n", "three"]);
}

#[test]
fn boxed_and_pinned_readers_forward() {
    let mut b: Box<dyn AsyncRead + Unpin> = Box::new(b"abc".as_slice());
    let mut buf = [0u8; 3];
    block_on(b.read_exact(&mut buf)).unwrap();
    assert_eq!(&buf, b"abc");
    let mut p = Box::pin(MockReader::new(vec![Step::Data(b"xy")]));
    let mut s = String::new();
    block_on(p.read_to_string(&mut s)).unwrap();
    assert_eq!(s, "xy");
    let mut r = b"q".as_slice();
    let mut by_ref = &mut r;
    assert_eq!(block_on((&mut by_ref).read_u8()).unwrap(), b'q');
}

fn _futures_are_send<R: AsyncRead + Unpin + Send>(r: &mut R) -> impl Send + '_ {
    r.read_u32()
}

/// The futures' auto traits follow their fields, so generic callers get `Send` futures.
#[test]
fn futures_and_adapters_have_expected_auto_traits() {
    fn send<T: Send>(_: &T) {}
    fn send_sync_unpin<T: Send + Sync + Unpin>() {}
    fn generic<R>(r: &mut R)
    where
        R: weft::io::AsyncBufRead + weft::io::AsyncWrite + weft::io::AsyncSeek + Unpin + Send,
    {
        use weft::io::{AsyncSeekExt, AsyncWriteExt};
        let mut v = Vec::new();
        let mut s = String::new();
        send(&r.read_to_end(&mut v));
        send(&r.read_to_string(&mut s));
        send(&r.read_line(&mut s));
        send(&r.read_until(b'\n', &mut v));
        send(&r.fill_buf());
        send(&r.read_f64_le());
        send(&r.write_i128(1));
        send(&r.write_all_buf(&mut &b""[..]));
        send(&r.seek(std::io::SeekFrom::Start(0)));
        send(&r.rewind());
    }
    let _ = generic::<std::io::Cursor<Vec<u8>>>;
    send_sync_unpin::<weft::io::BufReader<&[u8]>>();
    send_sync_unpin::<weft::io::BufWriter<Vec<u8>>>();
    send_sync_unpin::<weft::io::BufStream<std::io::Cursor<Vec<u8>>>>();
    send_sync_unpin::<weft::io::Lines<&[u8]>>();
    send_sync_unpin::<weft::io::Split<&[u8]>>();
    send_sync_unpin::<weft::io::Take<&[u8]>>();
    send_sync_unpin::<weft::io::Chain<&[u8], &[u8]>>();
    send_sync_unpin::<weft::io::ReadHalf<weft::io::SimplexStream>>();
    send_sync_unpin::<weft::io::WriteHalf<weft::io::SimplexStream>>();
    send_sync_unpin::<weft::io::Join<&[u8], Vec<u8>>>();
    send_sync_unpin::<weft::io::ReadBuf<'static>>();
}

/// A reader that replaces the `ReadBuf` it is handed with one over other memory.
struct Swapper;
impl AsyncRead for Swapper {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &mut weft::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let other: &'static mut [u8] = Box::leak(vec![1u8; 4].into_boxed_slice());
        *buf = weft::io::ReadBuf::new(other);
        buf.advance(4);
        Poll::Ready(Ok(()))
    }
}

#[test]
#[should_panic(expected = "swapped out the ReadBuf")]
fn read_buf_rejects_a_swapped_buffer() {
    let mut v: Vec<u8> = Vec::with_capacity(2);
    let _ = block_on(Swapper.read_buf(&mut v));
}

#[test]
#[should_panic(expected = "swapped out the ReadBuf")]
fn read_to_end_rejects_a_swapped_buffer() {
    let mut v = Vec::new();
    let _ = block_on(Swapper.read_to_end(&mut v));
}
