//! A log-linear histogram of durations: the bucket layout, the worker-owned counts, and the
//! published (atomic) counts that readers see.
//!
//! Layout (the idea of tokio's `LogHistogram`, written from the description, not the code):
//! values are nanoseconds; below `2^MIN_SHIFT` ns the range is split linearly into
//! `SUB_BUCKETS` buckets; above it, every power of two `[2^g, 2^(g+1))` is split into
//! `SUB_BUCKETS` equal buckets, so the relative error of any bucket is at most
//! `1 / SUB_BUCKETS` (25%). The last bucket is open-ended. With `MIN_SHIFT = 7` (128 ns) and
//! `MAX_SHIFT = 36` (~69 s) that is 120 buckets: under 1 KiB per worker.
//!
//! Why log-linear and not fixed-width buckets (tokio's older default): poll times span six
//! orders of magnitude (100 ns for a channel hop, 100 ms for an accidental blocking call);
//! a linear histogram either loses the fast end or lumps every slow poll into its last bucket.
//!
//! Recording is a shift, a `leading_zeros` and an increment of a plain `u64` owned by the
//! worker; publishing copies the counts into relaxed atomics (one writer per histogram).

use std::time::Duration;

use crate::loom::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Below `2^MIN_SHIFT` ns the buckets are linear.
const MIN_SHIFT: u32 = 7;
/// Values at or above `2^MAX_SHIFT` ns all land in the last bucket.
const MAX_SHIFT: u32 = 36;
/// log2 of the number of sub-buckets per power of two.
const PRECISION: u32 = 2;
const SUB_BUCKETS: usize = 1 << PRECISION;

/// Number of buckets of every weft histogram.
pub(crate) const NUM_BUCKETS: usize = SUB_BUCKETS + (MAX_SHIFT - MIN_SHIFT) as usize * SUB_BUCKETS;

/// The bucket a duration of `nanos` falls in.
#[inline]
pub(crate) fn bucket_of(nanos: u64) -> usize {
    if nanos < (1 << MIN_SHIFT) {
        return (nanos >> (MIN_SHIFT - PRECISION)) as usize;
    }
    let g = 63 - nanos.leading_zeros();
    if g >= MAX_SHIFT {
        return NUM_BUCKETS - 1;
    }
    let sub = ((nanos >> (g - PRECISION)) as usize) & (SUB_BUCKETS - 1);
    SUB_BUCKETS + (g - MIN_SHIFT) as usize * SUB_BUCKETS + sub
}

/// The half-open range `[start, end)` of durations bucket `i` counts. The last bucket ends at
/// `Duration::MAX`. Panics if `i >= NUM_BUCKETS`.
pub(crate) fn bucket_range(i: usize) -> std::ops::Range<Duration> {
    assert!(i < NUM_BUCKETS, "histogram bucket {i} out of range (there are {NUM_BUCKETS})");
    let (lo, hi) = if i < SUB_BUCKETS {
        let w = 1u64 << (MIN_SHIFT - PRECISION);
        (i as u64 * w, (i as u64 + 1) * w)
    } else {
        let g = MIN_SHIFT + ((i - SUB_BUCKETS) / SUB_BUCKETS) as u32;
        let sub = ((i - SUB_BUCKETS) % SUB_BUCKETS) as u64;
        let w = 1u64 << (g - PRECISION);
        let lo = (1u64 << g) + sub * w;
        (lo, lo + w)
    };
    let end = if i == NUM_BUCKETS - 1 { Duration::MAX } else { Duration::from_nanos(hi) };
    Duration::from_nanos(lo)..end
}

/// Counts owned by one thread (a worker's batch): plain integers, no synchronisation.
pub(crate) struct HistogramBatch {
    counts: Box<[u64; NUM_BUCKETS]>,
    /// Sum of the recorded values, in ns (exported as the histogram's `_sum`).
    sum: u64,
}

impl HistogramBatch {
    pub(crate) fn new() -> HistogramBatch {
        HistogramBatch { counts: Box::new([0; NUM_BUCKETS]), sum: 0 }
    }

    #[inline]
    pub(crate) fn record(&mut self, nanos: u64) {
        self.counts[bucket_of(nanos)] += 1;
        self.sum = self.sum.wrapping_add(nanos);
    }

    /// Copies the counts to `to` (this batch is its only writer).
    pub(crate) fn publish(&self, to: &AtomicHistogram) {
        for (dst, &src) in to.counts.iter().zip(self.counts.iter()) {
            dst.store(src, Relaxed);
        }
        to.sum.store(self.sum, Relaxed);
    }
}

/// Published counts, readable from any thread; each is a cumulative total.
pub(crate) struct AtomicHistogram {
    counts: Box<[AtomicU64]>,
    sum: AtomicU64,
}

impl AtomicHistogram {
    pub(crate) fn new() -> AtomicHistogram {
        AtomicHistogram { counts: (0..NUM_BUCKETS).map(|_| AtomicU64::new(0)).collect(), sum: AtomicU64::new(0) }
    }

    pub(crate) fn get(&self, bucket: usize) -> u64 {
        self.counts[bucket].load(Relaxed)
    }

    /// Adds one sample directly (for histograms recorded by many threads, e.g. the
    /// blocking pool's queue latency, where a relaxed add per slow operation costs nothing).
    pub(crate) fn record_shared(&self, nanos: u64) {
        self.counts[bucket_of(nanos)].fetch_add(1, Relaxed);
        self.sum.fetch_add(nanos, Relaxed);
    }

    /// Sum of all samples, in ns.
    pub(crate) fn sum(&self) -> u64 {
        self.sum.load(Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_value_lands_in_the_bucket_whose_range_holds_it() {
        let mut samples = vec![0u64, 1, 31, 32, 127, 128, 129, 159, 160, 255, 256, 1_000, 999_999, 1 << 35];
        samples.extend([(1 << 36) - 1, 1 << 36, u64::MAX / 2, u64::MAX]);
        for v in samples {
            let b = bucket_of(v);
            let r = bucket_range(b);
            let d = Duration::from_nanos(v);
            assert!(r.start <= d && (d < r.end || b == NUM_BUCKETS - 1), "{v} ns in bucket {b} = {r:?}");
        }
    }

    #[test]
    fn buckets_tile_the_range_without_gaps() {
        assert_eq!(NUM_BUCKETS, 120);
        assert_eq!(bucket_range(0).start, Duration::ZERO);
        for i in 1..NUM_BUCKETS {
            assert_eq!(bucket_range(i - 1).end, bucket_range(i).start, "gap before bucket {i}");
        }
        assert_eq!(bucket_range(NUM_BUCKETS - 1).end, Duration::MAX);
        // Exact edges: 128 ns starts the first log group, 160 ns its second sub-bucket.
        assert_eq!(bucket_of(127), 3);
        assert_eq!(bucket_of(128), 4);
        assert_eq!(bucket_of(160), 5);
        assert_eq!(bucket_of(256), 8);
    }

    #[test]
    fn batch_publishes_cumulative_counts() {
        let mut b = HistogramBatch::new();
        let a = AtomicHistogram::new();
        b.record(100);
        b.record(100);
        b.record(1_000_000);
        b.publish(&a);
        assert_eq!(a.get(bucket_of(100)), 2);
        assert_eq!(a.get(bucket_of(1_000_000)), 1);
        b.record(100);
        b.publish(&a);
        assert_eq!(a.get(bucket_of(100)), 3);
        assert_eq!((0..NUM_BUCKETS).map(|i| a.get(i)).sum::<u64>(), 4);
    }
}
