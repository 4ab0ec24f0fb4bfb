//! `forward_async_write!`: the `AsyncWrite` impl of an adapter whose writes all go, unchanged,
//! to one pin-projected field (`BufReader` and `BufStream` pass writes through to their inner
//! stream, `Join` to its writer). Written once so the five forwarding methods cannot drift.

/// `forward_async_write!([generics] Type<…> => field where bounds)` implements `AsyncWrite` for
/// `Type` by forwarding every method to `self.project().field` (`is_write_vectored` to
/// `self.field`).
macro_rules! forward_async_write {
    ([$($gen:tt)*] $ty:ty => $field:ident where $($bounds:tt)*) => {
        impl<$($gen)*> super::AsyncWrite for $ty
        where
            $($bounds)*
        {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.project().$field.poll_write(cx, buf)
            }
            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.project().$field.poll_write_vectored(cx, bufs)
            }
            fn is_write_vectored(&self) -> bool {
                self.$field.is_write_vectored()
            }
            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.project().$field.poll_flush(cx)
            }
            fn poll_shutdown(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.project().$field.poll_shutdown(cx)
            }
        }
    };
}

pub(super) use forward_async_write;
