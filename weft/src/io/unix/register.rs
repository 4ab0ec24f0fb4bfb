//! tokio 1.54's fallible `AsyncFd` constructors (`register`, `register_with_interest`,
//! `try_new`, `try_with_interest`), which give the object back when registration fails, and
//! their error type. Kept apart from `async_fd.rs`, which holds the readiness machinery.

use std::error::Error;
use std::fmt;
use std::io;
use std::os::fd::AsRawFd;

use super::AsyncFd;
use crate::io::Interest;

/// Registration of an [`AsyncFd`] failed; holds the object back and the cause.
pub struct AsyncFdRegisterError<T> {
    inner: T,
    cause: io::Error,
}

/// tokio's older name for [`AsyncFdRegisterError`].
pub type AsyncFdTryNewError<T> = AsyncFdRegisterError<T>;

impl<T> AsyncFdRegisterError<T> {
    /// The object that could not be registered, and why.
    pub fn into_parts(self) -> (T, io::Error) {
        (self.inner, self.cause)
    }
}

impl<T> fmt::Display for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.cause, f)
    }
}

impl<T> fmt::Debug for AsyncFdRegisterError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.cause, f)
    }
}

impl<T> Error for AsyncFdRegisterError<T> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        Some(&self.cause)
    }
}

impl<T> From<AsyncFdRegisterError<T>> for io::Error {
    fn from(e: AsyncFdRegisterError<T>) -> io::Error {
        e.cause
    }
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner` for reading and writing; on failure gives it back with the error.
    /// Panics outside a runtime with I/O enabled.
    ///
    /// # Safety
    /// tokio's contract, kept so code written for it stays correct: the fd must stay open, and
    /// must not be closed and reused, for as long as the `AsyncFd` lives. (weft's
    /// implementation does not depend on it for memory safety: it deregisters before `inner`
    /// is dropped.)
    #[track_caller]
    pub unsafe fn register(inner: T) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, Interest::READABLE.add(Interest::WRITABLE))
    }

    /// Like [`register`](AsyncFd::register), reporting only `interest`.
    ///
    /// # Safety
    /// As for [`register`](AsyncFd::register).
    #[track_caller]
    pub unsafe fn register_with_interest(inner: T, interest: Interest) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, interest)
    }

    /// Registers `inner` for reading and writing; on failure gives it back with the error.
    #[track_caller]
    pub fn try_new(inner: T) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        AsyncFd::try_with_interest(inner, Interest::READABLE.add(Interest::WRITABLE))
    }

    /// Like [`try_new`](AsyncFd::try_new), reporting only `interest`.
    #[track_caller]
    pub fn try_with_interest(inner: T, interest: Interest) -> Result<AsyncFd<T>, AsyncFdRegisterError<T>> {
        match AsyncFd::<T>::register_fd(inner.as_raw_fd(), interest) {
            Ok(registration) => Ok(AsyncFd::from_parts(registration, interest, inner)),
            Err(cause) => Err(AsyncFdRegisterError { inner, cause }),
        }
    }
}
