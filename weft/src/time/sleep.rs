//! `Sleep`: a future that completes at a deadline.
//!
//! The timer entry lives inside the `Sleep` (no allocation per timer), which is why `Sleep`
//! is `!Unpin`: once polled, the wheel holds a pointer to it until it fires or is dropped.
//! The first poll registers it (one lock); later polls read the entry's `state` word without a lock,
//! and take the lock only to store a waker for a different task; drop unlinks it (one lock)
//! unless it already fired. `reset` to a later deadline takes no lock (`entry.rs`).

use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};
use std::time::Duration;

use super::driver::Due;
use super::entry::TimerShared;
use super::Instant;
use crate::runtime::scheduler;

pin_project_lite::pin_project! {
    /// Future returned by [`sleep`] and [`sleep_until`].
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Sleep {
        deadline: Instant,
        handle: scheduler::Handle,
        // `Some` while the entry is registered: the identity (`Waker::data`, `Waker::vtable`)
        // of the waker it holds, so a poll with a waker that wakes the same task skips the
        // lock (`will_wake`'s test).
        registered: Option<WakerId>,
        // What its registration does with a deadline already reached (`driver::Due`).
        due: Due,
        #[pin]
        entry: TimerShared,
    }

    impl PinnedDrop for Sleep {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if this.registered.is_some() && !this.entry.is_fired() {
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
        Sleep { deadline, handle, registered: None, due: Due::AfterSlack, entry: TimerShared::new() }
    }

    /// A sleep that completes at its first poll when its deadline has passed, without the slack
    /// of `driver::MIN_DELAY_TICKS`: `interval`'s (tokio's first tick is ready at once).
    pub(crate) fn firing_when_due(deadline: Instant) -> Sleep {
        let mut sleep = Sleep::new(deadline);
        sleep.due = Due::Now;
        sleep
    }

    /// A sleep that completes only when a driver turn fires it (never at its first poll, even
    /// if its deadline has passed), after every timer due by then: `time::advance` waits on one.
    #[cfg(feature = "test-util")]
    pub(crate) fn in_driver_turn(deadline: Instant) -> Sleep {
        let mut sleep = Sleep::new(deadline);
        sleep.due = Due::InDriverTurn;
        sleep
    }

    /// The instant at which this future completes.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// True once the deadline has been reached (the timer fired).
    pub fn is_elapsed(&self) -> bool {
        self.registered.is_some() && self.entry.is_fired()
    }

    /// Moves the deadline, reusing the same pinned entry (no allocation). A later deadline on a
    /// pending sleep takes no lock: the entry stays filed in the wheel, which files it again
    /// when its old tick comes due (`entry.rs`). An earlier one refiles it at once with the
    /// waker it holds (two lock round trips), so the waiting task is woken at the new deadline
    /// without polling first, as with tokio; after it fired nothing is linked, and the next
    /// poll registers it again.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.project();
        if this.registered.is_some() && this.entry.extend(time_handle(this.handle).tick_ceil(deadline)) {
            *this.deadline = deadline;
            return;
        }
        *this.deadline = deadline;
        if this.registered.is_some() {
            // A fired entry is already unlinked and the driver is done with it (`entry.rs`):
            // an `interval` re-arming after each tick takes no lock here.
            if !this.entry.is_fired() {
                let entry = NonNull::from(&*this.entry);
                let time = time_handle(this.handle);
                // SAFETY: registered with this handle and pinned.
                let waker = unsafe { time.unlink(entry) };
                if let Some(waker) = waker {
                    this.entry.disarm();
                    // The task waiting on this sleep keeps waiting on it across the move, as in
                    // tokio: refiled at the new deadline with the same waker, it is woken then
                    // without polling again first (tokio-util's `DelayQueue` resets and waits).
                    // SAFETY: pinned, and unlinked just above.
                    if unsafe { time.register(entry, deadline, &waker) } {
                        waker.wake();
                    }
                    return;
                }
            }
            this.entry.disarm();
            *this.registered = None;
        }
    }

    fn poll_elapsed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let due = self.due;
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
        let id = waker_id(cx.waker());
        let fired = if this.registered.is_none() {
            *this.registered = Some(id);
            // SAFETY: pinned, unlinked; deregistered in our drop.
            unsafe { time.register_checked(entry, *this.deadline, cx.waker(), due) }
        } else if this.entry.is_fired() {
            true
        } else if *this.registered == Some(id) {
            // The entry holds a waker for this same task (and keeps that task alive, so the
            // identity cannot be reused); if the timer fires meanwhile, that waker wakes us.
            false
        } else {
            *this.registered = Some(id);
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

/// What `Waker::will_wake` compares: the data pointer and the vtable.
type WakerId = (usize, usize);

fn waker_id(waker: &std::task::Waker) -> WakerId {
    (waker.data() as usize, waker.vtable() as *const std::task::RawWakerVTable as usize)
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
