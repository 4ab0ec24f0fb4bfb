//! `Child`: a spawned process, its pipes, and waiting for it without blocking a worker.
//!
//! Waiting: on Linux ≥ 5.3 a pidfd (`pidfd_open`) becomes readable when the child exits; it
//! is registered with the I/O driver through `AsyncFd`, and `try_wait` (a `waitpid` with
//! `WNOHANG`) collects the status; a child spawned in one runtime can be awaited in another
//! (its pidfd is re-registered once the first runtime's driver is gone). Where `pidfd_open`
//! fails (older kernels, seccomp), one blocking-pool closure waits with
//! `waitid(WEXITED | WNOWAIT)` — it observes the exit without reaping, so the status is still
//! collected by `try_wait` and nothing else can steal it.
//!
//! Reaping: a `Child` dropped before its exit was collected is handed to a detached
//! "weft-reaper" thread that `wait`s for it, so no zombie is left (a thread per such child
//! while it runs; tokio uses a SIGCHLD-driven orphan queue instead, which needs a process-
//! wide SIGCHLD handler this design avoids).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{ExitStatus, Output};

use super::{ChildStderr, ChildStdin, ChildStdout};
use crate::io::unix::AsyncFd;
use crate::io::AsyncReadExt;

/// A spawned child process (tokio's `Child`).
#[derive(Debug)]
pub struct Child {
    /// The parent's end of the child's stdin, if it was piped.
    pub stdin: Option<ChildStdin>,
    /// The parent's end of the child's stdout, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The parent's end of the child's stderr, if it was piped.
    pub stderr: Option<ChildStderr>,
    std: Option<std::process::Child>,
    status: Option<ExitStatus>,
    pidfd: Option<AsyncFd<OwnedFd>>,
    kill_on_drop: bool,
}

fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    // SAFETY: `pidfd_open(pid, flags)` takes two integers and returns a new fd or -1; it
    // touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0 as libc::c_uint) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the syscall succeeded, so `fd` is a new open descriptor owned by nobody else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

impl Child {
    pub(crate) fn new(mut std: std::process::Child, kill_on_drop: bool) -> io::Result<Child> {
        let stdin = std.stdin.take().map(ChildStdin::from_std).transpose()?;
        let stdout = std.stdout.take().map(ChildStdout::from_std).transpose()?;
        let stderr = std.stderr.take().map(ChildStderr::from_std).transpose()?;
        let pidfd = match pidfd_open(std.id()) {
            Some(fd) => Some(AsyncFd::with_interest(fd, crate::io::Interest::READABLE)?),
            None => None,
        };
        Ok(Child { stdin, stdout, stderr, std: Some(std), status: None, pidfd, kill_on_drop })
    }

    fn std(&mut self) -> &mut std::process::Child {
        self.std.as_mut().expect("weft::process::Child used after being consumed")
    }

    /// The OS process id, `None` once the exit status has been collected.
    pub fn id(&self) -> Option<u32> {
        if self.status.is_some() {
            return None;
        }
        self.std.as_ref().map(|c| c.id())
    }

    /// The exit status if the child has exited (collecting it), `None` if it still runs.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let status = self.std().try_wait()?;
        if status.is_some() {
            self.status = status;
            self.pidfd = None;
        }
        Ok(status)
    }

    /// Waits for the child to exit. Closes the child's stdin first (as tokio does), so a
    /// child reading its input to the end can finish. Cancel-safe.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            match &self.pidfd {
                Some(pidfd) => match pidfd.readable().await {
                    Ok(mut guard) => {
                        // Readable means exited; if the status is not there yet, clear and wait.
                        if self.std.as_mut().map(|c| c.try_wait()).transpose()?.flatten().is_none() {
                            guard.clear_ready();
                        }
                    }
                    // Registered with a runtime that has shut down since (spawned in one
                    // runtime, awaited in another, as tokio allows): register with this one.
                    Err(e) if crate::runtime::is_rt_shutdown_err(&e) => {
                        let fd = self.pidfd.take().expect("matched Some").into_inner();
                        self.pidfd = Some(AsyncFd::new(fd)?);
                    }
                    Err(e) => return Err(e),
                },
                None => {
                    let pid = self.std().id() as libc::id_t;
                    crate::fs::asyncify(move || {
                        // SAFETY: a zeroed `siginfo_t` is a valid output buffer for `waitid`.
                        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                        loop {
                            // SAFETY: `info` is a valid, writable siginfo_t; WNOWAIT leaves
                            // the child waitable, so `try_wait` still collects it.
                            let r = unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
                            if r == 0 {
                                return Ok(());
                            }
                            let e = io::Error::last_os_error();
                            if e.kind() != io::ErrorKind::Interrupted {
                                return Err(e);
                            }
                        }
                    })
                    .await?;
                }
            }
        }
    }

    /// Sends SIGKILL without waiting (an error if the child was already collected).
    pub fn start_kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            // Already reaped: nothing to kill, and (as in tokio 1.54) that is not an error.
            return Ok(());
        }
        self.std().kill()
    }

    /// Sends SIGKILL and waits for the child to exit.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await.map(drop)
    }

    /// Waits for the child and collects all of its piped stdout and stderr (read
    /// concurrently, so a child filling one pipe cannot deadlock against the other).
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        async fn read_all<R: crate::io::AsyncRead + Unpin>(r: Option<R>) -> io::Result<Vec<u8>> {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                r.read_to_end(&mut buf).await?;
            }
            Ok(buf)
        }
        drop(self.stdin.take());
        let (out, err) = (self.stdout.take(), self.stderr.take());
        let (stdout, stderr) = futures_join(read_all(out), read_all(err)).await;
        let status = self.wait().await?;
        Ok(Output { status, stdout: stdout?, stderr: stderr? })
    }
}

/// Polls two futures together (no macro dependency inside the crate).
async fn futures_join<A: std::future::Future, B: std::future::Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none() {
            if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    (ra.expect("ready"), rb.expect("ready"))
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        let Some(mut std) = self.std.take() else { return };
        if self.kill_on_drop {
            let _ = std.kill();
        }
        if let Ok(Some(_)) = std.try_wait() {
            return;
        }
        // Still running: reap it when it exits, so it never lingers as a zombie.
        let spawned = crate::loom::thread::Builder::new().name("weft-reaper".into()).spawn(move || {
            let _ = std.wait();
        });
        drop(spawned);
    }
}
