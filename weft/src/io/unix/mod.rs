//! Unix-only I/O: [`AsyncFd`], readiness for any file descriptor (tokio's
//! `io::unix::AsyncFd`).

mod async_fd;
mod register;

pub use async_fd::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard, TryIoError};
pub use register::{AsyncFdRegisterError, AsyncFdTryNewError};
