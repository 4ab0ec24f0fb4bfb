//! `AsyncWriteExt`: the `async`-style writing methods, blanket-implemented for every
//! `AsyncWrite`.
//!
//! Only constructors live here; the futures are in `write_futures.rs`. Bounds mirror tokio's:
//! borrowing methods need `Self: Unpin`, and the `Buf`-taking ones also `Self: Sized`.

use super::write_futures::{Flush, Shutdown, Write, WriteAll, WriteAllBuf, WriteBuf, WriteNum, WriteVectored};
use super::AsyncWrite;
use bytes::Buf;
use std::io::IoSlice;

macro_rules! write_num {
    ($($(#[$doc:meta])* $name:ident($ty:ty), $n:literal, $encode:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// Fails with `ErrorKind::WriteZero` if the writer stops accepting bytes. Not cancel
        /// safe for multi-byte values: a dropped future may have written part of the value.
        fn $name(&mut self, n: $ty) -> WriteNum<'_, Self, $n>
        where
            Self: Unpin,
        {
            WriteNum { writer: self, buf: n.$encode(), written: 0 }
        }
    )*};
}

/// Writing helpers for every [`AsyncWrite`].
pub trait AsyncWriteExt: AsyncWrite {
    /// Writes some of `src`, returning how many bytes were written.
    ///
    /// Cancel safe: if the future is dropped before completing, nothing was written.
    fn write<'a>(&'a mut self, src: &'a [u8]) -> Write<'a, Self>
    where
        Self: Unpin,
    {
        Write { writer: self, buf: src }
    }

    /// Writes some of `bufs`, in order, returning how many bytes were written.
    ///
    /// Cancel safe: if the future is dropped before completing, nothing was written.
    fn write_vectored<'a, 'b>(&'a mut self, bufs: &'a [IoSlice<'b>]) -> WriteVectored<'a, 'b, Self>
    where
        Self: Unpin,
    {
        WriteVectored { writer: self, bufs }
    }

    /// Writes some of `src`'s current chunk and advances `src` by the amount written.
    ///
    /// Cancel safe: if the future is dropped before completing, nothing was written.
    fn write_buf<'a, B>(&'a mut self, src: &'a mut B) -> WriteBuf<'a, Self, B>
    where
        Self: Sized + Unpin,
        B: Buf,
    {
        WriteBuf { writer: self, buf: src }
    }

    /// Writes all of `src`, advancing it as bytes are written; uses vectored writes when the
    /// writer says they are efficient.
    ///
    /// Cancel safe in the sense that `src` is always advanced by exactly what was written, so
    /// calling again with the same `src` resumes where the dropped future stopped.
    fn write_all_buf<'a, B>(&'a mut self, src: &'a mut B) -> WriteAllBuf<'a, Self, B>
    where
        Self: Sized + Unpin,
        B: Buf,
    {
        WriteAllBuf { writer: self, buf: src }
    }

    /// Writes all of `src`; fails with `ErrorKind::WriteZero` if the writer accepts nothing.
    ///
    /// Not cancel safe: a dropped future may have written a prefix of `src`, and how long a
    /// prefix is not reported.
    fn write_all<'a>(&'a mut self, src: &'a [u8]) -> WriteAll<'a, Self>
    where
        Self: Unpin,
    {
        WriteAll { writer: self, buf: src }
    }

    write_num! {
        /// Writes an unsigned 8-bit integer.
        write_u8(u8), 1, to_be_bytes;
        /// Writes a signed 8-bit integer.
        write_i8(i8), 1, to_be_bytes;
        /// Writes a big-endian unsigned 16-bit integer.
        write_u16(u16), 2, to_be_bytes;
        /// Writes a big-endian signed 16-bit integer.
        write_i16(i16), 2, to_be_bytes;
        /// Writes a big-endian unsigned 32-bit integer.
        write_u32(u32), 4, to_be_bytes;
        /// Writes a big-endian signed 32-bit integer.
        write_i32(i32), 4, to_be_bytes;
        /// Writes a big-endian unsigned 64-bit integer.
        write_u64(u64), 8, to_be_bytes;
        /// Writes a big-endian signed 64-bit integer.
        write_i64(i64), 8, to_be_bytes;
        /// Writes a big-endian unsigned 128-bit integer.
        write_u128(u128), 16, to_be_bytes;
        /// Writes a big-endian signed 128-bit integer.
        write_i128(i128), 16, to_be_bytes;
        /// Writes a big-endian IEEE 754 32-bit float.
        write_f32(f32), 4, to_be_bytes;
        /// Writes a big-endian IEEE 754 64-bit float.
        write_f64(f64), 8, to_be_bytes;
        /// Writes a little-endian unsigned 16-bit integer.
        write_u16_le(u16), 2, to_le_bytes;
        /// Writes a little-endian signed 16-bit integer.
        write_i16_le(i16), 2, to_le_bytes;
        /// Writes a little-endian unsigned 32-bit integer.
        write_u32_le(u32), 4, to_le_bytes;
        /// Writes a little-endian signed 32-bit integer.
        write_i32_le(i32), 4, to_le_bytes;
        /// Writes a little-endian unsigned 64-bit integer.
        write_u64_le(u64), 8, to_le_bytes;
        /// Writes a little-endian signed 64-bit integer.
        write_i64_le(i64), 8, to_le_bytes;
        /// Writes a little-endian unsigned 128-bit integer.
        write_u128_le(u128), 16, to_le_bytes;
        /// Writes a little-endian signed 128-bit integer.
        write_i128_le(i128), 16, to_le_bytes;
        /// Writes a little-endian IEEE 754 32-bit float.
        write_f32_le(f32), 4, to_le_bytes;
        /// Writes a little-endian IEEE 754 64-bit float.
        write_f64_le(f64), 8, to_le_bytes;
    }

    /// Flushes buffered data to its destination.
    fn flush(&mut self) -> Flush<'_, Self>
    where
        Self: Unpin,
    {
        Flush { writer: self }
    }

    /// Shuts the writer down (flushing first where the writer buffers).
    fn shutdown(&mut self) -> Shutdown<'_, Self>
    where
        Self: Unpin,
    {
        Shutdown { writer: self }
    }
}

impl<W: AsyncWrite + ?Sized> AsyncWriteExt for W {}
