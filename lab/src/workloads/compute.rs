//! CPU-bound fan-out: tasks that do real work, so the scheduler's job is to spread them over the
//! workers. `fan_out_compute` is many small tasks (distribution overhead shows), and
//! `multi_thread_scaling` a few large ones (only parallelism shows).
//!
//! The kernel has a closed-form result, so outputs are checked without re-running the work;
//! `black_box` on every step keeps the compiler from folding it.

use std::hint::black_box;

use super::{expect_eq, inside, join_sum};
use crate::adapter::Adapter;

/// Kernel steps per task in `fan_out_compute` (about 20 µs).
pub const FAN_OUT_STEPS: u64 = 50_000;
/// Kernel steps per task in `multi_thread_scaling` (about 2 ms).
pub const SCALING_STEPS: u64 = 5_000_000;

/// Σ_{k<steps} k·(seed|1), one opaque step at a time.
fn kernel(seed: u64, steps: u64) -> u64 {
    let factor = seed | 1;
    let mut acc = 0u64;
    for k in 0..steps {
        acc = acc.wrapping_add(black_box(k).wrapping_mul(factor));
    }
    acc
}

/// The kernel's value, computed in O(1).
fn kernel_closed_form(seed: u64, steps: u64) -> u64 {
    let triangle = if steps.is_multiple_of(2) {
        (steps / 2).wrapping_mul(steps.wrapping_sub(1))
    } else {
        steps.wrapping_mul((steps - 1) / 2)
    };
    triangle.wrapping_mul(seed | 1)
}

async fn fan_out<R: Adapter>(tasks: u64, steps: u64) -> Result<(), String> {
    inside::<R, _>(async move {
        let handles: Vec<_> = (0..tasks).map(|i| R::spawn(async move { kernel(i, steps) })).collect();
        let want = (0..tasks).fold(0u64, |acc, i| acc.wrapping_add(kernel_closed_form(i, steps)));
        expect_eq("kernel sum", join_sum::<R>(handles).await?, want)
    })
    .await
}

/// `fan_out_compute`: `tasks` tasks of ~20 µs each, gathered.
pub async fn fan_out_compute<R: Adapter>(tasks: u64) -> Result<(), String> {
    fan_out::<R>(tasks, FAN_OUT_STEPS).await
}

/// `multi_thread_scaling`: `tasks` tasks of ~2 ms each, gathered.
pub async fn multi_thread_scaling<R: Adapter>(tasks: u64) -> Result<(), String> {
    fan_out::<R>(tasks, SCALING_STEPS).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_matches_closed_form() {
        for (seed, steps) in [(0, 0), (0, 1), (3, 10), (7, 11), (1234, 20_000), (u64::MAX, 999)] {
            assert_eq!(kernel(seed, steps), kernel_closed_form(seed, steps), "seed {seed} steps {steps}");
        }
    }
}
