//! The split halves of a byte stream, written once for `TcpStream` (`net/tcp/split.rs`) and
//! `UnixStream` (`net/unix/split.rs`): `stream_halves!` expands, inside the protocol's
//! `split` module, to tokio's five types for that stream:
//!
//! - `ReadHalf<'a>` / `WriteHalf<'a>`: borrowed halves (`split(&mut self)`: no allocation,
//!   no locking);
//! - `OwnedReadHalf` / `OwnedWriteHalf`: owned halves sharing one `Arc` (`into_split`), put
//!   back together by `reunite`;
//! - `ReuniteError`: the two halves given to `reunite` came from different streams (both are
//!   handed back in its public fields).
//!
//! A macro, not generic types: each protocol has its own nominal types as in tokio (tuple
//! constructors and patterns such as `ReuniteError(read, write)` do not work through a type
//! alias of a generic struct), while the bodies and docs stay one copy. Protocol-specific
//! methods (TCP's `peek`) are added beside the expansion, in the protocol's file.
//!
//! No locking is needed: the two directions of a socket are independent, and the driver keeps
//! separate reader and writer waker slots per registration, so one task may read while
//! another writes without stealing each other's wake-ups.
//!
//! **Dropping an `OwnedWriteHalf` shuts down the write direction** (as tokio's does), unless
//! it was given to `forget` or `reunite`, or `poll_shutdown` already succeeded.
//!
//! The stream type must have an `io: PollEvented<…>` field visible at the expansion site and
//! the methods `local_addr`, `peer_addr`, `ready`, `readable`, `writable`, the `try_read*` /
//! `try_write*` family and `shutdown_std(Shutdown)`.

/// Defines `ReadHalf`, `WriteHalf`, `OwnedReadHalf`, `OwnedWriteHalf` and `ReuniteError` for
/// `$stream` (whose addresses are `$addr`), the `split`/`split_owned` constructors, and their
/// methods and `AsyncRead`/`AsyncWrite`/`AsRef` impls.
macro_rules! stream_halves {
    ($stream:ident, $addr:ty) => {
        #[doc = concat!("Borrowed read half of a [`", stringify!($stream), "`], from `split`.")]
        #[derive(Debug)]
        pub struct ReadHalf<'a>(&'a $stream);

        #[doc = concat!("Borrowed write half of a [`", stringify!($stream), "`], from `split`; ")]
        /// `poll_shutdown` shuts down the write direction.
        #[derive(Debug)]
        pub struct WriteHalf<'a>(&'a $stream);

        #[doc = concat!("Owned read half of a [`", stringify!($stream), "`], from `into_split`.")]
        #[derive(Debug)]
        pub struct OwnedReadHalf {
            inner: $crate::loom::sync::Arc<$stream>,
        }

        #[doc = concat!("Owned write half of a [`", stringify!($stream), "`], from `into_split`.")]
        ///
        /// Dropping it shuts down the write direction of the stream (the peer reads end of
        /// stream), as tokio's does, unless it was given to [`forget`](Self::forget) or
        /// `reunite`, or `poll_shutdown` already did so.
        #[derive(Debug)]
        pub struct OwnedWriteHalf {
            inner: $crate::loom::sync::Arc<$stream>,
            shutdown_on_drop: bool,
        }

        /// The halves given to `reunite` came from different streams; both are handed back.
        #[derive(Debug)]
        pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

        impl std::fmt::Display for ReuniteError {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("tried to reunite halves that are not from the same socket")
            }
        }

        impl std::error::Error for ReuniteError {}

        pub(crate) fn split(stream: &mut $stream) -> (ReadHalf<'_>, WriteHalf<'_>) {
            (ReadHalf(stream), WriteHalf(stream))
        }

        pub(crate) fn split_owned(stream: $stream) -> (OwnedReadHalf, OwnedWriteHalf) {
            let inner = $crate::loom::sync::Arc::new(stream);
            (OwnedReadHalf { inner: inner.clone() }, OwnedWriteHalf { inner, shutdown_on_drop: true })
        }

        impl ReadHalf<'_> {
            $crate::net::split::read_half_methods!($addr, self => self.0);
        }

        impl WriteHalf<'_> {
            $crate::net::split::write_half_methods!($addr, self => self.0);
        }

        impl OwnedReadHalf {
            /// Puts the halves back together into the stream they came from; fails (handing
            /// both back) if they come from different streams.
            pub fn reunite(self, other: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
                if !$crate::loom::sync::Arc::ptr_eq(&self.inner, &other.inner) {
                    return Err(ReuniteError(self, other));
                }
                let mut other = other;
                // Reunited, the write direction stays open.
                other.shutdown_on_drop = false;
                let inner = other.inner.clone();
                drop(other);
                drop(self);
                Ok($crate::loom::sync::Arc::try_unwrap(inner).expect("both halves were just dropped"))
            }

            $crate::net::split::read_half_methods!($addr, self => self.inner);
        }

        impl OwnedWriteHalf {
            /// Puts the halves back together; see [`OwnedReadHalf::reunite`].
            pub fn reunite(self, other: OwnedReadHalf) -> Result<$stream, ReuniteError> {
                other.reunite(self)
            }

            /// Drops the half without shutting down the write direction.
            pub fn forget(mut self) {
                self.shutdown_on_drop = false;
            }

            $crate::net::split::write_half_methods!($addr, self => self.inner);
        }

        impl Drop for OwnedWriteHalf {
            fn drop(&mut self) {
                if self.shutdown_on_drop {
                    let _ = self.inner.shutdown_std(std::net::Shutdown::Write);
                }
            }
        }

        impl $crate::io::AsyncRead for ReadHalf<'_> {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut $crate::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.0.io.poll_read(cx, buf)
            }
        }

        impl $crate::io::AsyncRead for OwnedReadHalf {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut $crate::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.inner.io.poll_read(cx, buf)
            }
        }

        $crate::net::split::write_half_io!(WriteHalf<'_>, s => s.0);
        // A successful `poll_shutdown` has done what the drop would do: disarm the drop.
        $crate::net::split::write_half_io!(OwnedWriteHalf, s => s.inner, shutdown_on_drop);

        impl AsRef<$stream> for ReadHalf<'_> {
            fn as_ref(&self) -> &$stream {
                self.0
            }
        }

        impl AsRef<$stream> for WriteHalf<'_> {
            fn as_ref(&self) -> &$stream {
                self.0
            }
        }

        impl AsRef<$stream> for OwnedReadHalf {
            fn as_ref(&self) -> &$stream {
                &self.inner
            }
        }

        impl AsRef<$stream> for OwnedWriteHalf {
            fn as_ref(&self) -> &$stream {
                &self.inner
            }
        }
    };
}

/// The methods both halves have, each forwarding to the stream's method of the same name.
macro_rules! half_methods {
    ($addr:ty, $self:ident => $stream:expr) => {
        /// The address of the connected peer.
        pub fn peer_addr(&$self) -> std::io::Result<$addr> {
            $stream.peer_addr()
        }

        /// The address this stream is bound to.
        pub fn local_addr(&$self) -> std::io::Result<$addr> {
            $stream.local_addr()
        }

        /// Waits until any of `interest` is ready; returns the readiness found.
        pub async fn ready(&$self, interest: $crate::io::Interest) -> std::io::Result<$crate::io::Ready> {
            $stream.ready(interest).await
        }
    };
}

/// A read half's methods, each forwarding to the stream's method of the same name.
macro_rules! read_half_methods {
    ($addr:ty, $self:ident => $stream:expr) => {
        $crate::net::split::half_methods!($addr, $self => $stream);

        /// Waits until the stream is readable.
        pub async fn readable(&$self) -> std::io::Result<()> {
            $stream.readable().await
        }

        /// Reads what is available now; `WouldBlock` if nothing is.
        pub fn try_read(&$self, buf: &mut [u8]) -> std::io::Result<usize> {
            $stream.try_read(buf)
        }

        /// [`try_read`](Self::try_read) into several buffers.
        pub fn try_read_vectored(&$self, bufs: &mut [std::io::IoSliceMut<'_>]) -> std::io::Result<usize> {
            $stream.try_read_vectored(bufs)
        }

        /// Reads what is available now into `buf`'s spare capacity (advancing it);
        /// `WouldBlock` if nothing is.
        pub fn try_read_buf<B: bytes::BufMut>(&$self, buf: &mut B) -> std::io::Result<usize> {
            $stream.try_read_buf(buf)
        }
    };
}

/// A write half's methods, each forwarding to the stream's method of the same name.
macro_rules! write_half_methods {
    ($addr:ty, $self:ident => $stream:expr) => {
        $crate::net::split::half_methods!($addr, $self => $stream);

        /// Waits until the stream is writable.
        pub async fn writable(&$self) -> std::io::Result<()> {
            $stream.writable().await
        }

        /// Writes what fits now; `WouldBlock` if nothing does.
        pub fn try_write(&$self, buf: &[u8]) -> std::io::Result<usize> {
            $stream.try_write(buf)
        }

        /// [`try_write`](Self::try_write) from several buffers.
        pub fn try_write_vectored(&$self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            $stream.try_write_vectored(bufs)
        }
    };
}

/// `AsyncWrite` for a write half: writes go to the stream's registration, flushing is a
/// no-op (nothing is buffered), and `poll_shutdown` shuts the write direction, then (if it
/// succeeded) clears the half's `$disarm` flag, when one is named.
macro_rules! write_half_io {
    ($t:ty, $s:ident => $stream:expr $(, $disarm:ident)?) => {
        impl $crate::io::AsyncWrite for $t {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = self.get_mut();
                $stream.io.poll_write(cx, buf)
            }
            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let $s = self.get_mut();
                $stream.io.poll_write_vectored(cx, bufs)
            }
            fn is_write_vectored(&self) -> bool {
                true
            }
            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::task::Poll::Ready(Ok(()))
            }
            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                let $s = self.get_mut();
                let res = $stream.shutdown_std(std::net::Shutdown::Write);
                $(if res.is_ok() {
                    $s.$disarm = false;
                })?
                std::task::Poll::Ready(res)
            }
        }
    };
}

pub(crate) use {half_methods, read_half_methods, stream_halves, write_half_io, write_half_methods};
