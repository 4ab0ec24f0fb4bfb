//! Statistics for benchmark samples, in one dependency-free module (the multi-agent study reuses
//! it): summaries, percentiles, a seeded bootstrap, and Welch's t-test.
//!
//! Conventions, chosen to match numpy/scipy so results can be checked against them:
//! - [`percentile`] interpolates linearly between closest ranks (numpy's default, "type 7").
//! - [`stddev`] is the *sample* standard deviation (n − 1 in the denominator; numpy `ddof=1`).
//! - The bootstrap is the percentile bootstrap: resample with replacement `resamples` times,
//!   compute the statistic, take the 2.5th and 97.5th percentiles. It is driven by
//!   [`SplitMix64`] from a fixed seed, so the same samples always give the same interval.
//! - [`welch_t_test`] is scipy's `ttest_ind(a, b, equal_var=False)`: two-sided p-value from the
//!   Student t distribution with Welch–Satterthwaite degrees of freedom.
//!
//! Ratios are "time of A ÷ time of B": below 1 means A is faster.

/// Seed of every bootstrap the lab runs (determinism: same samples, same interval).
pub const BOOTSTRAP_SEED: u64 = 0x5EED_1AB5;
/// Bootstrap resamples per interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2_000;

/// Arithmetic mean (NaN when empty).
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance, n − 1 denominator (0 for fewer than two values).
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Sample standard deviation.
pub fn stddev(xs: &[f64]) -> f64 {
    variance(xs).sqrt()
}

/// Coefficient of variation: stddev ÷ mean.
pub fn cv(xs: &[f64]) -> f64 {
    stddev(xs) / mean(xs)
}

pub fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn max(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// The `p`th percentile (0 ≤ p ≤ 100), linear interpolation between closest ranks.
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, p)
}

fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p / 100.0).clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

pub fn median(xs: &[f64]) -> f64 {
    percentile(xs, 50.0)
}

/// Everything the results table shows about one set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub stddev: f64,
    pub cv: f64,
    pub min: f64,
    pub max: f64,
    pub p5: f64,
    pub p25: f64,
    pub p75: f64,
    pub p95: f64,
}

impl Summary {
    pub fn of(xs: &[f64]) -> Summary {
        let mut sorted = xs.to_vec();
        sorted.sort_by(f64::total_cmp);
        let p = |q| percentile_sorted(&sorted, q);
        Summary {
            n: xs.len(),
            mean: mean(xs),
            median: p(50.0),
            stddev: stddev(xs),
            cv: cv(xs),
            min: min(xs),
            max: max(xs),
            p5: p(5.0),
            p25: p(25.0),
            p75: p(75.0),
            p95: p(95.0),
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, seedable, good enough to drive a bootstrap.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An index in `0..n` (modulo reduction; the bias is below 2⁻⁵⁰ for sample-sized `n`).
    pub fn index(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Percentile-bootstrap confidence interval of `statistic` over `xs` at `level` (e.g. 0.95).
pub fn bootstrap_ci(
    xs: &[f64],
    statistic: impl Fn(&[f64]) -> f64,
    resamples: usize,
    seed: u64,
    level: f64,
) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut rng = SplitMix64::new(seed);
    let mut buffer = vec![0.0; xs.len()];
    let mut stats: Vec<f64> = (0..resamples)
        .map(|_| {
            for slot in buffer.iter_mut() {
                *slot = xs[rng.index(xs.len())];
            }
            statistic(&buffer)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0 * 100.0;
    (percentile_sorted(&stats, tail), percentile_sorted(&stats, 100.0 - tail))
}

/// A ratio with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RatioEstimate {
    pub median: f64,
    pub ci95: (f64, f64),
}

/// `1.23× [1.10–1.31]`: the median and its interval, as every table prints a paired ratio.
impl std::fmt::Display for RatioEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2}× [{:.2}–{:.2}]", self.median, self.ci95.0, self.ci95.1)
    }
}

impl RatioEstimate {
    /// `Some(true)` when A is surely faster (CI below 1), `Some(false)` when surely slower
    /// (CI above 1), `None` for a tie (the CI contains 1).
    pub fn verdict(&self) -> Option<bool> {
        if self.ci95.1 < 1.0 {
            Some(true)
        } else if self.ci95.0 > 1.0 {
            Some(false)
        } else {
            None
        }
    }
}

/// `a[i] / b[i]` for the pairs both slices have.
pub fn paired_ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}

/// Median of the paired ratios a[i]/b[i] (samples taken in the same round) and its bootstrap CI.
pub fn paired_ratio(a: &[f64], b: &[f64], seed: u64) -> RatioEstimate {
    let ratios = paired_ratios(a, b);
    RatioEstimate { median: median(&ratios), ci95: bootstrap_ci(&ratios, median, BOOTSTRAP_RESAMPLES, seed, 0.95) }
}

/// median(a) ÷ median(b) for unpaired samples (two different runs), with a bootstrap CI that
/// resamples each side independently from one seeded stream.
pub fn unpaired_ratio(a: &[f64], b: &[f64], seed: u64) -> RatioEstimate {
    let point = median(a) / median(b);
    if a.is_empty() || b.is_empty() {
        return RatioEstimate { median: point, ci95: (f64::NAN, f64::NAN) };
    }
    let mut rng = SplitMix64::new(seed);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut stats: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            for slot in ra.iter_mut() {
                *slot = a[rng.index(a.len())];
            }
            for slot in rb.iter_mut() {
                *slot = b[rng.index(b.len())];
            }
            median(&ra) / median(&rb)
        })
        .collect();
    stats.sort_by(f64::total_cmp);
    RatioEstimate { median: point, ci95: (percentile_sorted(&stats, 2.5), percentile_sorted(&stats, 97.5)) }
}

/// Result of Welch's unequal-variances t-test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of mean(a) = mean(b). `None` with fewer than two samples on a side.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (va, vb) = (variance(a) / a.len() as f64, variance(b) / b.len() as f64);
    let diff = mean(a) - mean(b);
    if va + vb == 0.0 {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        return Some(Welch { t: if diff == 0.0 { 0.0 } else { diff.signum() * f64::INFINITY }, df: f64::NAN, p });
    }
    let t = diff / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    let p = regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    Some(Welch { t, df, p })
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, n = 9; ~15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    #[allow(clippy::excessive_precision)] // the published Lanczos coefficients, verbatim
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_93,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_13,
        -176.615_029_162_140_59,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_571_6e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEF[0];
    for (i, c) in COEF.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// I_x(a, b), the regularized incomplete beta function (continued fraction, modified Lentz).
pub fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_continued_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_continued_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_continued_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        // Even step.
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        // Odd step.
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
