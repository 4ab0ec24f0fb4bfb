//! CPU-bound fan-out: tasks that do real work, so the scheduler's job is to spread them over the
//! workers. `fan_out_compute` is many small tasks (distribution overhead shows), and
//! `multi_thread_scaling` a few large ones (only parallelism shows).
//!
//! The kernel has a closed form (a matrix power), so outputs are checked without re-running the
//! work; its steps form one chain of dependent multiplies, which no compiler can fold.

use super::{expect_eq, inside, join_sum};
use crate::framework::adapter::Adapter;

/// Kernel steps per task in `fan_out_compute` (about 20 µs).
pub const FAN_OUT_STEPS: u64 = 15_000;
/// Kernel steps per task in `multi_thread_scaling` (about 2 ms).
pub const SCALING_STEPS: u64 = 1_500_000;

/// `acc ← acc·(seed|1) + k` for k in 0..steps: a chain of dependent multiplies that no compiler
/// can shorten (each step needs the previous one), about 4 cycles a step.
///
/// Never inlined, so every runtime runs this one copy. Rejected: summing `black_box(k) × factor`
/// — a store and a reload per step — inlined into each runtime's poll function; its speed then
/// depends on where the loop lands, and a change in code this workload never calls can run
/// weft's copy at half the speed of tokio's (docs/notes/performance-figures.md, "Compute
/// kernel"). A throughput-bound loop (`k` made opaque by an
/// empty `asm!`) was rejected too: on the 2-CPU development machine it ran no faster on two
/// workers than on one (the two virtual CPUs seem to share one core's execution units, which a
/// latency-bound chain leaves half idle), and this workload is about spreading work.
#[inline(never)]
fn kernel(seed: u64, steps: u64) -> u64 {
    let factor = seed | 1;
    let mut acc = 0u64;
    for k in 0..steps {
        acc = acc.wrapping_mul(factor).wrapping_add(k);
    }
    acc
}

/// The kernel's value in O(log steps): the state (acc, k, 1) advances by a fixed 3×3 matrix
/// per step (acc' = f·acc + k, k' = k + 1), so `steps` steps are one matrix power (mod 2^64).
fn kernel_closed_form(seed: u64, steps: u64) -> u64 {
    type M = [[u64; 3]; 3];
    fn mul(a: &M, b: &M) -> M {
        let mut c = [[0u64; 3]; 3];
        for (i, row) in c.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                *cell = (0..3).fold(0u64, |s, k| s.wrapping_add(a[i][k].wrapping_mul(b[k][j])));
            }
        }
        c
    }
    let mut step: M = [[seed | 1, 1, 0], [0, 1, 1], [0, 0, 1]];
    let mut power: M = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
    let mut n = steps;
    while n > 0 {
        if n & 1 == 1 {
            power = mul(&power, &step);
        }
        step = mul(&step, &step);
        n >>= 1;
    }
    // Start state (0, 0, 1): acc is the top-right entry.
    power[0][2]
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
