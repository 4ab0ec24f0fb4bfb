//! `Interest` (what a task wants to wait for) and `Ready` (what the driver reported): small
//! bit sets over the readiness bits of `runtime::io::scheduled_io`.

use std::fmt;
use std::ops;

use crate::runtime::io::scheduled_io::{ERROR, READABLE, READ_CLOSED, WRITABLE, WRITE_CLOSED};

/// Readiness interest for `ready()` / `try_io()`: readable, writable, or both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Interest(usize);

impl Interest {
    pub const READABLE: Interest = Interest(READABLE);
    pub const WRITABLE: Interest = Interest(WRITABLE);

    pub const fn is_readable(self) -> bool {
        self.0 & READABLE != 0
    }
    pub const fn is_writable(self) -> bool {
        self.0 & WRITABLE != 0
    }
    /// Both interests.
    #[must_use]
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
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
        m
    }
}

impl ops::BitOr for Interest {
    type Output = Interest;
    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.is_readable(), self.is_writable()) {
            (true, true) => f.write_str("READABLE | WRITABLE"),
            (true, false) => f.write_str("READABLE"),
            _ => f.write_str("WRITABLE"),
        }
    }
}

/// Readiness reported by the driver.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Ready(usize);

impl Ready {
    pub const EMPTY: Ready = Ready(0);
    pub const READABLE: Ready = Ready(READABLE);
    pub const WRITABLE: Ready = Ready(WRITABLE);
    pub const READ_CLOSED: Ready = Ready(READ_CLOSED);
    pub const WRITE_CLOSED: Ready = Ready(WRITE_CLOSED);
    pub const ERROR: Ready = Ready(ERROR);

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
}

impl ops::BitOr for Ready {
    type Output = Ready;
    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
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
            .finish()
    }
}
