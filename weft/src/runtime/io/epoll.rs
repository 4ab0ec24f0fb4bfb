//! Waiting on the epoll set with a nanosecond timeout: `epoll_pwait2` (Linux 5.11+), else
//! `epoll_wait` plus a `timerfd` in the set.
//!
//! `mio::Poll::poll` takes a `Duration` but hands `epoll_wait` whole milliseconds, rounded
//! up, so every timer deadline reached through it would be late by up to a millisecond
//! (`weft-lab lateness`; docs/notes/performance-figures.md, "Timer lateness"). The driver
//! therefore keeps mio for
//! registration (its `Registry`, its eventfd `Waker`) and waits on mio's epoll fd itself:
//!
//! * **`epoll_pwait2`**, whose timeout is a `timespec`: no extra syscall, no extra fd.
//! * **Fallback** (the kernel or a seccomp filter refuses it with `ENOSYS`/`EPERM`, which is
//!   remembered per driver): a `timerfd` registered edge-triggered in the same epoll set,
//!   armed with the exact relative timeout before each timed `epoll_wait`; the millisecond
//!   timeout passed beside it is rounded up, so the timerfd always fires first. The timerfd is
//!   never read: an expiry wakes epoll even while its counter is non-zero, and a stale expiry
//!   left armed by an earlier, interrupted wait costs at most one spurious return.
//!
//! Neither path spins: an idle driver blocks in the kernel until an event or its deadline.
//! Rejected: spinning (or `sched_yield`) for the last sub-millisecond, as some runtimes do —
//! it burns a core for every pending timer; a timer thread — a cross-thread wake per timer.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use super::EVENTS_CAPACITY;

/// The token of the fallback timerfd (never the address of a `ScheduledIo`, which is aligned).
pub(crate) const TIMER_TOKEN: u64 = u64::MAX - 1;

/// How this driver waits (chosen on the first timed wait, kept for the driver's life).
enum Mode {
    /// Not yet known: the first timed wait tries `epoll_pwait2`.
    Untried,
    Pwait2,
    TimerFd(OwnedFd),
}

/// The event buffer and the wait strategy of one I/O driver (owned by the driver owner).
pub(crate) struct Waiter {
    epfd: RawFd,
    events: Box<[libc::epoll_event]>,
    /// Events taken per wait (`1..=events.len()`); more stay queued in the kernel (edge-
    /// triggered readiness stays on epoll's ready list) for the next one.
    limit: usize,
    len: usize,
    mode: Mode,
}

/// One readiness event: its token and its epoll flags.
#[derive(Clone, Copy)]
pub(crate) struct Event {
    pub(crate) token: u64,
    pub(crate) flags: u32,
}

impl Waiter {
    /// A waiter for the epoll set `epfd`, which must outlive it (the driver owns both).
    pub(crate) fn new(epfd: RawFd) -> Waiter {
        let zero = libc::epoll_event { events: 0, u64: 0 };
        Waiter {
            epfd,
            events: vec![zero; EVENTS_CAPACITY].into_boxed_slice(),
            limit: EVENTS_CAPACITY,
            len: 0,
            mode: Mode::Untried,
        }
    }

    /// Makes room for `capacity` events per wait (`Builder::max_io_events_per_tick` and
    /// `max_io_events_per_busy_tick`, whichever is larger); the limit starts at `capacity`.
    pub(crate) fn reserve(&mut self, capacity: usize) {
        assert!(capacity > 0, "an epoll wait needs room for at least one event");
        if capacity != self.events.len() {
            let zero = libc::epoll_event { events: 0, u64: 0 };
            self.events = vec![zero; capacity].into_boxed_slice();
        }
        self.limit = capacity;
        self.len = 0;
    }

    /// Takes at most `limit` events per wait from now on (clamped to the buffer's room).
    pub(crate) fn set_limit(&mut self, limit: usize) {
        self.limit = limit.clamp(1, self.events.len());
    }

    /// Makes this waiter use the timerfd fallback (tests of the fallback on kernels that have
    /// `epoll_pwait2`).
    #[cfg(test)]
    pub(crate) fn force_timerfd(&mut self) -> io::Result<()> {
        self.mode = Mode::TimerFd(self.timerfd()?);
        Ok(())
    }

    /// Blocks until an event arrives or `timeout` passes (`None`: no limit); afterwards
    /// `events()` holds what came in. An interrupted wait returns with no events.
    pub(crate) fn wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.len = 0;
        let n = loop {
            let precise = timeout.filter(|d| d.subsec_nanos() % 1_000_000 != 0);
            let res = match (&self.mode, precise) {
                // No timeout, or whole milliseconds: plain `epoll_wait` is exact.
                (_, None) => self.epoll_wait(timeout.map_or(-1, millis_ceil)),
                (Mode::Untried | Mode::Pwait2, Some(d)) => self.pwait2(d),
                (Mode::TimerFd(fd), Some(d)) => {
                    arm(fd.as_raw_fd(), d)?;
                    self.epoll_wait(millis_ceil(d))
                }
            };
            match res {
                Ok(n) => {
                    if precise.is_some() && matches!(self.mode, Mode::Untried) {
                        self.mode = Mode::Pwait2;
                    }
                    break n;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => break 0,
                // Only `epoll_pwait2` can fail this way (old kernel, or a seccomp filter).
                Err(e)
                    if precise.is_some()
                        && matches!(self.mode, Mode::Untried)
                        && matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) =>
                {
                    self.mode = Mode::TimerFd(self.timerfd()?);
                }
                Err(e) => return Err(e),
            }
        };
        self.len = n;
        Ok(())
    }

    /// The events of the last `wait`.
    pub(crate) fn events(&self) -> impl Iterator<Item = Event> + '_ {
        self.events[..self.len].iter().map(|e| Event { token: e.u64, flags: e.events })
    }

    fn epoll_wait(&mut self, timeout_ms: libc::c_int) -> io::Result<usize> {
        // SAFETY: `epfd` is the driver's open epoll fd (it outlives the waiter, `new`), and the
        // buffer pointer with `limit` (never above `self.events.len()`: `set_limit`, `reserve`)
        // describes writable room in `self.events`, which the kernel may fill.
        let n = unsafe { libc::epoll_wait(self.epfd, self.events.as_mut_ptr(), self.limit as libc::c_int, timeout_ms) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn pwait2(&mut self, d: Duration) -> io::Result<usize> {
        let ts = timespec(d);
        // SAFETY: `epfd` is the driver's open epoll fd (`new`); the buffer pointer and `limit`
        // (at most `self.events.len()`) describe writable room in `self.events`; `ts` lives across the call; a null signal mask means "leave
        // the mask alone" (its size argument is then ignored). An old kernel answers ENOSYS.
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.epfd,
                self.events.as_mut_ptr(),
                self.limit as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// A fresh non-blocking timerfd, registered edge-triggered under `TIMER_TOKEN`.
    fn timerfd(&self) -> io::Result<OwnedFd> {
        // SAFETY: plain syscall with constant flags; the result is checked before use.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a freshly created fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLET) as u32, u64: TIMER_TOKEN };
        // SAFETY: `epfd` and `fd` are open fds; `ev` lives across the call.
        if unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(fd)
    }
}

/// Arms `fd` to expire once, `d` (non-zero) from now.
fn arm(fd: RawFd, d: Duration) -> io::Result<()> {
    let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    let spec = libc::itimerspec { it_interval: zero, it_value: timespec(d) };
    // SAFETY: `fd` is the waiter's open timerfd; `spec` lives across the call and the old
    // value pointer may be null.
    if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn timespec(d: Duration) -> libc::timespec {
    libc::timespec {
        tv_sec: d.as_secs().min(libc::time_t::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    }
}

/// `d` in whole milliseconds, rounded up (never shorter than asked), capped for `c_int`.
fn millis_ceil(d: Duration) -> libc::c_int {
    let ms = d.as_nanos().div_ceil(1_000_000);
    ms.min(libc::c_int::MAX as u128) as libc::c_int
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Instant;

    fn waiter(fallback: bool) -> (mio::Poll, Waiter) {
        let poll = mio::Poll::new().unwrap();
        let mut w = Waiter::new(poll.as_raw_fd());
        if fallback {
            w.force_timerfd().unwrap();
        }
        (poll, w)
    }

    /// Sub-millisecond timeouts on both paths: the wait never returns before its timeout
    /// when nothing is ready (a lower bound only: slow machines just return later).
    #[test]
    fn sub_millisecond_waits_never_return_early() {
        for fallback in [false, true] {
            let (_poll, mut w) = waiter(fallback);
            for us in [50u64, 250, 1_300] {
                let d = Duration::from_micros(us);
                let start = Instant::now();
                w.wait(Some(d)).unwrap();
                // A timerfd expiry is the only event either path may report here.
                assert!(w.events().all(|e| e.token == TIMER_TOKEN));
                assert!(start.elapsed() >= d, "fallback={fallback}: returned before {d:?}");
            }
        }
    }

    /// A readiness event is delivered with its token on both paths.
    #[test]
    fn events_carry_their_token() {
        for fallback in [false, true] {
            let (poll, mut w) = waiter(fallback);
            let waker = mio::Waker::new(poll.registry(), mio::Token(42)).unwrap();
            waker.wake().unwrap();
            w.wait(Some(Duration::from_micros(10_500))).unwrap();
            assert_eq!(w.events().filter(|e| e.token == 42).count(), 1, "fallback={fallback}");
        }
    }
}
