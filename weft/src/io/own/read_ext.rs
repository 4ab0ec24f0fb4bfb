//! `AsyncReadExt`: the `async`-style reading methods, blanket-implemented for every
//! `AsyncRead`.
//!
//! The trait is only a list of constructors; the state machines live in `read_futures.rs`, and
//! the adapters `take`/`chain` in `take.rs`/`chain.rs`. Methods that borrow the reader require
//! `Self: Unpin` (the future re-pins `&mut Self` on every poll), and adapters that consume it
//! require `Self: Sized`, exactly as tokio's do.

use super::read_futures::{Read, ReadBufFuture, ReadExact, ReadNum, ReadToEnd, ReadToString};
use super::{AsyncRead, Chain, ReadBuf, Take};
use bytes::BufMut;

macro_rules! read_num {
    ($($(#[$doc:meta])* $name:ident -> $ty:ty, $n:literal, $decode:path;)*) => {$(
        $(#[$doc])*
        ///
        /// Fails with `ErrorKind::UnexpectedEof` if the stream ends first. Not cancel safe for
        /// multi-byte values: bytes already read are lost if the future is dropped.
        fn $name(&mut self) -> ReadNum<'_, Self, $ty, $n>
        where
            Self: Unpin,
        {
            ReadNum { reader: self, buf: [0; $n], filled: 0, decode: $decode }
        }
    )*};
}

/// Reading helpers for every [`AsyncRead`].
pub trait AsyncReadExt: AsyncRead {
    /// Returns a reader that yields all of `self`, then all of `next`.
    fn chain<R>(self, next: R) -> Chain<Self, R>
    where
        Self: Sized,
        R: AsyncRead,
    {
        super::chain::chain(self, next)
    }

    /// Reads some bytes into `buf`, returning how many (`0` at EOF or if `buf` is empty).
    ///
    /// Cancel safe: if the future is dropped before completing, no data was read.
    fn read<'a>(&'a mut self, buf: &'a mut [u8]) -> Read<'a, Self>
    where
        Self: Unpin,
    {
        Read { reader: self, buf }
    }

    /// Reads some bytes into `buf`'s spare room, advancing it; returns how many (`0` at EOF or
    /// if `buf` has no room).
    ///
    /// Cancel safe: if the future is dropped before completing, no data was read.
    fn read_buf<'a, B>(&'a mut self, buf: &'a mut B) -> ReadBufFuture<'a, Self, B>
    where
        Self: Unpin,
        B: BufMut + ?Sized,
    {
        ReadBufFuture { reader: self, buf }
    }

    /// Reads exactly `buf.len()` bytes, returning that length.
    ///
    /// Fails with `ErrorKind::UnexpectedEof` if the stream ends first (the contents of `buf`
    /// are then unspecified). Not cancel safe: bytes already read are lost if dropped.
    fn read_exact<'a>(&'a mut self, buf: &'a mut [u8]) -> ReadExact<'a, Self>
    where
        Self: Unpin,
    {
        ReadExact { reader: self, buf: ReadBuf::new(buf) }
    }

    read_num! {
        /// Reads an unsigned 8-bit integer.
        read_u8 -> u8, 1, u8::from_be_bytes;
        /// Reads a signed 8-bit integer.
        read_i8 -> i8, 1, i8::from_be_bytes;
        /// Reads a big-endian unsigned 16-bit integer.
        read_u16 -> u16, 2, u16::from_be_bytes;
        /// Reads a big-endian signed 16-bit integer.
        read_i16 -> i16, 2, i16::from_be_bytes;
        /// Reads a big-endian unsigned 32-bit integer.
        read_u32 -> u32, 4, u32::from_be_bytes;
        /// Reads a big-endian signed 32-bit integer.
        read_i32 -> i32, 4, i32::from_be_bytes;
        /// Reads a big-endian unsigned 64-bit integer.
        read_u64 -> u64, 8, u64::from_be_bytes;
        /// Reads a big-endian signed 64-bit integer.
        read_i64 -> i64, 8, i64::from_be_bytes;
        /// Reads a big-endian unsigned 128-bit integer.
        read_u128 -> u128, 16, u128::from_be_bytes;
        /// Reads a big-endian signed 128-bit integer.
        read_i128 -> i128, 16, i128::from_be_bytes;
        /// Reads a big-endian IEEE 754 32-bit float.
        read_f32 -> f32, 4, f32::from_be_bytes;
        /// Reads a big-endian IEEE 754 64-bit float.
        read_f64 -> f64, 8, f64::from_be_bytes;
        /// Reads a little-endian unsigned 16-bit integer.
        read_u16_le -> u16, 2, u16::from_le_bytes;
        /// Reads a little-endian signed 16-bit integer.
        read_i16_le -> i16, 2, i16::from_le_bytes;
        /// Reads a little-endian unsigned 32-bit integer.
        read_u32_le -> u32, 4, u32::from_le_bytes;
        /// Reads a little-endian signed 32-bit integer.
        read_i32_le -> i32, 4, i32::from_le_bytes;
        /// Reads a little-endian unsigned 64-bit integer.
        read_u64_le -> u64, 8, u64::from_le_bytes;
        /// Reads a little-endian signed 64-bit integer.
        read_i64_le -> i64, 8, i64::from_le_bytes;
        /// Reads a little-endian unsigned 128-bit integer.
        read_u128_le -> u128, 16, u128::from_le_bytes;
        /// Reads a little-endian signed 128-bit integer.
        read_i128_le -> i128, 16, i128::from_le_bytes;
        /// Reads a little-endian IEEE 754 32-bit float.
        read_f32_le -> f32, 4, f32::from_le_bytes;
        /// Reads a little-endian IEEE 754 64-bit float.
        read_f64_le -> f64, 8, f64::from_le_bytes;
    }

    /// Reads until EOF, appending to `buf`; returns the number of bytes appended.
    ///
    /// Bytes read before an error or cancellation stay appended to `buf`.
    fn read_to_end<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> ReadToEnd<'a, Self>
    where
        Self: Unpin,
    {
        ReadToEnd { reader: self, buf, read: 0 }
    }

    /// Reads until EOF, appending to `dst`; returns the number of bytes appended.
    ///
    /// If the data is not valid UTF-8, fails with `ErrorKind::InvalidData` and leaves `dst`
    /// unchanged. On an I/O error or cancellation `dst` is also unchanged, and the bytes read
    /// so far are lost.
    fn read_to_string<'a>(&'a mut self, dst: &'a mut String) -> ReadToString<'a, Self>
    where
        Self: Unpin,
    {
        ReadToString { reader: self, dst, bytes: Vec::new(), read: 0 }
    }

    /// Returns a reader that yields at most `limit` bytes of `self`, then EOF.
    fn take(self, limit: u64) -> Take<Self>
    where
        Self: Sized,
    {
        super::take::take(self, limit)
    }
}

impl<R: AsyncRead + ?Sized> AsyncReadExt for R {}
