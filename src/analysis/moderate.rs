//! Moderated intervals: each suite's spread borrows strength from the other suites of its
//! mode, as an empirical-Bayes variance (Smyth 2004, the "moderated t" of limma).
//!
//! A suite has few samples (three in a first pass), so its own standard deviation is a
//! poor estimate and Student's t for two degrees of freedom (4.30) makes its interval
//! wide. The suites of one mode on one machine share most of their noise (a sample's
//! relative spread is about the same for a slow and a fast cipher), so the relative
//! variances of all of them tell more about each one's than its own three figures do.
//! Their distribution fits a scaled inverse chi-square prior (d0 degrees of freedom
//! around s0²), estimated from the data; each suite's variance is then the weighted mean
//! (d0·s0² + d·s²) / (d0 + d), with d0 + d degrees of freedom. Suites whose spreads
//! differ widely give a small d0, and each keeps close to its own; a mode of suites with
//! one common spread gives a large d0. The interval is still Student's t around the
//! mean, never narrower than the data allow: bench/results/notebook.md ("Moderated intervals")
//! checks its coverage.

use super::{SuiteStats, Summary, t975};
use statrs::function::gamma::digamma;

/// The prior: degrees of freedom and relative variance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prior {
    pub d0: f64,
    pub s0_squared: f64,
}

/// A prior this sure is as good as one common variance (t is 1.97 there).
const MAX_D0: f64 = 200.0;
/// Suites with a spread of their own needed to estimate a prior.
const MIN_SUITES: usize = 3;

/// ψ₁, the trigamma function, for x > 0: the recurrence up to 6, then the asymptotic
/// series.
fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let x2 = 1.0 / (x * x);
    acc + 1.0 / x
        + x2 / 2.0
        + (1.0 / x) * x2 * (1.0 / 6.0 - x2 * (1.0 / 30.0 - x2 * (1.0 / 42.0 - x2 / 30.0)))
}

/// The x > 0 with ψ₁(x) = y (ψ₁ falls monotonically): bisection on a log scale.
fn trigamma_inverse(y: f64) -> f64 {
    let (mut lo, mut hi) = (1e-8_f64.ln(), 1e8_f64.ln());
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if trigamma(mid.exp()) > y {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    ((lo + hi) / 2.0).exp()
}

/// The prior fitted to relative variances `s2` with `d` degrees of freedom each
/// (Smyth's moments of log s²); `None` below [`MIN_SUITES`] usable suites.
pub fn fit(s2: &[f64], d: &[f64]) -> Option<Prior> {
    let usable: Vec<(f64, f64)> = (s2.iter().zip(d))
        .filter(|(s, d)| **s > 0.0 && s.is_finite() && **d > 0.0)
        .map(|(s, d)| (*s, *d))
        .collect();
    let n = usable.len();
    if n < MIN_SUITES {
        return None;
    }
    let e: Vec<f64> = (usable.iter())
        .map(|(s, d)| s.ln() - digamma(d / 2.0) + (d / 2.0).ln())
        .collect();
    let mean = e.iter().sum::<f64>() / n as f64;
    let var = e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        - usable.iter().map(|(_, d)| trigamma(d / 2.0)).sum::<f64>() / n as f64;
    if var <= 0.0 {
        // No more scatter than sampling alone makes: one common variance.
        return Some(Prior {
            d0: MAX_D0,
            s0_squared: mean.exp(),
        });
    }
    let d0 = (2.0 * trigamma_inverse(var)).min(MAX_D0);
    Some(Prior {
        d0,
        s0_squared: (mean + digamma(d0 / 2.0) - (d0 / 2.0).ln()).exp(),
    })
}

/// A relative spread: the coefficient of variation of a summary's values.
fn relative_variance(s: &Summary) -> Option<f64> {
    (s.n > 1 && s.mean > 0.0).then(|| (s.sd / s.mean).powi(2))
}

/// The prior of a set of summaries.
pub fn prior_of<'a>(summaries: impl Iterator<Item = &'a Summary>) -> Option<Prior> {
    let (s2, d): (Vec<f64>, Vec<f64>) = summaries
        .filter_map(|s| Some((relative_variance(s)?, (s.n - 1) as f64)))
        .unzip();
    fit(&s2, &d)
}

/// `s` with its 95% interval from the moderated variance: one figure gets the prior's
/// spread and degrees of freedom. The degrees of freedom are rounded down.
pub fn apply(s: &Summary, prior: &Prior) -> Summary {
    if s.mean <= 0.0 {
        return *s;
    }
    let d = (s.n - 1) as f64;
    let own = relative_variance(s).unwrap_or(0.0);
    let post = (prior.d0 * prior.s0_squared + d * own) / (prior.d0 + d);
    let df = ((prior.d0 + d).floor() as usize).max(1);
    Summary {
        ci95: Some(t975(df) * s.mean * post.sqrt() / (s.n as f64).sqrt()),
        ..*s
    }
}

/// Moderate the figures of every measured suite, mode by mode (summed rows are built
/// from moderated parts, never moderated themselves).
pub fn moderate(stats: &mut [SuiteStats]) {
    let mut modes: Vec<crate::model::Mode> = stats.iter().map(|s| s.mode).collect();
    modes.sort();
    modes.dedup();
    for mode in modes {
        let of_mode = |s: &&mut SuiteStats| s.mode == mode && !s.sum;
        let prior = prior_of(
            stats
                .iter()
                .filter(|s| s.mode == mode && !s.sum)
                .filter_map(|s| s.figure.as_ref()),
        );
        let Some(prior) = prior else { continue };
        for s in stats.iter_mut().filter(of_mode) {
            s.figure = s.figure.map(|f| apply(&f, &prior));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summarize;

    #[test]
    fn trigamma_and_its_inverse() {
        // ψ₁(1) = π²/6, ψ₁(1/2) = π²/2.
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-9);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-9);
        assert!((trigamma(20.0) - 0.051_270_822_935_203_12).abs() < 1e-12);
        for x in [0.05, 1.0, 3.7, 250.0] {
            assert!(
                (trigamma_inverse(trigamma(x)) / x - 1.0).abs() < 1e-9,
                "{x}"
            );
        }
    }

    /// Sample variances of three figures each (two degrees of freedom: σ²·χ²₂/2, an
    /// exponential), at evenly spaced quantiles, each times `scatter[i]`.
    fn variances(sigma: f64, scatter: &[f64]) -> Vec<f64> {
        let n = scatter.len() as f64;
        (scatter.iter().enumerate())
            .map(|(i, k)| k * sigma * sigma * -(1.0 - (i as f64 + 0.5) / n).ln())
            .collect()
    }

    #[test]
    fn the_prior_follows_how_much_spreads_differ() {
        let d = vec![2.0; 8];
        // One common spread of 10%: no more scatter than sampling makes.
        let alike = variances(0.1, &[1.0; 8]);
        let p = fit(&alike, &d).unwrap();
        assert_eq!(p.d0, MAX_D0, "{p:?}");
        assert!((p.s0_squared.sqrt() - 0.1).abs() < 0.01, "{p:?}");
        // Suites whose own spreads differ up to 30-fold: a weak prior.
        let wild = variances(0.1, &[30.0, 0.1, 5.0, 0.2, 1.0, 10.0, 0.05, 3.0]);
        let q = fit(&wild, &d).unwrap();
        assert!(q.d0 < 3.0, "{q:?}");
        // Between the two: a prior worth a few figures.
        let some = variances(0.1, &[4.0, 0.25, 3.0, 0.3, 1.0, 2.5, 0.4, 1.5]);
        let r = fit(&some, &d).unwrap();
        assert!(r.d0 > q.d0 && r.d0 < MAX_D0, "{r:?}");
        assert_eq!(fit(&alike[..2], &d[..2]), None, "too few suites");
        assert_eq!(fit(&[0.0, 0.0, 0.0], &[2.0; 3]), None, "no spread at all");
    }

    #[test]
    fn a_moderated_interval_borrows_spread_and_degrees_of_freedom() {
        let s = summarize(&[100.0, 110.0, 90.0]).unwrap();
        let own = s.ci95.unwrap();
        // Ten suites agreeing on 10%: t for ~202 degrees of freedom around s0.
        let sure = Prior {
            d0: MAX_D0,
            s0_squared: 0.01,
        };
        let m = apply(&s, &sure).ci95.unwrap();
        let expected = t975(202) * 100.0 * 0.1 / 3f64.sqrt();
        assert!((m - expected).abs() < 0.05, "{m} vs {expected}");
        assert!(m < own / 2.0, "{m} vs {own}");
        // One figure gets the prior's interval.
        let one = apply(&summarize(&[100.0]).unwrap(), &sure);
        assert!((one.ci95.unwrap() - t975(200) * 10.0).abs() < 0.05);
        // A weak prior leaves a noisy suite close to its own spread.
        let weak = Prior {
            d0: 1.0,
            s0_squared: 0.0001,
        };
        let noisy = summarize(&[100.0, 140.0, 60.0]).unwrap();
        let w = apply(&noisy, &weak).ci95.unwrap();
        assert!(w > noisy.ci95.unwrap() * 0.5, "{w} vs {:?}", noisy.ci95);
    }
}
