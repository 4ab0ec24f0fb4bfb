//! Time: `sleep`, `timeout`, `interval`, driven by a hierarchical timer wheel.
//!
//! # Design
//! * `wheel` — 6 levels × 64 slots at 1 µs resolution; O(1) insert and cancel; the next
//!   deadline found with a bit scan per level.
//! * `entry` — the pinned `TimerShared` inside each `Sleep` (no allocation per timer).
//! * `driver` — the wheel behind one lock, tick conversion (deadlines round *up* to a tick,
//!   "now" rounds *down*, so a timer never fires before its deadline), registration, and
//!   the park/fire cycle used by the runtime driver (`runtime::driver`).
//! * `sleep`, `timeout`, `interval` — the user-facing futures, shaped like tokio's.
//! * `clock` — the driver's source of "now"; pausable under the `test-util` feature.
//!
//! Who fires timers: the worker that parks in the runtime driver sleeps until the earliest
//! deadline and fires everything due when it wakes; busy workers fire due timers every
//! `event_interval` ticks. Timers fire in deadline order (by tick) and never early; how late
//! they fire is measured by the lab, not asserted by tests.
//!
//! # Glossary
//! * **tick** — one microsecond since the driver's start instant; the wheel's only unit.
//!   Deadlines round *up* to a tick, "now" rounds *down*.
//! * **entry** (`TimerShared`) — the node the wheel links: the tick it is filed under, waker,
//!   list links and the atomic `state` word (the armed deadline tick, or `FIRED` once fired;
//!   `entry.rs`), pinned inside its `Sleep` (the wheel owns nothing).
//! * **level / slot** — the wheel has 6 levels of 64 slots; a slot of level `l` spans `64^l`
//!   ticks, the level `64^(l+1)`; each level keeps an occupancy mask, so the next deadline
//!   is found by one bit scan per level.
//! * **cascade** — when a higher-level slot comes due its entries move down to the level
//!   their remaining time fits (or fire, if already due).
//! * **elapsed** — the last tick the wheel has processed: every entry due at or before it has
//!   fired.
//! * **next_wake** — the tick the driver owner sleeps until (`AWAKE` when nobody sleeps on
//!   the wheel); a registration earlier than it unparks the driver.
//!
//! # Paused time (`test-util`)
//! `time::pause()` freezes the current runtime's clock; `Instant::now()` (inside that
//! runtime) and every tick computation read it. Time then moves only two ways:
//! * `advance(d)` adds `d`, fires every timer now due (the wheel's usual deadline order),
//!   and yields once so the woken tasks run first;
//! * **auto-advance**: when the scheduler parks with nothing runnable, the driver first polls
//!   I/O and pending unparks without blocking; if nothing came in, the runtime is idle, so
//!   instead of sleeping the clock jumps to the next timer deadline (or by the park's limit,
//!   if sooner) and fires it. With no timer and no limit it parks for real, as tokio does.
//!
//! Only the current-thread runtime may pause (tokio's rule and panic text): on the
//! multi-thread runtime an idle worker's jump would race busy workers reading the clock.
//! Auto-advance waits while any `spawn_blocking` closure of the runtime is queued or running
//! (as tokio's does; `clock.rs`): that code runs on real time, so jumping the paused clock
//! meanwhile would fire a `timeout` around it spuriously.
//! Rejected: a process-global paused clock (tests in one binary run on parallel threads and
//! would move each other's time); the clock is per runtime, inside its time driver.
//!
//! # Shutdown, as steps
//! 1. The scheduler's last shutdown step calls `runtime::driver::Driver::shutdown`, which
//!    calls the time handle's `shutdown`.
//! 2. `is_shutdown` is set (Release), so every later registration or poll of a `Sleep`
//!    sees it and panics with a message saying the runtime is gone.
//! 3. Under the wheel lock every linked entry is unlinked and marked fired and its waker
//!    taken; after the lock is released the wakers are *woken* (not dropped). The runtime's
//!    own tasks were already cancelled (owned-list shutdown comes first), so this reaches
//!    futures outside it (a `block_on` future, a future on another executor), which are
//!    polled again and get the clear panic of step 2 instead of hanging.
//! 4. `Sleep`s dropped afterwards see their entry's `state` at `FIRED` and never touch the
//!    wheel again.
//!
//! # Rejected designs
//! * **A binary heap of deadlines** (as in many event loops): O(log n) insert, and cancel is
//!   either O(n) or needs lazy tombstones that keep a million dropped `timeout`s' memory until
//!   their deadline. Timeouts are mostly cancelled before they fire (a request that finishes
//!   in time), so O(1) cancel is what matters; the wheel has it and needs no allocation.
//! * **A single-level (hashed) wheel**: O(1) too, but each turn must skip entries that are
//!   many rounds away; the levels keep every visit useful.
//! * **1 ms ticks** (tokio's): with the I/O driver waiting with nanosecond timeouts
//!   (`runtime/io/epoll.rs`), the tick would dominate lateness (`weft-lab lateness`;
//!   docs/notes/performance-figures.md, "Timer lateness"). 1 µs ticks cost one more cascade level
//!   for a given duration; `advance` jumps from one occupied slot to the next, so finer ticks do
//!   not add slot visits for empty time.
//! * **Coarser resolution (e.g. 10 ms ticks)**: fewer ticks to process, but every sleep could
//!   then fire up to 10 ms late (the lab's `lateness` command measures exactly this).
//! * **Zero and past deadlines complete at once** (no slack): exact, but code tuned to tokio's
//!   1 ms rounding uses `timeout(0)` as a back-off and then spins (`driver.rs`,
//!   `MIN_DELAY_TICKS`); a 50 µs floor keeps every longer sleep exact.
//!
//! Cancellation: dropping a `Sleep` unlinks its entry under the lock (O(1)), so a million
//! created-and-dropped sleeps leave nothing behind.

mod clock;
mod driver;
mod entry;
pub mod error;
mod instant;
mod interval;
mod sleep;
mod timeout;
mod wheel;

#[cfg(feature = "test-util")]
pub use clock::{advance, pause, resume};
pub(crate) use driver::Handle;
pub use instant::Instant;
pub use interval::{interval, interval_at, Interval, MissedTickBehavior};
pub use sleep::{sleep, sleep_until, Sleep};
pub use std::time::Duration;
pub use timeout::{timeout, timeout_at, Timeout};
