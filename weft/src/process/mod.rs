//! Child processes, tokio's `process` API: `Command` builds, `Child` runs, and its pipes are
//! async I/O.
//!
//! # Shape
//! `Command` wraps `std::process::Command` (so every std option is there, and spawning is
//! std's well-tested fork/exec); `spawn` is synchronous, as in tokio. The parent's pipe ends
//! are made non-blocking and registered with the I/O driver (`pipes.rs`); waiting uses a
//! pidfd on the I/O driver, or a blocking-pool `waitid(WNOWAIT)` where pidfds are missing
//! (`child.rs`). A spawn error (program not found, permission) is the `io::Error` std
//! reports, never a panic.
//!
//! # Invariants
//! - A child's exit status is collected exactly once, by `try_wait` (std's `waitpid` on
//!   that pid only — never `waitpid(-1)`, which would steal other code's children).
//! - No zombie outlives its `Child`: a child dropped while running is killed first if
//!   `kill_on_drop(true)`, and is reaped by a detached "weft-reaper" thread when it exits.
//!
//! # Rejected alternative
//! A SIGCHLD handler plus an orphan queue (tokio): it makes weft own a process-wide signal
//! disposition that embedding programs may rely on, and still needs a fallback poll. pidfds
//! make exits ordinary readiness events; the reaper thread costs one sleeping thread per
//! orphan that is still running, which only programs that drop running children pay.

mod child;
mod pipes;

pub use child::Child;
pub use pipes::{ChildStderr, ChildStdin, ChildStdout};

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Output, Stdio};

/// A process builder (tokio's `Command`): the same methods as `std::process::Command`, with
/// async `status` and `output`.
#[derive(Debug)]
pub struct Command {
    std: std::process::Command,
    kill_on_drop: bool,
}

impl Command {
    /// A command to run `program` (looked up in `PATH` if it has no `/`).
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        Command { std: std::process::Command::new(program), kill_on_drop: false }
    }
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg(arg);
        self
    }
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }
    pub fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(&mut self, key: K, val: V) -> &mut Command {
        self.std.env(key, val);
        self
    }
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Command {
        self.std.env_remove(key);
        self
    }
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Command {
        self.std.current_dir(dir);
        self
    }
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdin(cfg);
        self
    }
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdout(cfg);
        self
    }
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stderr(cfg);
        self
    }
    /// Kill the child (SIGKILL) if its `Child` is dropped before it exits.
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }
    #[cfg(unix)]
    pub fn uid(&mut self, id: u32) -> &mut Command {
        std::os::unix::process::CommandExt::uid(&mut self.std, id);
        self
    }
    #[cfg(unix)]
    pub fn gid(&mut self, id: u32) -> &mut Command {
        std::os::unix::process::CommandExt::gid(&mut self.std, id);
        self
    }
    #[cfg(unix)]
    pub fn arg0<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        std::os::unix::process::CommandExt::arg0(&mut self.std, arg);
        self
    }
    #[cfg(unix)]
    pub fn process_group(&mut self, pgroup: i32) -> &mut Command {
        std::os::unix::process::CommandExt::process_group(&mut self.std, pgroup);
        self
    }
    /// Runs `f` in the child after `fork` and before `exec`.
    ///
    /// # Safety
    /// `f` runs in a forked copy of a multi-threaded process: it may only make
    /// async-signal-safe calls (no allocation, no locks), exactly as for std's `pre_exec`.
    #[cfg(unix)]
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Command
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: the caller upholds std's `pre_exec` contract, restated in `# Safety` above.
        unsafe { std::os::unix::process::CommandExt::pre_exec(&mut self.std, f) };
        self
    }
    pub fn as_std(&self) -> &std::process::Command {
        &self.std
    }
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        &mut self.std
    }
    pub fn into_std(self) -> std::process::Command {
        self.std
    }

    /// Starts the child. Must be called inside a runtime with I/O enabled (its pipes and
    /// pidfd are registered with the driver).
    pub fn spawn(&mut self) -> io::Result<Child> {
        let child = self.std.spawn()?;
        Child::new(child, self.kill_on_drop)
    }

    /// Runs the child to completion (stdio inherited unless configured) and returns its
    /// exit status.
    ///
    /// The child is spawned when this is called, not when the future is first polled, and
    /// the future does not borrow the `Command` (as tokio's): `Command::new(..).status()` can
    /// be bound to a variable and awaited later.
    pub fn status(&mut self) -> impl std::future::Future<Output = io::Result<ExitStatus>> + Send + 'static {
        let child = self.spawn();
        async move {
            let mut child = child?;
            drop(child.stdin.take());
            child.wait().await
        }
    }

    /// Runs the child with stdout and stderr piped (stdin null unless configured) and
    /// collects everything it writes.
    ///
    /// Spawned when called; the future does not borrow the `Command` (see `status`).
    pub fn output(&mut self) -> impl std::future::Future<Output = io::Result<Output>> + Send + 'static {
        self.std.stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = self.spawn();
        async move { child?.wait_with_output().await }
    }
}

impl From<std::process::Command> for Command {
    fn from(std: std::process::Command) -> Command {
        Command { std, kill_on_drop: false }
    }
}
