//! `Sleep`: a future that completes at a deadline.
//!
//! The timer entry lives inside the `Sleep` (no allocation per timer), which is why `Sleep`
//! is `!Unpin`: once polled, the wheel holds a pointer to it until it fires or is dropped.
//! The first poll registers it (one lock); later polls read the `fired` flag without a lock
//! unless the waker must change; drop unlinks it (one lock) unless it already fired.

use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};
use std::time::Duration;

use super::entry::TimerShared;
use super::Instant;
use crate::runtime::scheduler;

pin_project_lite::pin_project! {
    /// Future returned by [`sleep`] and [`sleep_until`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Sleep {
        deadline: Instant,
        handle: scheduler::Handle,
        registered: bool,
        #[pin]
        entry: TimerShared,
    }

    impl PinnedDrop for Sleep {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if *this.registered && !this.entry.is_fired() {
                let entry = NonNull::from(&*this.entry);
                // SAFETY: the entry was registered with this handle's driver and is pinned
                // until this drop returns.
                unsafe { time_handle(this.handle).deregister(entry) };
            }
        }
    }
}

/// Waits until `duration` has elapsed. Panics outside a runtime with timers enabled.
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    let deadline = Instant::now().add_or_far_future(duration);
    Sleep::new(deadline)
}

/// Waits until `deadline`. Panics outside a runtime with timers enabled.
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(deadline)
}

fn time_handle(handle: &scheduler::Handle) -> &super::driver::Handle {
    handle.driver().time().expect("checked when the Sleep was created")
}

impl Sleep {
    #[track_caller]
    pub(crate) fn new(deadline: Instant) -> Sleep {
        let handle =
            crate::runtime::context::current_or_panic("creating a weft timer (`sleep`, `timeout`, `interval`)");
        if handle.driver().time().is_none() {
            // Starts with tokio's exact text (tokio's tests match it).
            panic!(
                "A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on \
                 the runtime builder to enable timers. (weft: `Builder::enable_time()` or \
                 `Builder::enable_all()`)"
            );
        }
        Sleep { deadline, handle, registered: false, entry: TimerShared::new() }
    }

    /// The instant at which this future completes.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// True once the deadline has been reached (the timer fired).
    pub fn is_elapsed(&self) -> bool {
        self.registered && self.entry.is_fired()
    }

    /// Moves the deadline; the sleep is re-registered in place on its next poll (no new
    /// allocation, the same pinned entry).
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.project();
        if *this.registered {
            let entry = NonNull::from(&*this.entry);
            // SAFETY: registered with this handle and pinned.
            unsafe { time_handle(this.handle).deregister(entry) };
            this.entry.reset_fired();
            *this.registered = false;
        }
        *this.deadline = deadline;
    }

    fn poll_elapsed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        let time = time_handle(this.handle);
        if time.is_shutdown() {
            panic!(
                "a weft timer was polled after its runtime shut down; timers only work while \
                 the runtime that created them is alive"
            );
        }
        let coop = std::task::ready!(crate::task::coop::poll_proceed(cx));
        let entry = NonNull::from(&*this.entry);
        let fired = if !*this.registered {
            *this.registered = true;
            // SAFETY: pinned, unlinked; deregistered in our drop.
            unsafe { time.register(entry, *this.deadline, cx.waker()) }
        } else if this.entry.is_fired() {
            true
        } else {
            // SAFETY: registered with this handle and pinned.
            unsafe { time.update_waker(entry, cx.waker()) }
        };
        if fired {
            coop.made_progress();
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_elapsed(cx)
    }
}

impl std::fmt::Debug for Sleep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sleep").field("deadline", &self.deadline).finish()
    }
}
