//! The methods several socket types share, written once: each macro here expands inside a
//! type's `impl` block and works on its `io: PollEvented<…>` field, so every type keeps
//! tokio's inherent methods (no trait to import) and one body and one doc serve them all.
//!
//! - `address_methods!`: `local_addr`, `peer_addr` and `take_error` of a connected socket.
//! - `readiness_methods!`: `ready`, `readable`, `writable`, the two poll-style readiness
//!   checks, `try_io` and `async_io` (every socket).
//! - `byte_stream_try_methods!`: the `try_read*`/`try_write*` family (`TcpStream`,
//!   `UnixStream`).
//! - `datagram_methods!`: sending to and receiving from the connected peer, receiving with
//!   the sender's address, in `async`, `try_*`, `poll_*` and `BufMut` forms (`UdpSocket`,
//!   `UnixDatagram`, which differ only in their address type).
//!
//! - `byte_stream_io_traits!`: tokio's and futures-io's `AsyncRead`/`AsyncWrite` on a byte
//!   stream (`TcpStream`, `UnixStream`).
//! - `debug_and_as_raw_fd!`: `Debug` and `AsRawFd` from the mio socket (every socket on the
//!   driver).
//!
//! Every method is one "readiness, non-blocking syscall, clear readiness on `WouldBlock`" step
//! through the socket's registration (`runtime/io/registration.rs`).

/// The addresses of a connected socket and its pending error (`SO_ERROR`), given its address
/// type.
macro_rules! address_methods {
    ($addr:ty) => {
        /// The address this socket is bound to.
        pub fn local_addr(&self) -> std::io::Result<$addr> {
            self.io.get_ref().local_addr()
        }

        /// The address of the connected peer.
        pub fn peer_addr(&self) -> std::io::Result<$addr> {
            self.io.get_ref().peer_addr()
        }

        /// Takes the socket's pending error (`SO_ERROR`), clearing it.
        pub fn take_error(&self) -> std::io::Result<Option<std::io::Error>> {
            self.io.get_ref().take_error()
        }
    };
}

/// Readiness methods. The poll-style checks take the names the type uses:
/// `poll_read_ready`/`poll_write_ready` on streams, `poll_recv_ready`/`poll_send_ready` on
/// datagram sockets (as in tokio).
macro_rules! readiness_methods {
    ($poll_read_ready:ident, $poll_write_ready:ident) => {
        /// Waits until any of `interest` is ready; returns the readiness found.
        pub async fn ready(&self, interest: $crate::io::Interest) -> std::io::Result<$crate::io::Ready> {
            self.io.registration().ready(interest).await
        }

        /// Waits until the socket is readable.
        pub async fn readable(&self) -> std::io::Result<()> {
            self.ready($crate::io::Interest::READABLE).await.map(drop)
        }

        /// Waits until the socket is writable.
        pub async fn writable(&self) -> std::io::Result<()> {
            self.ready($crate::io::Interest::WRITABLE).await.map(drop)
        }

        /// Ready once the socket is readable; registers `cx`'s waker otherwise.
        pub fn $poll_read_ready(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
            self.io.registration().poll_ready(cx, $crate::runtime::io::scheduled_io::Direction::Read).map_ok(drop)
        }

        /// Ready once the socket is writable; registers `cx`'s waker otherwise.
        pub fn $poll_write_ready(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<std::io::Result<()>> {
            self.io.registration().poll_ready(cx, $crate::runtime::io::scheduled_io::Direction::Write).map_ok(drop)
        }

        /// Runs `f` (a non-blocking call on this socket) if `interest` is ready now
        /// (`WouldBlock` otherwise); clears the readiness when `f` reports `WouldBlock`.
        pub fn try_io<R>(
            &self,
            interest: $crate::io::Interest,
            f: impl FnOnce() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            self.io.registration().try_io(interest, f)
        }

        /// Waits for `interest`, runs `f`, and waits and retries while it reports
        /// `WouldBlock`.
        pub async fn async_io<R>(
            &self,
            interest: $crate::io::Interest,
            f: impl FnMut() -> std::io::Result<R>,
        ) -> std::io::Result<R> {
            self.io.registration().async_io(interest, f).await
        }
    };
}

/// The non-blocking reads and writes of a byte stream.
macro_rules! byte_stream_try_methods {
    () => {
        /// Reads what is available now; `WouldBlock` if nothing is.
        pub fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            use std::io::Read;
            self.io.registration().try_io($crate::io::Interest::READABLE, || self.io.get_ref().read(buf))
        }

        /// [`try_read`](Self::try_read) into several buffers.
        pub fn try_read_vectored(&self, bufs: &mut [std::io::IoSliceMut<'_>]) -> std::io::Result<usize> {
            use std::io::Read;
            self.io.registration().try_io($crate::io::Interest::READABLE, || self.io.get_ref().read_vectored(bufs))
        }

        /// Reads what is available now into `buf`'s spare capacity (advancing it);
        /// `WouldBlock` if nothing is.
        pub fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            self.io
                .registration()
                .try_io($crate::io::Interest::READABLE, || $crate::net::read_into_buf(self.io.get_ref(), buf))
        }

        /// Writes what fits now; `WouldBlock` if nothing does.
        pub fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
            use std::io::Write;
            self.io.registration().try_io($crate::io::Interest::WRITABLE, || self.io.get_ref().write(buf))
        }

        /// [`try_write`](Self::try_write) from several buffers.
        pub fn try_write_vectored(&self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            use std::io::Write;
            self.io.registration().try_io($crate::io::Interest::WRITABLE, || self.io.get_ref().write_vectored(bufs))
        }
    };
}

/// A datagram socket's sends and receives, given its address type. `send_to` is not here:
/// the two types name their targets differently (`ToSocketAddrs` vs a path).
macro_rules! datagram_methods {
    ($addr:ty) => {
        /// Sends one datagram to the connected peer.
        pub async fn send(&self, buf: &[u8]) -> std::io::Result<usize> {
            self.io.registration().async_io($crate::io::Interest::WRITABLE, || self.io.get_ref().send(buf)).await
        }

        /// Receives one datagram from the connected peer into `buf` (a longer datagram is
        /// truncated).
        pub async fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.io.registration().async_io($crate::io::Interest::READABLE, || self.io.get_ref().recv(buf)).await
        }

        /// Receives one datagram into `buf`; returns its length and sender.
        pub async fn recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
            self.io.registration().async_io($crate::io::Interest::READABLE, || self.io.get_ref().recv_from(buf)).await
        }

        /// `send` if the socket can send now; `WouldBlock` otherwise.
        pub fn try_send(&self, buf: &[u8]) -> std::io::Result<usize> {
            self.io.registration().try_io($crate::io::Interest::WRITABLE, || self.io.get_ref().send(buf))
        }

        /// `recv` if a datagram is queued now; `WouldBlock` otherwise.
        pub fn try_recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.io.registration().try_io($crate::io::Interest::READABLE, || self.io.get_ref().recv(buf))
        }

        /// `recv_from` if a datagram is queued now; `WouldBlock` otherwise.
        pub fn try_recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $addr)> {
            self.io.registration().try_io($crate::io::Interest::READABLE, || self.io.get_ref().recv_from(buf))
        }

        /// Sends one datagram to the connected peer.
        pub fn poll_send(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            let write = $crate::runtime::io::scheduled_io::Direction::Write;
            self.io.registration().poll_io(cx, write, || self.io.get_ref().send(buf))
        }

        /// Receives one datagram from the connected peer into `buf`.
        pub fn poll_recv(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut $crate::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let read = $crate::runtime::io::scheduled_io::Direction::Read;
            let io = self.io.get_ref();
            let n = std::task::ready!(self.io.registration().poll_io(cx, read, || io.recv(buf.initialize_unfilled())))?;
            buf.advance(n);
            std::task::Poll::Ready(Ok(()))
        }

        /// Receives one datagram into `buf`; returns its sender.
        pub fn poll_recv_from(
            &self,
            cx: &mut std::task::Context<'_>,
            buf: &mut $crate::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<$addr>> {
            let read = $crate::runtime::io::scheduled_io::Direction::Read;
            let io = self.io.get_ref();
            let (n, addr) = std::task::ready!(self
                .io
                .registration()
                .poll_io(cx, read, || io.recv_from(buf.initialize_unfilled())))?;
            buf.advance(n);
            std::task::Poll::Ready(Ok(addr))
        }

        /// Receives one datagram from the connected peer into `buf`'s spare capacity.
        pub async fn recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            let io = self.io.get_ref();
            let f = || $crate::net::fill_spare_len(buf, |dst| io.recv(dst));
            self.io.registration().async_io($crate::io::Interest::READABLE, f).await
        }

        /// Receives one datagram into `buf`'s spare capacity; returns its length and sender.
        pub async fn recv_buf_from<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<(usize, $addr)> {
            let io = self.io.get_ref();
            let f = || $crate::net::fill_spare(buf, |dst| io.recv_from(dst));
            self.io.registration().async_io($crate::io::Interest::READABLE, f).await
        }

        /// `recv_buf` if a datagram is queued now; `WouldBlock` otherwise.
        pub fn try_recv_buf<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<usize> {
            let io = self.io.get_ref();
            let f = || $crate::net::fill_spare_len(buf, |dst| io.recv(dst));
            self.io.registration().try_io($crate::io::Interest::READABLE, f)
        }

        /// `recv_buf_from` if a datagram is queued now; `WouldBlock` otherwise.
        pub fn try_recv_buf_from<B: bytes::BufMut>(&self, buf: &mut B) -> std::io::Result<(usize, $addr)> {
            let io = self.io.get_ref();
            let f = || $crate::net::fill_spare(buf, |dst| io.recv_from(dst));
            self.io.registration().try_io($crate::io::Interest::READABLE, f)
        }
    };
}

/// Tokio's and futures-io's `AsyncRead`/`AsyncWrite` for a byte stream type with an `io`
/// field and a `shutdown_std(Shutdown)` method. Flushing is a no-op (nothing is buffered);
/// shutting down (closing, for futures-io) shuts the write direction (sends FIN on TCP) and
/// reads still work (half-close).
macro_rules! byte_stream_io_traits {
    ($t:ty) => {
        impl $crate::io::AsyncRead for $t {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut $crate::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.io.poll_read(cx, buf)
            }
        }

        impl $crate::io::AsyncWrite for $t {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.io.poll_write(cx, buf)
            }
            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.io.poll_write_vectored(cx, bufs)
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
                std::task::Poll::Ready(self.shutdown_std(std::net::Shutdown::Write))
            }
        }

        impl futures_io::AsyncRead for $t {
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                let mut rb = $crate::io::ReadBuf::new(buf);
                std::task::ready!(self.io.poll_read(cx, &mut rb))?;
                std::task::Poll::Ready(Ok(rb.filled().len()))
            }
        }

        /// Forwards to the tokio-style `AsyncWrite` above (`poll_close` to `poll_shutdown`).
        impl futures_io::AsyncWrite for $t {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                <Self as $crate::io::AsyncWrite>::poll_write(self, cx, buf)
            }
            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                <Self as $crate::io::AsyncWrite>::poll_write_vectored(self, cx, bufs)
            }
            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                <Self as $crate::io::AsyncWrite>::poll_flush(self, cx)
            }
            fn poll_close(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                <Self as $crate::io::AsyncWrite>::poll_shutdown(self, cx)
            }
        }
    };
}

/// `Debug` and `AsRawFd` of socket types, both from the mio socket in their `io` field.
macro_rules! debug_and_as_raw_fd {
    ($($t:ty),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.io.get_ref().fmt(f)
            }
        }

        impl std::os::fd::AsRawFd for $t {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                self.io.get_ref().as_raw_fd()
            }
        }
    )*};
}

pub(crate) use {
    address_methods, byte_stream_io_traits, byte_stream_try_methods, datagram_methods, debug_and_as_raw_fd,
    readiness_methods,
};
