//! `File`: an open file with tokio's API, reading through a large read-ahead buffer and
//! writing through write-behind (see the `fs` module essay for the shape and its invariants).
//!
//! State lives in `Inner`: at most one read or seek hop in flight (`op`), the read-ahead
//! (`ahead[ahead_pos..]`), a seek recorded by `start_seek` and not yet run, and the
//! write-behind `Writer`. The `poll_*` methods take `&mut self` and reach `Inner` through the
//! async mutex's `get_mut` (no locking); the `&self` methods lock it.

use std::fs::{File as StdFile, Metadata, Permissions};
use std::future::{poll_fn, Future};
use std::io::{self, Seek, SeekFrom};
use std::path::Path;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use super::write_behind::Writer;
use super::{asyncify, background_failed, FileTimes, OpenOptions};
use crate::io::{AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use crate::loom::sync::Arc;
use crate::task::JoinHandle;

/// tokio's default `max_buf_size`: the most one hop reads or the write-behind holds.
const DEFAULT_MAX_BUF_SIZE: usize = 2 * 1024 * 1024;
/// Bytes a read hop fetches when the caller asks for less: the fastest size in `weft-lab
/// fs-bench` (JSONL through `BufReader::lines`; the sweep: docs/notes/performance-figures.md,
/// "File read-ahead"), larger ones are markedly slower. The buffer is reused for every hop of a
/// `File`; at 128 KiB it stays in the CPU cache and its pages stay mapped, while a 2 MiB one
/// streams through memory and page-faults on every new file. Hops are still 16× fewer than
/// tokio's 8 KiB ones, which is where tokio's time goes.
const READ_AHEAD: usize = 128 * 1024;

/// An open file. Reads and writes run on the blocking pool in large chunks; see the module
/// essay of `weft::fs`.
///
/// Deliberate difference from tokio: a read hop fetches at least 128 KiB of read-ahead
/// (bounded by `max_buf_size`) whatever the caller's buffer size, where tokio reads at most
/// the caller's buffer; so a `BufReader<File>` makes one hop per 128 KiB instead of one per
/// 8 KiB. A caller buffer larger than that is filled up to `max_buf_size` (2 MiB) per hop, as
/// in tokio. The logical position is unaffected (seeks, writes and `into_std` account for
/// the read-ahead).
pub struct File {
    std: Arc<StdFile>,
    inner: crate::sync::Mutex<Inner>,
    max_buf_size: usize,
}

enum OpResult {
    Read(io::Result<()>),
    Seek(io::Result<u64>),
}

struct Inner {
    /// The read or seek hop in flight; it carries the read-ahead buffer and brings it back.
    op: Option<JoinHandle<(OpResult, Vec<u8>)>>,
    ahead: Vec<u8>,
    ahead_pos: usize,
    /// Recorded by `start_seek`, run by `poll_complete` once writes have drained.
    seek: Option<SeekFrom>,
    /// The result of the last seek (what `poll_complete` reports when idle, as in tokio).
    pos: u64,
    writer: Writer,
}

impl Inner {
    fn unread(&self) -> usize {
        self.ahead.len() - self.ahead_pos
    }

    fn drop_ahead(&mut self) {
        self.ahead.clear();
        self.ahead_pos = 0;
    }

    /// Completes the hop in flight, if any, putting its buffer back as read-ahead.
    fn poll_op(&mut self, cx: &mut Context<'_>) -> Poll<Option<io::Result<OpResult>>> {
        let Some(handle) = &mut self.op else { return Poll::Ready(None) };
        let res = ready!(Pin::new(handle).poll(cx));
        self.op = None;
        Poll::Ready(Some(match res {
            Ok((res, buf)) => {
                self.ahead = buf;
                self.ahead_pos = 0;
                if let OpResult::Seek(Ok(p)) = &res {
                    self.pos = *p;
                }
                Ok(res)
            }
            Err(_) => Err(background_failed()),
        }))
    }

    /// Drives the file to rest: the hop in flight done, writes drained, a recorded seek run.
    /// Read-ahead stays. A read error in flight is dropped (the bytes were never handed out).
    fn poll_idle(&mut self, cx: &mut Context<'_>, std: &Arc<StdFile>) -> Poll<io::Result<()>> {
        loop {
            match ready!(self.poll_op(cx)) {
                Some(Ok(OpResult::Seek(Err(e)))) | Some(Err(e)) => return Poll::Ready(Err(e)),
                Some(Ok(_)) => continue,
                None => {}
            }
            if !self.writer.is_settled() {
                ready!(self.writer.poll_flush(cx))?;
            }
            match self.seek.take() {
                Some(pos) => self.launch_seek(std, pos),
                None => return Poll::Ready(Ok(())),
            }
        }
    }

    /// Starts a seek hop; a relative seek first gives back the unread read-ahead.
    fn launch_seek(&mut self, std: &Arc<StdFile>, pos: SeekFrom) {
        let pos = match pos {
            SeekFrom::Current(n) => SeekFrom::Current(n.saturating_sub(self.unread() as i64)),
            other => other,
        };
        self.drop_ahead();
        let (std, buf) = (std.clone(), std::mem::take(&mut self.ahead));
        self.op = Some(crate::task::spawn_blocking(move || (OpResult::Seek((&*std).seek(pos)), buf)));
    }

    fn launch_read(&mut self, std: &Arc<StdFile>, chunk: usize) {
        let mut buf = std::mem::take(&mut self.ahead);
        buf.clear();
        self.ahead_pos = 0;
        buf.reserve(chunk);
        let std = std.clone();
        self.op = Some(crate::task::spawn_blocking(move || {
            let res = read_chunk(&std, &mut buf, chunk);
            (OpResult::Read(res), buf)
        }));
    }
}

/// One `read(2)` of up to `chunk` bytes into `buf`'s spare capacity (`buf` is empty and has
/// at least `chunk` spare). One call, not a loop: on a pipe or terminal opened as a file a
/// second read would block for more input than the caller asked for.
fn read_chunk(std: &StdFile, buf: &mut Vec<u8>, chunk: usize) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let spare = buf.spare_capacity_mut();
    let len = chunk.min(spare.len());
    loop {
        // SAFETY: the fd belongs to `std`, which the caller keeps open for the call; the
        // pointer and `len` describe `buf`'s spare capacity, which `read` may write (it never
        // reads the buffer), so uninitialized memory is never read.
        let n = unsafe { libc::read(std.as_raw_fd(), spare.as_mut_ptr().cast(), len) };
        if n >= 0 {
            // SAFETY: `read` initialized exactly the first `n <= len <= capacity` spare bytes.
            unsafe { buf.set_len(n as usize) };
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

impl File {
    /// Opens `path` read-only.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().read(true).open(path).await
    }

    /// Opens `path` write-only, creating it or truncating it.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().write(true).create(true).truncate(true).open(path).await
    }

    /// Creates `path` read-write, failing with `AlreadyExists` if it exists.
    pub async fn create_new<P: AsRef<Path>>(path: P) -> io::Result<File> {
        OpenOptions::new().read(true).write(true).create_new(true).open(path).await
    }

    /// A fresh [`OpenOptions`].
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Wraps an open `std::fs::File`; its current offset is the starting position.
    pub fn from_std(std: StdFile) -> File {
        let inner = Inner { op: None, ahead: Vec::new(), ahead_pos: 0, seek: None, pos: 0, writer: Writer::new() };
        File { std: Arc::new(std), inner: crate::sync::Mutex::new(inner), max_buf_size: DEFAULT_MAX_BUF_SIZE }
    }

    /// Locks the state and brings it to rest; with `rewind`, also gives back unread
    /// read-ahead so the OS offset is the logical position.
    async fn settle(&self, rewind: bool) -> io::Result<crate::sync::MutexGuard<'_, Inner>> {
        let mut inner = self.inner.lock().await;
        poll_fn(|cx| inner.poll_idle(cx, &self.std)).await?;
        if rewind && inner.unread() > 0 {
            let (std, back) = (self.std.clone(), inner.unread() as i64);
            inner.drop_ahead();
            asyncify(move || (&*std).seek(SeekFrom::Current(-back))).await?;
        }
        Ok(inner)
    }

    /// Waits for written data to drain, then `fsync`s data and metadata.
    pub async fn sync_all(&self) -> io::Result<()> {
        let _inner = self.settle(false).await?;
        let std = self.std.clone();
        asyncify(move || std.sync_all()).await
    }

    /// Waits for written data to drain, then `fdatasync`s.
    pub async fn sync_data(&self) -> io::Result<()> {
        let _inner = self.settle(false).await?;
        let std = self.std.clone();
        asyncify(move || std.sync_data()).await
    }

    /// Truncates or extends the file to `size` bytes; the position does not move (read-ahead
    /// is dropped, since it may describe bytes that no longer exist).
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        let _inner = self.settle(true).await?;
        let std = self.std.clone();
        asyncify(move || std.set_len(size)).await
    }

    /// Sets the access and/or modification time (after pending writes drained, so a
    /// write-behind cannot land after it and overwrite the times).
    pub async fn set_times(&self, times: FileTimes) -> io::Result<()> {
        let _inner = self.settle(false).await?;
        let std = self.std.clone();
        let times = times.to_std();
        asyncify(move || std.set_times(times)).await
    }

    /// `set_times` with only the modification time.
    pub async fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        self.set_times(FileTimes::new().set_modified(time)).await
    }

    /// The file's metadata (after pending writes drained, so the length includes them).
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let _inner = self.settle(false).await?;
        let std = self.std.clone();
        asyncify(move || std.metadata()).await
    }

    /// A new `File` for the same open file description (shared offset, at this file's
    /// logical position).
    pub async fn try_clone(&self) -> io::Result<File> {
        let _inner = self.settle(true).await?;
        let std = self.std.clone();
        let std = asyncify(move || std.try_clone()).await?;
        let mut clone = File::from_std(std);
        clone.max_buf_size = self.max_buf_size;
        Ok(clone)
    }

    /// Waits for in-flight work, puts the OS offset at the logical position and returns the
    /// `std::fs::File`. Errors from pending writes are dropped, as in tokio.
    pub async fn into_std(self) -> StdFile {
        let _ = self.settle(true).await;
        let File { std, .. } = self;
        Arc::try_unwrap(std).expect("weft::fs::File: no hop holds the file once settled")
    }

    /// The `std::fs::File` if no operation is in flight (else `Err(self)`); unread
    /// read-ahead is given back with an `lseek`.
    #[allow(clippy::result_large_err)] // tokio's signature: the `File` comes back on failure
    pub fn try_into_std(mut self) -> Result<StdFile, File> {
        let inner = self.inner.get_mut();
        if inner.op.is_some() || inner.seek.is_some() || !inner.writer.is_settled() {
            return Err(self);
        }
        if inner.unread() > 0 {
            if (&*self.std).seek(SeekFrom::Current(-(inner.unread() as i64))).is_err() {
                return Err(self);
            }
            inner.drop_ahead();
        }
        let File { std, inner, max_buf_size } = self;
        Arc::try_unwrap(std).map_err(|std| File { std, inner, max_buf_size })
    }

    /// Changes the file's permissions.
    pub async fn set_permissions(&self, perm: Permissions) -> io::Result<()> {
        let std = self.std.clone();
        asyncify(move || std.set_permissions(perm)).await
    }

    /// Sets the largest buffer one hop uses: the most one read hop fetches and the most the
    /// write-behind holds (default 2 MiB, tokio's default too).
    /// Panics on 0 (tokio's message).
    #[track_caller]
    pub fn set_max_buf_size(&mut self, max_buf_size: usize) {
        assert!(max_buf_size > 0, "`max_buf_size` must be greater than 0");
        self.max_buf_size = max_buf_size;
    }

    /// The current `max_buf_size`.
    pub fn max_buf_size(&self) -> usize {
        self.max_buf_size
    }
}

impl AsyncRead for File {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, dst: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let inner = this.inner.get_mut();
        loop {
            let unread = inner.unread();
            if unread > 0 {
                let n = unread.min(dst.remaining());
                dst.put_slice(&inner.ahead[inner.ahead_pos..inner.ahead_pos + n]);
                inner.ahead_pos += n;
                return Poll::Ready(Ok(()));
            }
            match ready!(inner.poll_op(cx)) {
                Some(Ok(OpResult::Read(Ok(())))) if inner.unread() == 0 => return Poll::Ready(Ok(())), // EOF
                Some(Ok(OpResult::Read(Err(e)))) | Some(Err(e)) => return Poll::Ready(Err(e)),
                Some(Ok(_)) => continue,
                None => {}
            }
            if inner.seek.is_some() || !inner.writer.is_settled() {
                ready!(inner.poll_idle(cx, &this.std))?;
                continue;
            }
            if dst.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            let chunk = READ_AHEAD.min(this.max_buf_size).max(dst.remaining().min(this.max_buf_size));
            inner.launch_read(&this.std, chunk);
        }
    }
}

impl AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, pos: SeekFrom) -> io::Result<()> {
        let inner = self.get_mut().inner.get_mut();
        if inner.op.is_some() || inner.seek.is_some() {
            return Err(io::Error::other("other file operation is pending, call poll_complete before start_seek"));
        }
        inner.seek = Some(pos);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let this = self.get_mut();
        let inner = this.inner.get_mut();
        loop {
            match ready!(inner.poll_op(cx)) {
                Some(Ok(OpResult::Seek(res))) => return Poll::Ready(res),
                Some(Err(e)) => return Poll::Ready(Err(e)),
                // A read finished: its bytes stay as read-ahead, a relative seek accounts for them.
                Some(Ok(OpResult::Read(_))) => continue,
                None => {}
            }
            if inner.seek.is_none() {
                return Poll::Ready(Ok(inner.pos));
            }
            if !inner.writer.is_settled() {
                ready!(inner.writer.poll_flush(cx))?;
            }
            let pos = inner.seek.take().expect("checked above");
            inner.launch_seek(&this.std, pos);
        }
    }
}

impl AsyncWrite for File {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let inner = this.inner.get_mut();
        if inner.op.is_some() || inner.seek.is_some() {
            ready!(inner.poll_idle(cx, &this.std))?;
        }
        let mut rewind = inner.unread() as u64;
        let res = ready!(inner.writer.poll_write(cx, &this.std, data, this.max_buf_size, &mut rewind));
        if rewind == 0 {
            inner.drop_ahead();
        }
        Poll::Ready(res)
    }

    /// Gathers the slices (up to `max_buf_size` bytes) into one write-behind hop, so a
    /// vectored write moves as much as a plain one would.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let limit = self.max_buf_size;
        let mut gathered = Vec::new();
        for b in bufs {
            let take = b.len().min(limit - gathered.len());
            gathered.extend_from_slice(&b[..take]);
            if gathered.len() == limit {
                break;
            }
        }
        self.poll_write(cx, &gathered)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().inner.get_mut().writer.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

impl From<StdFile> for File {
    fn from(std: StdFile) -> File {
        File::from_std(std)
    }
}

/// tokio's text exactly (`tokio::fs::File { std: File { fd: 3, … } }`), so logs and snapshot
/// tests written against tokio read the same.
impl std::fmt::Debug for File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("tokio::fs::File").field("std", &*self.std).finish()
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for File {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.std.as_raw_fd()
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for File {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.std.as_fd()
    }
}

#[cfg(unix)]
impl From<std::os::fd::OwnedFd> for File {
    /// Takes ownership of an open file descriptor, as `std::fs::File::from` does.
    fn from(fd: std::os::fd::OwnedFd) -> File {
        File::from_std(StdFile::from(fd))
    }
}

#[cfg(unix)]
impl std::os::fd::FromRawFd for File {
    /// # Safety
    /// `fd` must be an open file descriptor that nothing else owns or closes.
    unsafe fn from_raw_fd(fd: std::os::fd::RawFd) -> File {
        // SAFETY: the caller hands us sole ownership of the open descriptor `fd`.
        File::from_std(unsafe { StdFile::from_raw_fd(fd) })
    }
}
