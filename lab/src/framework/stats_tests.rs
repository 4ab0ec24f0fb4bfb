//! Tests for `stats`, against values computed independently with numpy 2 / scipy 1.17
//! (`np.percentile`, `np.std(ddof=1)`, `scipy.stats.ttest_ind(equal_var=False)`,
//! `scipy.special.gammaln/betainc`) and, for the bootstrap, a separate Python implementation of
//! the same SplitMix64-driven percentile bootstrap. Only the literal results live here.

use super::*;

const A: [f64; 7] = [12.5, 9.75, 14.0, 11.25, 10.5, 13.0, 9.0];
const B: [f64; 5] = [15.0, 14.25, 16.5, 13.75, 17.0];

fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol * want.abs().max(1e-300), "got {got}, want {want}");
}

#[test]
fn summary_matches_numpy() {
    let s = Summary::of(&A);
    assert_eq!(s.n, 7);
    close(s.mean, 11.428571428571429, 1e-14);
    close(s.stddev, 1.8183914922391216, 1e-14);
    close(s.cv, 0.15910925557092312, 1e-14);
    assert_eq!((s.min, s.max), (9.0, 14.0));
    close(s.p5, 9.225, 1e-14);
    close(s.p25, 10.125, 1e-14);
    close(s.median, 11.25, 1e-14);
    close(s.p75, 12.75, 1e-14);
    close(s.p95, 13.7, 1e-14);
}

#[test]
fn percentile_edges_by_hand() {
    assert_eq!(median(&[3.0, 1.0, 2.0, 4.0]), 2.5);
    assert_eq!(percentile(&[5.0], 95.0), 5.0);
    assert_eq!(percentile(&[1.0, 2.0], 0.0), 1.0);
    assert_eq!(percentile(&[1.0, 2.0], 100.0), 2.0);
    assert!(percentile(&[], 50.0).is_nan());
    assert_eq!(stddev(&[4.0]), 0.0);
}

#[test]
fn splitmix64_reference_stream() {
    let mut rng = SplitMix64::new(0);
    assert_eq!(rng.next_u64(), 16294208416658607535);
    assert_eq!(rng.next_u64(), 7960286522194355700);
    assert_eq!(rng.next_u64(), 487617019471545679);
}

const RA: [f64; 6] = [100.0, 104.0, 98.0, 101.0, 99.0, 103.0];
const RB: [f64; 6] = [200.0, 198.0, 205.0, 199.0, 202.0, 201.0];

#[test]
fn paired_ratio_bootstrap_matches_reference() {
    let r = paired_ratio(&RA, &RB, BOOTSTRAP_SEED);
    close(r.median, 0.5037688442211055, 1e-14);
    close(r.ci95.0, 0.4840738951943975, 1e-12);
    close(r.ci95.1, 0.5188451680988995, 1e-12);
    assert_eq!(r.verdict(), Some(true));
    // Deterministic: same input, same seed, same interval.
    assert_eq!(paired_ratio(&RA, &RB, BOOTSTRAP_SEED), r);
}

#[test]
fn unpaired_ratio_bootstrap_matches_reference() {
    let r = unpaired_ratio(&RA, &RB, BOOTSTRAP_SEED);
    close(r.median, 0.5012468827930174, 1e-14);
    close(r.ci95.0, 0.4900497512437811, 1e-12);
    close(r.ci95.1, 0.5162907268170426, 1e-12);
}

#[test]
fn verdicts() {
    let tie = RatioEstimate { median: 1.01, ci95: (0.97, 1.05) };
    assert_eq!(tie.verdict(), None);
    let lose = RatioEstimate { median: 1.3, ci95: (1.2, 1.4) };
    assert_eq!(lose.verdict(), Some(false));
    let constant = paired_ratio(&[2.0; 5], &[1.0; 5], 1);
    assert_eq!((constant.median, constant.ci95), (2.0, (2.0, 2.0)));
}

#[test]
fn welch_matches_scipy() {
    let w = welch_t_test(&A, &B).unwrap();
    close(w.t, -4.153917358086369, 1e-12);
    close(w.df, 9.870169090609838, 1e-12);
    close(w.p, 0.0020237007990573253, 1e-9);
    let w = welch_t_test(&[1.0, 2.0, 3.0, 4.0], &[1.5, 2.5, 3.5, 4.5, 5.5, 6.5]).unwrap();
    close(w.t, -1.5000000000000002, 1e-12);
    close(w.df, 7.941176470588236, 1e-12);
    close(w.p, 0.17227907729130926, 1e-9);
    assert!(welch_t_test(&[1.0], &B).is_none());
    assert_eq!(welch_t_test(&[2.0, 2.0], &[2.0, 2.0]).unwrap().p, 1.0);
}

#[test]
fn special_functions_match_scipy() {
    for (x, want) in
        [(0.5, 0.5723649429247), (2.5, 0.2846828704729192), (10.0, 12.801827480081469), (0.1, 2.252712651734206)]
    {
        close(ln_gamma(x), want, 1e-13);
    }
    assert!(ln_gamma(1.0).abs() < 1e-14);
    for (a, b, x, want) in [
        (2.0, 3.0, 0.4, 0.5247999999999999),
        (0.5, 0.5, 0.9, 0.7951672353008665),
        (5.0, 0.5, 0.7, 0.0652622461689081),
        (10.0, 0.5, 0.99, 0.6579281751567845),
    ] {
        close(regularized_incomplete_beta(a, b, x), want, 1e-11);
    }
}
