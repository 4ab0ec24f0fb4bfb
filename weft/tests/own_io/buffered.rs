use crate::support::{block_on, MockReader, MockWriter, Step};
use std::io::{self, Cursor, ErrorKind, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{Context, Poll};
use weft::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncSeek, AsyncSeekExt, AsyncWrite, AsyncWriteExt, BufReader, BufStream,
    BufWriter, ReadBuf,
};

/// A `Cursor<Vec<u8>>` that counts reads and can make each `poll_complete` pend once.
struct Counting {
    c: Cursor<Vec<u8>>,
    reads: usize,
    pend_seek: bool,
    pended: bool,
}

fn counting(data: &[u8]) -> Counting {
    Counting { c: Cursor::new(data.to_vec()), reads: 0, pend_seek: false, pended: false }
}

impl AsyncRead for Counting {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.reads += 1;
        Pin::new(&mut self.c).poll_read(cx, buf)
    }
}
impl AsyncSeek for Counting {
    fn start_seek(mut self: Pin<&mut Self>, pos: SeekFrom) -> io::Result<()> {
        Pin::new(&mut self.c).start_seek(pos)
    }
    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        if self.pend_seek && !self.pended {
            self.pended = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.pended = false;
        Pin::new(&mut self.c).poll_complete(cx)
    }
}

#[test]
fn buf_reader_coalesces_small_reads() {
    let mut r = BufReader::with_capacity(4, counting(b"abcdefgh"));
    let mut one = [0u8; 1];
    for expected in b"abcd" {
        block_on(r.read_exact(&mut one)).unwrap();
        assert_eq!(one[0], *expected);
    }
    assert_eq!(r.get_ref().reads, 1);
    block_on(r.read_exact(&mut one)).unwrap();
    assert_eq!(r.buffer(), b"fgh");
    assert_eq!(r.get_ref().reads, 2);
}

#[test]
fn buf_reader_bypasses_buffer_for_large_reads() {
    let mut r = BufReader::with_capacity(4, counting(b"abcdefghij"));
    let mut big = [0u8; 8];
    assert_eq!(block_on(r.read(&mut big)).unwrap(), 8);
    assert!(r.buffer().is_empty());
    let mut small = [0u8; 1];
    block_on(r.read(&mut small)).unwrap();
    assert_eq!(r.buffer(), b"j");
    // With data buffered, a large read is served from the buffer first.
    assert_eq!(block_on(r.read(&mut big)).unwrap(), 1);
}

#[test]
fn buf_reader_default_capacity_is_8k() {
    let data = vec![1u8; 10_000];
    let mut r = BufReader::new(data.as_slice());
    assert_eq!(block_on(r.fill_buf()).unwrap().len(), 8 * 1024);
    let mut w = BufWriter::new(MockWriter::new(usize::MAX));
    block_on(w.write_all(&vec![0; 8 * 1024 - 1])).unwrap();
    assert_eq!(w.buffer().len(), 8 * 1024 - 1);
    assert!(w.get_ref().writes.is_empty());
}

#[test]
fn buf_reader_seek_discards_buffer_and_adjusts_current() {
    let mut r = BufReader::with_capacity(4, counting(b"0123456789"));
    assert_eq!(block_on(r.read_u8()).unwrap(), b'0');
    assert_eq!(r.buffer(), b"123");
    assert_eq!(block_on(r.stream_position()).unwrap(), 1, "relative to what was consumed");
    assert!(r.buffer().is_empty(), "seeking discards the buffer");
    assert_eq!(block_on(r.read_u8()).unwrap(), b'1');
    let reads = r.get_ref().reads;
    // Even a target inside the buffer discards it and re-reads.
    assert_eq!(block_on(r.seek(SeekFrom::Start(3))).unwrap(), 3);
    assert_eq!(block_on(r.read_u8()).unwrap(), b'3');
    assert_eq!(r.get_ref().reads, reads + 1);
    assert_eq!(block_on(r.seek(SeekFrom::Current(2))).unwrap(), 6);
    assert_eq!(block_on(r.read_u8()).unwrap(), b'6');
    assert_eq!(block_on(r.seek(SeekFrom::End(-1))).unwrap(), 9);
    assert_eq!(block_on(r.read_u8()).unwrap(), b'9');
    block_on(r.rewind()).unwrap();
    assert_eq!(block_on(r.read_u8()).unwrap(), b'0');
}

#[test]
fn buf_reader_seek_with_pending_inner() {
    let mut inner = counting(b"abcdef");
    inner.pend_seek = true;
    let mut r = BufReader::with_capacity(2, inner);
    assert_eq!(block_on(r.read_u8()).unwrap(), b'a');
    assert_eq!(block_on(r.seek(SeekFrom::Current(1))).unwrap(), 2);
    assert_eq!(block_on(r.read_u8()).unwrap(), b'c');
}

#[test]
fn buf_reader_seek_overflow_and_errors() {
    let mut r = BufReader::with_capacity(4, counting(b"0123456789"));
    assert_eq!(block_on(r.read_u8()).unwrap(), b'0');
    // i64::MIN - 3 overflows: the inner reader is moved back by the buffered 3 first, and the
    // failing second seek leaves it where `Current(0)` would have.
    assert!(block_on(r.seek(SeekFrom::Current(i64::MIN))).is_err());
    assert_eq!(r.get_ref().c.position(), 1);
    assert_eq!(block_on(r.read_u8()).unwrap(), b'1');
    // A rejected seek leaves the reader usable.
    assert_eq!(block_on(r.seek(SeekFrom::Current(-100))).unwrap_err().kind(), ErrorKind::InvalidInput);
    assert_eq!(block_on(r.seek(SeekFrom::Start(5))).unwrap(), 5);
}

#[test]
fn buf_reader_accessors_and_write_passthrough() {
    let mut r = BufReader::new(Cursor::new(Vec::new()));
    block_on(r.write_all(b"xyz")).unwrap();
    block_on(r.flush()).unwrap();
    assert_eq!(r.get_ref().get_ref(), b"xyz");
    r.get_mut().set_position(1);
    assert_eq!(Pin::new(&mut r).get_pin_mut().position(), 1);
    let mut s = String::new();
    block_on(r.read_to_string(&mut s)).unwrap();
    assert_eq!(s, "yz");
    assert!(format!("{r:?}").contains("BufReader"));
    assert_eq!(r.into_inner().into_inner(), b"xyz");
}

#[test]
fn buf_writer_buffers_until_capacity() {
    let mut w = BufWriter::with_capacity(8, MockWriter::new(100));
    block_on(w.write_all(b"abc")).unwrap();
    block_on(w.write_all(b"def")).unwrap();
    assert!(w.get_ref().writes.is_empty());
    assert_eq!(w.buffer(), b"abcdef");
    block_on(w.write_all(b"ghi")).unwrap();
    assert_eq!(w.get_ref().data, b"abcdef", "overflowing write flushed the buffer first");
    assert_eq!(w.buffer(), b"ghi");
    block_on(w.flush()).unwrap();
    assert_eq!(w.get_ref().data, b"abcdefghi");
    assert_eq!(w.get_ref().flushes, 1);
}

#[test]
fn buf_writer_large_writes_bypass() {
    let mut w = BufWriter::with_capacity(4, MockWriter::new(100));
    block_on(w.write_all(b"a")).unwrap();
    assert_eq!(block_on(w.write(b"0123456789")).unwrap(), 10);
    assert_eq!(w.get_ref().writes, [1, 10]);
    assert!(w.buffer().is_empty());
}

#[test]
fn buf_writer_flushes_through_slow_writer_in_order() {
    let mut w = BufWriter::with_capacity(6, MockWriter { pend: true, ..MockWriter::new(2) });
    for chunk in [&b"abcd"[..], b"efg", b"h", b"ijklmnop", b"q"] {
        block_on(w.write_all(chunk)).unwrap();
    }
    block_on(w.shutdown()).unwrap();
    assert_eq!(w.get_ref().data, b"abcdefghijklmnopq");
    assert_eq!(w.get_ref().shutdowns, 1);
    assert!(w.buffer().is_empty());
}

#[test]
fn buf_writer_write_zero_and_into_inner() {
    let mut w = BufWriter::with_capacity(4, MockWriter::new(0));
    block_on(w.write_all(b"ab")).unwrap();
    assert_eq!(block_on(w.flush()).unwrap_err().kind(), ErrorKind::WriteZero);
    let mut w = BufWriter::with_capacity(4, MockWriter::new(10));
    block_on(w.write_all(b"ab")).unwrap();
    assert!(w.into_inner().data.is_empty(), "unflushed data is lost");
}

#[test]
fn buf_writer_vectored_paths() {
    let bufs = [IoSlice::new(b""), IoSlice::new(b"ab"), IoSlice::new(b"cdef"), IoSlice::new(b"gh")];
    let mut w = BufWriter::with_capacity(5, MockWriter::new(100));
    assert!(w.is_write_vectored());
    assert_eq!(block_on(w.write_vectored(&bufs)).unwrap(), 5, "fills the buffer with whole and partial slices");
    assert_eq!(w.buffer(), b"abcde");
    let mut w = BufWriter::with_capacity(3, MockWriter::new(100));
    assert_eq!(block_on(w.write_vectored(&[IoSlice::new(b"wxyz")])).unwrap(), 4, "oversized first slice goes direct");
    assert_eq!(w.get_ref().data, b"wxyz");
    let mut w = BufWriter::with_capacity(16, MockWriter { vectored: true, ..MockWriter::new(100) });
    assert_eq!(block_on(w.write_vectored(&bufs)).unwrap(), 8);
    assert_eq!(w.buffer(), b"abcdefgh");
    assert_eq!(block_on(w.write_vectored(&[IoSlice::new(&[1; 20])])).unwrap(), 20);
    assert_eq!(w.get_ref().data.len(), 28);
}

#[test]
fn buf_writer_seek_writes_buffer_first() {
    let mut w = BufWriter::new(Cursor::new(Vec::new()));
    block_on(w.write_all(b"hello")).unwrap();
    assert_eq!(block_on(w.seek(SeekFrom::Start(1))).unwrap(), 1);
    assert_eq!(w.get_ref().get_ref(), b"hello");
    block_on(w.write_all(b"E")).unwrap();
    block_on(w.flush()).unwrap();
    assert_eq!(w.get_ref().get_ref(), b"hEllo");
    let mut s = String::new();
    block_on(w.read_to_string(&mut s)).unwrap();
    assert_eq!(s, "llo", "reads pass through to the inner stream");
    let _ = Pin::new(&mut w).get_pin_mut();
    let _ = w.get_mut();
    assert!(format!("{w:?}").contains("BufWriter"));
}

#[test]
fn buf_stream_round_trip_and_seek() {
    let mut s = BufStream::with_capacity(4, 4, Cursor::new(Vec::new()));
    block_on(s.write_all(b"line one\nline two\n")).unwrap();
    block_on(s.flush()).unwrap();
    block_on(s.rewind()).unwrap();
    assert_eq!(s.get_ref().position(), 0);
    let mut l = String::new();
    block_on(s.read_line(&mut l)).unwrap();
    assert_eq!(l, "line one\n");
    // Seek discards the read buffer; position is what was consumed.
    assert_eq!(block_on(s.stream_position()).unwrap(), 9);
    block_on(s.write_all(b"LINE")).unwrap();
    block_on(s.seek(SeekFrom::Start(0))).unwrap();
    let mut all = String::new();
    block_on(s.read_to_string(&mut all)).unwrap();
    assert_eq!(all, "line one\nLINE two\n", "pending writes were written before the seek");
    assert_eq!(s.get_ref().get_ref().len(), 18);
    let _ = s.get_mut();
    let _ = Pin::new(&mut s).get_pin_mut();
    assert_eq!(s.into_inner().into_inner().len(), 18);
}

#[test]
fn buf_stream_from_either_layering_keeps_buffers() {
    let mut layered = BufWriter::new(BufReader::new(Cursor::new(b"read me".to_vec())));
    block_on(layered.write_all(b"buffered")).unwrap();
    let mut s = BufStream::from(layered);
    block_on(s.flush()).unwrap();
    assert_eq!(s.get_ref().get_ref(), b"buffered");
    let layered = BufReader::new(BufWriter::new(Cursor::new(b"abc".to_vec())));
    let mut s = BufStream::from(layered);
    let mut out = String::new();
    block_on(s.read_to_string(&mut out)).unwrap();
    assert_eq!(out, "abc");
}

#[test]
fn seek_ext_on_cursor() {
    let mut c = Cursor::new(b"abcdef".to_vec());
    assert_eq!(block_on(c.seek(SeekFrom::End(-2))).unwrap(), 4);
    assert_eq!(block_on(c.stream_position()).unwrap(), 4);
    block_on(c.rewind()).unwrap();
    assert_eq!(c.position(), 0);
    assert_eq!(block_on(c.seek(SeekFrom::Current(-1))).unwrap_err().kind(), ErrorKind::InvalidInput);
}

#[test]
fn seek_future_completes_earlier_seek_first() {
    let mut c = counting(b"abcdef");
    c.pend_seek = true;
    Pin::new(&mut c).start_seek(SeekFrom::Start(5)).unwrap();
    // The Seek future first waits for the outstanding seek, then performs its own.
    assert_eq!(block_on(c.seek(SeekFrom::Current(-2))).unwrap(), 3);
    let mut r = MockReader::new(vec![Step::Data(b"z")]);
    let mut b = [0u8; 1];
    block_on(r.read_exact(&mut b)).unwrap();
}
