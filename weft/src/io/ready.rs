//! `Interest` (what a task wants to wait for) and `Ready` (what the driver reported): small
//! bit sets over the readiness bits of `runtime::io::scheduled_io`.

use std::fmt;
use std::ops;

use crate::runtime::io::scheduled_io::{ERROR, PRIORITY, READABLE, READ_CLOSED, WRITABLE, WRITE_CLOSED};

/// Readiness interest for `ready()` / `try_io()`: any non-empty set of readable, writable,
/// error and (Linux, Android) priority.
///
/// `ERROR` alone waits for errors only (every other interest also ends on an error, as in
/// tokio). `PRIORITY` takes effect when a resource is registered with it
/// (`AsyncFd::with_interest`): only then does the driver ask the kernel for `EPOLLPRI`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Interest(usize);

impl Interest {
    pub const READABLE: Interest = Interest(READABLE);
    pub const WRITABLE: Interest = Interest(WRITABLE);
    /// Errors only.
    pub const ERROR: Interest = Interest(ERROR);
    /// Urgent data (`EPOLLPRI`): TCP out-of-band data, or a change of a sysfs/cgroup file.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const PRIORITY: Interest = Interest(PRIORITY);

    pub const fn is_readable(self) -> bool {
        self.0 & READABLE != 0
    }
    pub const fn is_writable(self) -> bool {
        self.0 & WRITABLE != 0
    }
    pub const fn is_error(self) -> bool {
        self.0 & ERROR != 0
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const fn is_priority(self) -> bool {
        self.0 & PRIORITY != 0
    }
    /// Both interests.
    #[must_use]
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// This interest without `other`'s; `None` if nothing is left.
    #[must_use]
    pub fn remove(self, other: Interest) -> Option<Interest> {
        let left = self.0 & !other.0;
        (left != 0).then_some(Interest(left))
    }

    /// The readiness bits that satisfy this interest (including closed and error bits).
    pub(crate) fn mask(self) -> usize {
        let mut m = ERROR;
        if self.is_readable() {
            m |= READABLE | READ_CLOSED;
        }
        if self.is_writable() {
            m |= WRITABLE | WRITE_CLOSED;
        }
        if self.0 & PRIORITY != 0 {
            m |= PRIORITY | READ_CLOSED;
        }
        m
    }

    /// Whether a registration must ask the kernel for urgent-data events.
    pub(crate) fn wants_priority(self) -> bool {
        self.0 & PRIORITY != 0
    }
}

impl ops::BitOr for Interest {
    type Output = Interest;
    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl ops::BitOrAssign for Interest {
    fn bitor_assign(&mut self, other: Interest) {
        *self = self.add(other);
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [(READABLE, "READABLE"), (WRITABLE, "WRITABLE"), (ERROR, "ERROR"), (PRIORITY, "PRIORITY")];
        let mut first = true;
        for (bit, name) in names {
            if self.0 & bit != 0 {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// Readiness reported by the driver.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Ready(usize);

impl Ready {
    pub const EMPTY: Ready = Ready(0);
    pub const READABLE: Ready = Ready(READABLE);
    pub const WRITABLE: Ready = Ready(WRITABLE);
    pub const READ_CLOSED: Ready = Ready(READ_CLOSED);
    pub const WRITE_CLOSED: Ready = Ready(WRITE_CLOSED);
    pub const ERROR: Ready = Ready(ERROR);
    /// Urgent data (`EPOLLPRI`), for registrations with `Interest::PRIORITY`.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const PRIORITY: Ready = Ready(PRIORITY);
    /// Every readiness bit.
    pub const ALL: Ready = Ready(READABLE | WRITABLE | READ_CLOSED | WRITE_CLOSED | ERROR | PRIORITY);

    pub(crate) fn from_usize(bits: usize) -> Ready {
        Ready(bits)
    }
    pub(crate) fn as_usize(self) -> usize {
        self.0
    }
    /// Readiness from an epoll event's flags (the same reading of them as mio's `Event`).
    pub(crate) fn from_epoll(flags: u32) -> Ready {
        let has = |bit: libc::c_int| flags & bit as u32 != 0;
        let mut r = 0;
        if has(libc::EPOLLIN) || has(libc::EPOLLPRI) {
            r |= READABLE;
        }
        if has(libc::EPOLLPRI) {
            r |= PRIORITY;
        }
        if has(libc::EPOLLOUT) {
            r |= WRITABLE;
        }
        // Both halves closed, or a FIN / shutdown(SHUT_RD) seen.
        if has(libc::EPOLLHUP) || (has(libc::EPOLLIN) && has(libc::EPOLLRDHUP)) {
            r |= READ_CLOSED;
        }
        // Both halves closed, or the read end of a pipe gone (EPOLLERR alone or with OUT).
        if has(libc::EPOLLHUP) || (has(libc::EPOLLOUT) && has(libc::EPOLLERR)) || flags == libc::EPOLLERR as u32 {
            r |= WRITE_CLOSED;
        }
        if has(libc::EPOLLERR) {
            r |= ERROR;
        }
        Ready(r)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn is_readable(self) -> bool {
        self.0 & (READABLE | READ_CLOSED) != 0
    }
    pub fn is_writable(self) -> bool {
        self.0 & (WRITABLE | WRITE_CLOSED) != 0
    }
    pub fn is_read_closed(self) -> bool {
        self.0 & READ_CLOSED != 0
    }
    pub fn is_write_closed(self) -> bool {
        self.0 & WRITE_CLOSED != 0
    }
    pub fn is_error(self) -> bool {
        self.0 & ERROR != 0
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn is_priority(self) -> bool {
        self.0 & PRIORITY != 0
    }
}

impl ops::BitOr for Ready {
    type Output = Ready;
    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

impl ops::BitOrAssign for Ready {
    fn bitor_assign(&mut self, other: Ready) {
        self.0 |= other.0;
    }
}

impl ops::BitAnd for Ready {
    type Output = Ready;
    fn bitand(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }
}

/// The bits of `self` that are not in `other`.
impl ops::Sub for Ready {
    type Output = Ready;
    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ready")
            .field("readable", &(self.0 & READABLE != 0))
            .field("writable", &(self.0 & WRITABLE != 0))
            .field("read_closed", &self.is_read_closed())
            .field("write_closed", &self.is_write_closed())
            .field("error", &self.is_error())
            .field("priority", &(self.0 & PRIORITY != 0))
            .finish()
    }
}
