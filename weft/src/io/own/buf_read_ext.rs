//! `AsyncBufReadExt`: the `async`-style methods of buffered readers, blanket-implemented for
//! every `AsyncBufRead`.
//!
//! Constructors only; the futures are in `buf_read_futures.rs` and the stream-like adapters in
//! `lines.rs` and `split_segments.rs`.

use super::buf_read_futures::{FillBuf, ReadLine, ReadUntil};
use super::{AsyncBufRead, Lines, Split};
use std::pin::Pin;

/// Helpers for every [`AsyncBufRead`].
pub trait AsyncBufReadExt: AsyncBufRead {
    /// Reads bytes up to and including `byte` (or to EOF), appending them to `buf`; returns
    /// how many were appended (`0` at EOF).
    ///
    /// Cancel safe: bytes read before the future is dropped are already appended to `buf`, so
    /// calling again continues the same line.
    fn read_until<'a>(&'a mut self, byte: u8, buf: &'a mut Vec<u8>) -> ReadUntil<'a, Self>
    where
        Self: Unpin,
    {
        ReadUntil { reader: self, delimiter: byte, buf, read: 0 }
    }

    /// Reads up to and including the next `\n` (or to EOF), appending it to `buf`; returns how
    /// many bytes were appended (`0` at EOF).
    ///
    /// Fails with `ErrorKind::InvalidData` if the bytes read are not UTF-8 (`buf` is then
    /// unchanged). On an I/O error, `buf` gets the bytes read so far if they are valid UTF-8.
    ///
    /// Not cancel safe: if the future is dropped, the bytes it had read are lost; `buf` stays
    /// valid UTF-8 and holds what it held before the call. Use [`lines`](Self::lines) for a
    /// cancel-safe line reader.
    fn read_line<'a>(&'a mut self, buf: &'a mut String) -> ReadLine<'a, Self>
    where
        Self: Unpin,
    {
        ReadLine { reader: self, output: buf, bytes: Vec::new(), read: 0 }
    }

    /// Returns a stream of the segments of this reader separated by `byte` (delimiter removed).
    fn split(self, byte: u8) -> Split<Self>
    where
        Self: Sized + Unpin,
    {
        super::split_segments::split(self, byte)
    }

    /// Returns the contents of the internal buffer, filling it from the reader if it is empty.
    /// An empty slice means EOF. Pair with [`consume`](Self::consume).
    ///
    /// Cancel safe: dropping the future loses no data.
    fn fill_buf(&mut self) -> FillBuf<'_, Self>
    where
        Self: Unpin,
    {
        FillBuf { reader: Some(self) }
    }

    /// Marks `amt` buffered bytes as consumed.
    fn consume(&mut self, amt: usize)
    where
        Self: Unpin,
    {
        Pin::new(self).consume(amt)
    }

    /// Returns a stream of the lines of this reader, with `\n` or `\r\n` removed.
    fn lines(self) -> Lines<Self>
    where
        Self: Sized,
    {
        super::lines::lines(self)
    }
}

impl<R: AsyncBufRead + ?Sized> AsyncBufReadExt for R {}
