//! `UCred`: the credentials of the process at the other end of a Unix-domain stream
//! (`UnixStream::peer_cred`), read with `getsockopt(SO_PEERCRED)`.
//!
//! Linux/Android only (the credential-passing option and its struct differ per OS; weft's
//! I/O driver is Linux-first).

use std::io;
use std::os::fd::AsRawFd;

/// Credentials of a Unix-domain socket's peer, as the kernel recorded them at `connect` (or
/// `socketpair`) time.
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
pub struct UCred {
    pid: Option<super::pid_t>,
    uid: super::uid_t,
    gid: super::gid_t,
}

impl UCred {
    /// The peer's effective user id.
    pub fn uid(&self) -> super::uid_t {
        self.uid
    }

    /// The peer's effective group id.
    pub fn gid(&self) -> super::gid_t {
        self.gid
    }

    /// The peer's process id (`None` where the kernel does not report one).
    pub fn pid(&self) -> Option<super::pid_t> {
        self.pid
    }
}

/// `SO_PEERCRED` of the socket behind `fd`.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn peer_cred(fd: &impl AsRawFd) -> io::Result<UCred> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `fd` is a live socket owned by the caller for the duration of the call; `cred`
    // and `len` are valid for writes of `size_of::<ucred>()` bytes, which `len` states.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // `libc`'s `pid_t`/`uid_t`/`gid_t` are the aliases' integer types on Linux and Android:
    // no conversion happens.
    Ok(UCred { pid: (cred.pid != 0).then_some(cred.pid), uid: cred.uid, gid: cred.gid })
}
