//! Statistics over samples: pure functions, no I/O.

pub mod ceiling;
pub mod connect;
pub mod contenders;
pub mod echo;
mod grouping;
pub mod moderate;
mod rank;
mod rekey;
pub mod streams;
mod suites;
pub mod sums;
pub mod typing;
pub mod workload;

pub use echo::echo_median;
pub use grouping::{aggregate_reported, mark_payload, mark_suite};
pub use rank::{Marginal, Ranked, marginals, not_distinguishable, rank};
pub use suites::{
    Bound, ChannelWindow, PathWindow, SATURATED, SuiteStats, WINDOW_MARGIN, aggregate, busy,
    figure, mark_tcp, mark_windows, path_rtt,
};

use crate::model::Mode;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Summary of one series of figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (0 for one value).
    pub sd: f64,
    /// Half-width of the 95% Student-t confidence interval of the mean; `None` below
    /// two values.
    pub ci95: Option<f64>,
    /// Values outside Tukey's fences (1.5 × IQR beyond the quartiles); needs 4 values.
    pub outliers: usize,
}

impl Summary {
    /// CI half-width relative to the mean (e.g. 0.02 = ±2%).
    pub fn relative_ci(&self) -> Option<f64> {
        let ci = self.ci95?;
        (self.mean != 0.0).then(|| ci / self.mean.abs())
    }
}

/// The finite values of `xs`, sorted; `None` when there are none.
fn sorted_finite(xs: &[f64]) -> Option<Vec<f64>> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then_some(v)
}

/// Summarize `xs` (finite values only); `None` when empty.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let v = sorted_finite(xs)?;
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let median = middle(&v);
    let sd = if n > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let ci95 = (n > 1).then(|| t975(n - 1) * sd / (n as f64).sqrt());
    let outliers = if n >= 4 {
        let (q1, q3) = (quantile(&v, 0.25), quantile(&v, 0.75));
        let iqr = q3 - q1;
        v.iter()
            .filter(|&&x| x < q1 - 1.5 * iqr || x > q3 + 1.5 * iqr)
            .count()
    } else {
        0
    };
    Some(Summary {
        n,
        mean,
        median,
        min: v[0],
        max: v[n - 1],
        sd,
        ci95,
        outliers,
    })
}

/// Summarize rates of equal work (a transfer's windows are sized in bytes): the mean is
/// their harmonic mean, the rate of their total, which a long transfer meets; the mean
/// of the rates would overstate it by about their squared coefficient of variation.
/// Spread and interval come from the seconds per byte, carried back to the rate (delta
/// method); median, extremes and outliers are the rates' own.
pub fn summarize_rates(rates: &[f64]) -> Option<Summary> {
    let plain = summarize(rates)?;
    let per_byte: Vec<f64> = (rates.iter())
        .filter(|r| r.is_finite() && **r > 0.0)
        .map(|r| 1.0 / r)
        .collect();
    if per_byte.len() != plain.n {
        return Some(plain);
    }
    // A whole summary, sorted, though only its moments are used: summed in sorted order
    // the figure does not depend on the samples' order, to the last bit.
    let inverse = summarize(&per_byte)?;
    let mean = 1.0 / inverse.mean;
    let scale = mean * mean;
    Some(Summary {
        mean,
        sd: inverse.sd * scale,
        ci95: inverse.ci95.map(|c| c * scale),
        ..plain
    })
}

/// Summarize one suite's figures in `mode`: rates by [`summarize_rates`], times and
/// ratios as they are.
pub fn summarize_figures(mode: Mode, xs: &[f64]) -> Option<Summary> {
    if mode.is_throughput() {
        summarize_rates(xs)
    } else {
        summarize(xs)
    }
}

/// Linear-interpolation quantile of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Percentiles of a pool of values (nearest-rank on the sorted pool).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Percentiles {
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// Percentiles of `xs` (finite values only); `None` when empty.
pub fn percentiles(xs: &[f64]) -> Option<Percentiles> {
    percentiles_of(xs.to_vec())
}

/// [`percentiles`] of values it may reorder: each rank is selected, not sorted for
/// (echo pools every keystroke of a suite, tens of thousands).
pub fn percentiles_of(mut v: Vec<f64>) -> Option<Percentiles> {
    v.retain(|x| x.is_finite());
    let n = v.len();
    if n == 0 {
        return None;
    }
    // Nearest rank: the smallest value with at least p% of the pool at or below it.
    let rank = |p: f64| ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
    let mut at = [0.0; 3];
    // From the highest rank down: each selection leaves the lower ones to its left.
    let mut upper = n;
    for (slot, p) in [(2, 0.99), (1, 0.90), (0, 0.50)] {
        let k = rank(p);
        let (_, x, _) = v[..upper].select_nth_unstable_by(k, f64::total_cmp);
        at[slot] = *x;
        upper = k + 1;
    }
    Some(Percentiles {
        n,
        p50: at[0],
        p90: at[1],
        p99: at[2],
        max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Whether higher figures are better in this mode (throughput) or lower (time).
pub fn higher_is_better(mode: Mode) -> bool {
    mode.is_throughput()
}

/// Two-sided p-value of Welch's t-test for a difference of means; `None` when either
/// side has fewer than two values or both have no spread.
pub fn welch_p(a: &Summary, b: &Summary) -> Option<f64> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.sd * a.sd / a.n as f64, b.sd * b.sd / b.n as f64);
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return (a.mean == b.mean).then_some(1.0).or(Some(0.0));
    }
    let t = (a.mean - b.mean) / se;
    let df = (va + vb).powi(2) / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(2.0 * (1.0 - dist.cdf(t.abs())))
}

/// Student's t at 97.5% for `df` degrees of freedom (the 95% interval's factor). The
/// inverse CDF is an iterative solve; reports need it once per suite and figure, so the
/// small `df` that samples have are computed once.
pub(crate) fn t975(df: usize) -> f64 {
    const CACHED: usize = 256;
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let solve = |df: usize| {
        StudentsT::new(0.0, 1.0, df as f64)
            .expect("valid degrees of freedom")
            .inverse_cdf(0.975)
    };
    match TABLE
        .get_or_init(|| (1..=CACHED).map(solve).collect())
        .get(df.wrapping_sub(1))
    {
        Some(t) => *t,
        None => solve(df),
    }
}

/// The median of the finite values of `v` (which it reorders); `None` when there are
/// none. By selection, not a sort: a report takes one for each of 25,000 echo sessions.
pub fn median(v: &mut [f64]) -> Option<f64> {
    let mut finite = 0;
    for i in 0..v.len() {
        if v[i].is_finite() {
            v.swap(finite, i);
            finite += 1;
        }
    }
    let v = &mut v[..finite];
    let n = v.len();
    if n == 0 {
        return None;
    }
    let (below, &mut upper, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    Some(if n % 2 == 1 {
        upper
    } else {
        (below.iter().copied().fold(f64::NEG_INFINITY, f64::max) + upper) / 2.0
    })
}

/// The middle of sorted, non-empty `v`.
fn middle(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CpuWindow;

    #[test]
    fn one_value_has_no_interval() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.sd, s.ci95),
            (1, 5.0, 5.0, 0.0, None)
        );
        assert_eq!(s.relative_ci(), None);
    }

    /// Windows of equal bytes at 100 and 50 bytes/s move 2 bytes in 0.03 s: 66.7/s, not
    /// the 75 of the rates' mean; the interval is the seconds per byte's, as wide
    /// relative to the figure; median and extremes are the rates'.
    #[test]
    fn rates_summarize_as_the_rate_of_their_total() {
        let r = summarize_rates(&[100.0, 50.0, 80.0]).unwrap();
        let per_byte = summarize(&[0.01, 0.02, 0.0125]).unwrap();
        assert!((r.mean - 1.0 / per_byte.mean).abs() < 1e-9, "{}", r.mean);
        assert!((r.relative_ci().unwrap() - per_byte.relative_ci().unwrap()).abs() < 1e-12);
        assert!((r.sd / r.mean - per_byte.sd / per_byte.mean).abs() < 1e-12);
        assert_eq!((r.n, r.median, r.min, r.max), (3, 80.0, 50.0, 100.0));
        let two = summarize_rates(&[100.0, 50.0]).unwrap();
        assert!((two.mean - 200.0 / 3.0).abs() < 1e-9, "{}", two.mean);
        // A rate that is no rate (zero) leaves the plain mean.
        assert_eq!(summarize_rates(&[0.0, 50.0]).unwrap().mean, 25.0);
    }

    /// Throughput suites take the rate of the total; connect's seconds and echo's ratios
    /// their plain mean.
    #[test]
    fn only_rates_are_summarized_by_their_total() {
        let xs = [100.0, 50.0];
        for mode in [Mode::Send, Mode::Receive] {
            let s = summarize_figures(mode, &xs).unwrap();
            assert!((s.mean - 200.0 / 3.0).abs() < 1e-9, "{mode:?}");
        }
        for mode in [Mode::Connect, Mode::Echo] {
            assert_eq!(summarize_figures(mode, &xs).unwrap().mean, 75.0, "{mode:?}");
        }
    }

    #[test]
    fn identical_values_have_a_zero_interval() {
        let s = summarize(&[2.0, 2.0, 2.0]).unwrap();
        assert_eq!(s.ci95, Some(0.0));
        assert_eq!(s.relative_ci(), Some(0.0));
    }

    /// The selection gives what sorting gives: the middle value, or the mean of the two
    /// middle ones, of the finite values only, whatever their order.
    #[test]
    fn median_by_selection_is_the_sorted_middle_of_the_finite_values() {
        let mut rng = fastrand::Rng::with_seed(7);
        for n in 0..40 {
            let mut v: Vec<f64> = (0..n).map(|_| rng.f64() * 10.0 - 5.0).collect();
            if n % 3 == 0 {
                v.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
                rng.shuffle(&mut v);
            }
            let mut sorted: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
            sorted.sort_by(f64::total_cmp);
            let want = (!sorted.is_empty()).then(|| middle(&sorted));
            assert_eq!(median(&mut v), want, "{n} values");
        }
        assert_eq!(median(&mut [3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(&mut [f64::NAN, 4.0]), Some(4.0));
    }

    #[test]
    fn nearest_rank_percentiles() {
        // 1..=100: p50 = 50, p90 = 90, p99 = 99 (nearest rank), max 100.
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let p = percentiles(&v).unwrap();
        assert_eq!(
            (p.n, p.p50, p.p90, p.p99, p.max),
            (100, 50.0, 90.0, 99.0, 100.0)
        );
        // One slow keystroke in ten: visible at p90 and p99, not at p50.
        let mut v = vec![1.0; 9];
        v.push(7.0);
        let p = percentiles(&v).unwrap();
        assert_eq!((p.p50, p.p90, p.p99), (1.0, 1.0, 7.0));
        assert_eq!(percentiles(&[3.0]).unwrap().p99, 3.0);
        assert_eq!(percentiles(&[f64::NAN]), None);
    }

    #[test]
    fn student_t_interval() {
        // n = 4, mean 2.5, sd = 1.2910; t(0.975, 3) = 3.1824 → half-width 2.0543.
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((s.mean - 2.5).abs() < 1e-12);
        assert!((s.median - 2.5).abs() < 1e-12);
        assert!((s.ci95.unwrap() - 2.0543).abs() < 1e-3, "{:?}", s.ci95);
    }

    fn window(peak_ticks: u32, limit: Option<f64>, throttled: Option<f64>) -> CpuWindow {
        CpuWindow {
            limit,
            throttled,
            ..CpuWindow::of(
                f64::from(peak_ticks) / 100.0,
                std::time::Duration::from_millis(200),
                1 << 20,
            )
        }
    }

    fn assert_close(got: Option<f64>, want: f64) {
        assert!(
            got.is_some_and(|g| (g - want).abs() < 1e-9),
            "{got:?} != {want}"
        );
    }

    #[test]
    fn processes_that_fill_the_cores_they_may_use_are_saturated() {
        // sshd 0.8 of a core and its `wc` 0.2, both confined to one CPU: the CPU is full,
        // though no process fills it alone.
        let mut w = window(16, None, None);
        w.seconds = 0.2;
        assert_close(w.busy(), 0.8);
        w.cores = Some(1.0);
        assert_close(w.busy(), 1.0);
        assert_close(busy(&[w, w]), 1.0);
        // The same processes with two CPUs to run on: the busiest one is what counts.
        w.cores = Some(2.0);
        assert_close(w.busy(), 0.8);
        // A quota caps the set: 1.25 cores of CPU time fill 1.25 cores of quota.
        w.seconds = 0.25;
        w.limit = Some(1.25);
        assert_close(w.busy(), 1.0);
        // The client: ssh 0.8 and sshbench's feeder thread 0.2 on one CPU.
        let mut c = window(16, None, None);
        c.cores = Some(1.0);
        c.feeder = Some(0.04);
        assert_close(c.busy(), 1.0);
        // One window whose set is unknown: pooled, only the busiest process counts.
        let mut unknown = c;
        unknown.cores = None;
        assert_close(busy(&[c, unknown]), 0.8);
    }

    #[test]
    fn waiting_for_a_cpu_counts_as_wanting_one() {
        // sshd ran half of the window and waited for its core the other half (another
        // process had it): it wanted a whole core.
        let mut w = window(10, None, None);
        assert_eq!(w.busy(), Some(0.5));
        w.waited = Some(0.1);
        assert_eq!(w.busy(), Some(1.0));
        assert_eq!(busy(&[w, w]), Some(1.0));
    }

    #[test]
    fn busy_pools_windows_against_tick_rounding() {
        // A process saturated at ~0.9 of a core over three 200 ms windows, read in 10 ms
        // ticks: 16, 16 and 22 ticks. Each window alone says 0.8, 0.8, 1.1; the median
        // (0.8) would call it unsaturated, the pooled figure (54 of 60 ticks) does not.
        let w = [
            window(16, None, None),
            window(16, None, None),
            window(22, None, None),
        ];
        assert!((busy(&w).unwrap() - 0.9).abs() < 1e-9);
        assert!(busy(&w).unwrap() >= SATURATED);
        let mut each: Vec<f64> = w.iter().filter_map(CpuWindow::busy).collect();
        assert!(median(&mut each).unwrap() < SATURATED);
        // An idle side stays idle; no windows, no figure.
        assert!(busy(&[window(2, None, None), window(3, None, None)]).unwrap() < 0.2);
        assert_eq!(busy(&[]), None);
    }

    #[test]
    fn busy_under_an_enforced_quota_is_the_median_of_throttling() {
        // A quarter core, throttled in 60%, 10% and 70% of its periods: each window says
        // min(1, 2 × throttled) or its CPU over the quota, whichever is more.
        let w = [
            window(5, Some(0.25), Some(0.6)),
            window(1, Some(0.25), Some(0.1)),
            window(5, Some(0.25), Some(0.7)),
        ];
        assert_eq!(busy(&w), Some(1.0));
        let w = [
            window(1, Some(0.25), Some(0.1)),
            window(1, Some(0.25), Some(0.2)),
        ];
        assert!((busy(&w).unwrap() - 0.3).abs() < 1e-9);
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[f64::NAN]), None);
        assert_eq!(summarize(&[f64::INFINITY, 1.0]).unwrap().n, 1);
    }
}
