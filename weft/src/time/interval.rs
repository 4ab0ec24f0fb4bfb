//! `Interval`: a stream of evenly spaced ticks, with tokio's missed-tick policies.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::{Instant, Sleep};

/// What to do when ticks were missed because the consumer was late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks as fast as possible, then resume the original schedule.
    #[default]
    Burst,
    /// Start a new schedule one period after the late tick.
    Delay,
    /// Skip the missed ticks; the next tick is the next multiple of the period on the
    /// original schedule.
    Skip,
}

impl MissedTickBehavior {
    fn next_timeout(self, timeout: Instant, now: Instant, period: Duration) -> Instant {
        match self {
            MissedTickBehavior::Burst => timeout.add_or_far_future(period),
            MissedTickBehavior::Delay => now.add_or_far_future(period),
            MissedTickBehavior::Skip => {
                let late = now.saturating_duration_since(timeout).as_nanos();
                let rem = late % period.as_nanos();
                // `rem <= late`, a Duration's nanoseconds, and `rem < period`: no overflow, no
                // underflow.
                let rem = Duration::new((rem / 1_000_000_000) as u64, (rem % 1_000_000_000) as u32);
                let to_next = period - rem;
                now.add_or_far_future(to_next)
            }
        }
    }
}

/// Ticks every `period`, the first tick completing immediately.
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start`. Panics if `period` is zero.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(period > Duration::ZERO, "`interval` period must be non-zero");
    Interval { delay: Box::pin(Sleep::firing_when_due(start)), period, missed_tick_behavior: MissedTickBehavior::Burst }
}

/// See [`interval`].
#[derive(Debug)]
pub struct Interval {
    delay: Pin<Box<Sleep>>,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
}

impl Interval {
    /// Completes at the next tick, returning its scheduled instant.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        std::task::ready!(self.delay.as_mut().poll(cx));
        let timeout = self.delay.deadline();
        let now = Instant::now();
        let next = if now.saturating_duration_since(timeout) > Duration::from_millis(5) {
            self.missed_tick_behavior.next_timeout(timeout, now, self.period)
        } else {
            timeout.add_or_far_future(self.period)
        };
        self.delay.as_mut().reset(next);
        Poll::Ready(timeout)
    }

    /// Restarts the schedule: the next tick is one period from now.
    pub fn reset(&mut self) {
        self.delay.as_mut().reset(Instant::now().add_or_far_future(self.period));
    }

    /// The next tick completes immediately.
    pub fn reset_immediately(&mut self) {
        self.delay.as_mut().reset(Instant::now());
    }

    pub fn reset_after(&mut self, delay: Duration) {
        self.delay.as_mut().reset(Instant::now().add_or_far_future(delay));
    }

    pub fn reset_at(&mut self, deadline: Instant) {
        self.delay.as_mut().reset(deadline);
    }

    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }

    pub fn period(&self) -> Duration {
        self.period
    }
}

use std::future::Future;
