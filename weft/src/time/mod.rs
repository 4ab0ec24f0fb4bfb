//! Time: `sleep`, `timeout`, `interval`, driven by a hierarchical timer wheel.
//!
//! # Design
//! * `wheel` — 6 levels × 64 slots at 1 ms resolution; O(1) insert and cancel; the next
//!   deadline found with a bit scan per level.
//! * `entry` — the pinned `TimerShared` inside each `Sleep` (no allocation per timer).
//! * `driver` — the wheel behind one lock, tick conversion (deadlines round *up* to a tick,
//!   "now" rounds *down*, so a timer never fires before its deadline), registration, and
//!   the park/fire cycle used by the runtime driver (`runtime::driver`).
//! * `sleep`, `timeout`, `interval` — the user-facing futures, shaped like tokio's.
//!
//! Who fires timers: the worker that parks in the runtime driver sleeps until the earliest
//! deadline and fires everything due when it wakes; busy workers fire due timers every
//! `event_interval` ticks. Timers fire in deadline order (by tick) and never early; how late
//! they fire is measured by the lab, not asserted by tests.
//!
//! Cancellation: dropping a `Sleep` unlinks its entry under the lock (O(1)), so a million
//! created-and-dropped sleeps leave nothing behind.

mod driver;
mod entry;
pub mod error;
mod instant;
mod interval;
mod sleep;
mod timeout;
mod wheel;

pub(crate) use driver::Handle;
pub use instant::Instant;
pub use interval::{interval, interval_at, Interval, MissedTickBehavior};
pub use sleep::{sleep, sleep_until, Sleep};
pub use std::time::Duration;
pub use timeout::{timeout, timeout_at, Timeout};
