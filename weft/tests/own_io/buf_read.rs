use crate::support::{block_on, counting_waker, poll_once, MockReader, Step};
use std::io::ErrorKind;
use weft::io::{AsyncBufReadExt, BufReader};

fn reader(steps: Vec<Step>) -> BufReader<MockReader> {
    BufReader::with_capacity(4, MockReader::new(steps))
}

#[test]
fn fill_buf_and_consume() {
    let mut r = reader(vec![Step::Pending, Step::Data(b"abcdef")]);
    let got = block_on(r.fill_buf()).unwrap().to_vec();
    assert_eq!(got, b"abcd");
    r.consume(3);
    assert_eq!(block_on(r.fill_buf()).unwrap(), b"d");
    r.consume(1);
    assert_eq!(block_on(r.fill_buf()).unwrap(), b"ef");
    r.consume(10);
    assert_eq!(block_on(r.fill_buf()).unwrap(), b"");
}

#[test]
fn fill_buf_is_cancel_safe() {
    let mut r = reader(vec![Step::Pending, Step::Data(b"xy")]);
    let (_c, waker) = counting_waker();
    {
        let mut fut = r.fill_buf();
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    assert_eq!(block_on(r.fill_buf()).unwrap(), b"xy");
}

#[test]
fn read_until_with_and_without_delimiter() {
    let mut r = reader(vec![Step::Data(b"ab,cdefg,"), Step::Data(b"tail")]);
    let mut buf = Vec::new();
    assert_eq!(block_on(r.read_until(b',', &mut buf)).unwrap(), 3);
    assert_eq!(buf, b"ab,");
    buf.clear();
    assert_eq!(block_on(r.read_until(b',', &mut buf)).unwrap(), 6);
    assert_eq!(buf, b"cdefg,");
    buf.clear();
    assert_eq!(block_on(r.read_until(b',', &mut buf)).unwrap(), 4);
    assert_eq!(buf, b"tail");
    buf.clear();
    assert_eq!(block_on(r.read_until(b',', &mut buf)).unwrap(), 0);
}

#[test]
fn read_until_cancel_keeps_partial_data_in_buf() {
    let mut r = reader(vec![Step::Data(b"abc"), Step::Pending, Step::Data(b"d\n")]);
    let (_c, waker) = counting_waker();
    let mut buf = Vec::new();
    {
        let mut fut = r.read_until(b'\n', &mut buf);
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    assert_eq!(buf, b"abc", "partially read bytes are appended");
    assert_eq!(block_on(r.read_until(b'\n', &mut buf)).unwrap(), 2);
    assert_eq!(buf, b"abcd\n");
}

#[test]
fn read_line_appends_with_newline() {
    let mut r = reader(vec![Step::Data(b"one\r\ntwo\nthr"), Step::Pending, Step::Data(b"ee")]);
    let mut s = String::from("#");
    assert_eq!(block_on(r.read_line(&mut s)).unwrap(), 5);
    assert_eq!(s, "#one\r\n");
    assert_eq!(block_on(r.read_line(&mut s)).unwrap(), 4);
    assert_eq!(block_on(r.read_line(&mut s)).unwrap(), 5);
    assert_eq!(s, "#one\r\ntwo\nthree");
    assert_eq!(block_on(r.read_line(&mut s)).unwrap(), 0);
}

#[test]
fn read_line_invalid_utf8_leaves_buf_unchanged() {
    let mut r = reader(vec![Step::Data(&[b'a', 0xff, b'\n', b'o', b'k', b'\n'])]);
    let mut s = String::from("x");
    assert_eq!(block_on(r.read_line(&mut s)).unwrap_err().kind(), ErrorKind::InvalidData);
    assert_eq!(s, "x");
    assert_eq!(block_on(r.read_line(&mut s)).unwrap(), 3, "the bad line was consumed");
    assert_eq!(s, "xok\n");
}

#[test]
fn read_line_io_error_keeps_valid_prefix() {
    let mut r = reader(vec![Step::Data(b"par"), Step::Error(ErrorKind::ConnectionAborted)]);
    let mut s = String::new();
    assert_eq!(block_on(r.read_line(&mut s)).unwrap_err().kind(), ErrorKind::ConnectionAborted);
    assert_eq!(s, "par");
}

#[test]
fn read_line_cancel_keeps_buf_valid_and_unchanged() {
    let mut r = reader(vec![Step::Data(&[b'h', 0xc3]), Step::Pending, Step::Data(&[0xa9, b'\n'])]);
    let (_c, waker) = counting_waker();
    let mut s = String::from("orig");
    {
        let mut fut = r.read_line(&mut s);
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    assert_eq!(s, "orig", "half a UTF-8 sequence never reaches the String");
}

#[test]
fn lines_strip_lf_and_crlf_only() {
    let data: &[u8] = b"a\nb\r\n\nc\r\r\nlast\r";
    let mut lines = data.lines();
    let mut got = Vec::new();
    block_on(async {
        while let Some(l) = lines.next_line().await.unwrap() {
            got.push(l);
        }
    });
    assert_eq!(got, ["a", "b", "", "c\r", "last\r"]);
    assert!(block_on(lines.next_line()).unwrap().is_none(), "stays at EOF");
}

#[test]
fn lines_on_partial_input_and_cancellation() {
    let mut lines =
        reader(vec![Step::Data(b"hel"), Step::Pending, Step::Data(b"lo\r"), Step::Pending, Step::Data(b"\nworld")])
            .lines();
    let (_c, waker) = counting_waker();
    {
        let mut fut = Box::pin(lines.next_line());
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    // The dropped call's bytes were kept inside `Lines`.
    assert_eq!(block_on(lines.next_line()).unwrap().as_deref(), Some("hello"));
    assert_eq!(block_on(lines.next_line()).unwrap().as_deref(), Some("world"));
    assert_eq!(block_on(lines.next_line()).unwrap(), None);
    assert_eq!(lines.get_ref().get_ref().steps.len(), 0);
    let _ = lines.get_mut();
    let _inner: BufReader<MockReader> = lines.into_inner();
}

#[test]
fn lines_invalid_utf8_is_an_error_then_continues() {
    let data: &[u8] = &[0xff, b'\n', b'o', b'k'];
    let mut lines = data.lines();
    assert_eq!(block_on(lines.next_line()).unwrap_err().kind(), ErrorKind::InvalidData);
    assert_eq!(block_on(lines.next_line()).unwrap().as_deref(), Some("ok"));
}

#[test]
fn lines_poll_next_line() {
    let mut lines = b"x\n".as_slice().lines();
    let (_c, waker) = counting_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let p = std::pin::Pin::new(&mut lines).poll_next_line(&mut cx);
    assert!(matches!(p, std::task::Poll::Ready(Ok(Some(ref l))) if l == "x"));
}

#[test]
fn split_segments() {
    let mut seg = reader(vec![Step::Data(b"a:bb:"), Step::Pending, Step::Data(b":ccc")]).split(b':');
    let mut got = Vec::new();
    block_on(async {
        while let Some(s) = seg.next_segment().await.unwrap() {
            got.push(s);
        }
    });
    assert_eq!(got, [b"a".to_vec(), b"bb".to_vec(), b"".to_vec(), b"ccc".to_vec()]);
    let (_c, waker) = counting_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    assert!(matches!(std::pin::Pin::new(&mut seg).poll_next_segment(&mut cx), std::task::Poll::Ready(Ok(None))));
}

#[test]
fn split_is_cancel_safe() {
    let mut seg = reader(vec![Step::Data(b"ab"), Step::Pending, Step::Data(b"c|d")]).split(b'|');
    let (_c, waker) = counting_waker();
    {
        let mut fut = Box::pin(seg.next_segment());
        assert!(poll_once(&mut fut, &waker).is_pending());
    }
    assert_eq!(block_on(seg.next_segment()).unwrap().unwrap(), b"abc");
    assert_eq!(block_on(seg.next_segment()).unwrap().unwrap(), b"d");
}

#[test]
fn cursor_is_buf_read() {
    let mut c = std::io::Cursor::new(b"k=v\nz".to_vec());
    let mut s = String::new();
    block_on(c.read_line(&mut s)).unwrap();
    assert_eq!(s, "k=v\n");
    assert_eq!(block_on(c.fill_buf()).unwrap(), b"z");
}
