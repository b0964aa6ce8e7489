//! Statistics over samples: pure functions, no I/O.

use crate::model::{CpuWindow, Mode, Outcome, PayloadKind, Phases, Rekey, Sample, Suite};
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
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let sd = if n > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let ci95 = (n > 1).then(|| {
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .expect("valid degrees of freedom")
            .inverse_cdf(0.975);
        t * sd / (n as f64).sqrt()
    });
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
    let v = sorted_finite(xs)?;
    let n = v.len();
    // Nearest rank: the smallest value with at least p% of the pool at or below it.
    let at = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
    Some(Percentiles {
        n,
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        max: v[n - 1],
    })
}

/// Whether higher figures are better in this mode (throughput) or lower (time).
pub fn higher_is_better(mode: Mode) -> bool {
    mode.is_transfer()
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

/// A suite's place in its mode's ranking.
#[derive(Clone, Debug)]
pub struct Ranked {
    pub stats: SuiteStats,
    /// 1 = best.
    pub rank: usize,
    /// Its 95% interval overlaps the best suite's: not distinguishable from the best.
    pub tie_with_best: bool,
}

/// The interval `[mean - ci, mean + ci]` (a point without a CI).
fn interval(s: &Summary) -> (f64, f64) {
    let ci = s.ci95.unwrap_or(0.0);
    (s.mean - ci, s.mean + ci)
}

/// Rank the measured suites of one mode by mean, best first; unmeasured ones last.
pub fn rank(stats: &[SuiteStats], mode: Mode) -> Vec<Ranked> {
    let mut rows: Vec<&SuiteStats> = stats.iter().filter(|s| s.mode == mode).collect();
    let key = |s: &SuiteStats| match s.figure {
        Some(f) if higher_is_better(mode) => -f.mean,
        Some(f) => f.mean,
        None => f64::INFINITY,
    };
    rows.sort_by(|a, b| {
        key(a)
            .total_cmp(&key(b))
            .then_with(|| a.suite.cmp(&b.suite))
    });
    let best = rows.first().and_then(|s| s.figure).map(|f| interval(&f));
    rows.into_iter()
        .enumerate()
        .map(|(i, s)| {
            let tie = match (best, s.figure) {
                (Some((lo, hi)), Some(f)) => {
                    let (a, b) = interval(&f);
                    a <= hi && b >= lo
                }
                _ => false,
            };
            Ranked {
                stats: s.clone(),
                rank: i + 1,
                tie_with_best: tie,
            }
        })
        .collect()
}

/// One algorithm's effect: the figures of the suites that use it.
#[derive(Clone, Debug, PartialEq)]
pub struct Marginal {
    pub name: String,
    /// Median over its suites of each suite's mean.
    pub median: f64,
    /// Its best suite's mean.
    pub best: f64,
    pub suites: usize,
}

/// The marginal effect of each algorithm of `kind` in `mode`, best first. For MACs only
/// suites with an explicit MAC count (an AEAD cipher ignores it).
pub fn marginals(stats: &[SuiteStats], mode: Mode, kind: crate::model::AlgoKind) -> Vec<Marginal> {
    let mut groups: Vec<(String, Vec<f64>)> = Vec::new();
    for s in stats.iter().filter(|s| s.mode == mode) {
        let (Some(name), Some(f)) = (s.suite.get(kind), s.figure) else {
            continue;
        };
        match groups.iter_mut().find(|g| g.0 == name) {
            Some(g) => g.1.push(f.mean),
            None => groups.push((name.to_string(), vec![f.mean])),
        }
    }
    let hib = higher_is_better(mode);
    let mut out: Vec<Marginal> = groups
        .into_iter()
        .map(|(name, v)| {
            let s = summarize(&v).expect("non-empty");
            Marginal {
                name,
                median: s.median,
                best: if hib { s.max } else { s.min },
                suites: s.n,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let o = a.median.total_cmp(&b.median);
        if hib { o.reverse() } else { o }
    });
    out
}

/// Everything known about one suite in one mode.
#[derive(Clone, Debug)]
pub struct SuiteStats {
    pub mode: Mode,
    pub suite: Suite,
    pub ok: usize,
    pub failed: usize,
    pub refused: bool,
    /// Connect: seconds. Send/receive: bytes per second. Echo: each session's median
    /// round trip, seconds.
    pub figure: Option<Summary>,
    /// Echo: percentiles over every timed keystroke of every session.
    pub echo: Option<Percentiles>,
    /// Client CPU seconds per GB moved (transfers: over the steady window where the OS
    /// tells, else the whole process) or per connection (connect).
    pub client_cpu: Option<Summary>,
    /// Server session CPU seconds per GB moved, where the server tells.
    pub server_cpu: Option<Summary>,
    /// Busy fraction of one core during transfers (1.0 = saturated): see [`busy`].
    pub client_busy: Option<f64>,
    pub server_busy: Option<f64>,
    /// Connect: median time of each phase.
    pub phases: Option<Phases>,
    /// Median compressed/raw ratio with compression.
    pub compression_factor: Option<f64>,
    /// Transfers: the rekeying spread into the figure (the shortest interval seen, the
    /// median stall), where the samples recorded it.
    pub rekey: Option<Rekey>,
    /// Median bytes per transfer sample.
    pub bytes: u64,
    /// The last failure or refusal message.
    pub last_error: Option<String>,
}

/// Which side limits a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    /// The ssh client saturates a core.
    Client,
    /// The server's sshd saturates a core.
    Server,
    Both,
    /// Neither side's CPU is saturated: the network or flow control limits.
    Network,
    /// Not enough is known (the server does not expose its CPU).
    Unknown,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Client => "client CPU",
            Bound::Server => "server CPU",
            Bound::Both => "both CPUs",
            Bound::Network => "network/window",
            Bound::Unknown => "?",
        }
    }
}

/// A side counts as the bottleneck when its busiest process uses this much of a core.
pub const SATURATED: f64 = 0.85;

impl SuiteStats {
    /// The bottleneck of a transfer suite, from the busy fractions.
    pub fn bound(&self) -> Option<Bound> {
        if !self.mode.is_transfer() || self.figure.is_none() {
            return None;
        }
        let c = self.client_busy.map(|b| b >= SATURATED);
        let s = self.server_busy.map(|b| b >= SATURATED);
        Some(match (c, s) {
            (Some(true), Some(true)) => Bound::Both,
            (Some(true), _) => Bound::Client,
            (_, Some(true)) => Bound::Server,
            (Some(false), Some(false)) => Bound::Network,
            _ => Bound::Unknown,
        })
    }
}

/// How saturated a side is over a suite's samples (1.0 = a core fully used). CPU times
/// come in clock ticks (10 ms on most systems), so one 200 ms window is only good to a
/// tick or two: a saturated process can read 0.85 in one window and 0.95 in the next.
/// The windows are therefore pooled (all the busiest process's CPU over all the time),
/// which averages the rounding out. Under an enforced quota each window's own figure
/// (from its throttled periods) is used, and the median of those.
pub fn busy(windows: &[CpuWindow]) -> Option<f64> {
    if windows
        .iter()
        .any(|w| w.limit.is_some_and(|l| l < 1.0) && w.throttled.is_some())
    {
        let mut each: Vec<f64> = windows.iter().filter_map(CpuWindow::busy).collect();
        return median(&mut each);
    }
    let time: f64 = windows.iter().map(|w| w.interval.as_secs_f64()).sum();
    let cpu: f64 = windows.iter().map(|w| w.peak).sum();
    (time > 0.0).then(|| cpu / time)
}

fn median(v: &mut [f64]) -> Option<f64> {
    summarize(v).map(|s| s.median)
}

/// The figure a sample is ranked by: seconds for connect, bytes/s for transfers, the
/// A compressed transfer's figure depends on the data (text shrinks several times,
/// random data not at all), so one measured on other data than the default random is a
/// suite of its own in reports: its compression reads `zlib@openssh.com, text data`.
/// Reports over runs with different `--payload`s then never pool the two. Uncompressed
/// suites are left as they are: the data does not change what a cipher costs.
pub fn mark_payload(sample: &mut Sample, payload: PayloadKind) {
    let data = match payload {
        PayloadKind::Random => return,
        PayloadKind::Text => "text",
        PayloadKind::Zeros => "zeros",
    };
    if sample.mode.is_transfer()
        && let Some(c) = &mut sample.suite.compression
    {
        *c = format!("{c}, {data} data");
    }
}

/// [`aggregate`] over samples as reports group them: each with the payload its run
/// carried (see [`mark_payload`]).
pub fn aggregate_reported<'a>(
    samples: impl IntoIterator<Item = (&'a Sample, PayloadKind)>,
) -> Vec<SuiteStats> {
    let marked: Vec<Sample> = samples
        .into_iter()
        .map(|(s, payload)| {
            let mut s = s.clone();
            mark_payload(&mut s, payload);
            s
        })
        .collect();
    aggregate(&marked)
}

/// Echo: the median round trip of a session, in seconds.
pub fn echo_median(s: &Sample) -> Option<f64> {
    if !s.outcome.is_success() {
        return None;
    }
    summarize(&s.echoes).map(|s| s.median)
}

/// median round trip (seconds) for echo.
pub fn figure(s: &Sample) -> Option<f64> {
    if !s.outcome.is_success() {
        return None;
    }
    match s.mode {
        Mode::Connect => Some(s.wall.as_secs_f64()),
        Mode::Echo => echo_median(s),
        Mode::Send | Mode::Receive => s.throughput(),
    }
}

/// Group samples by (mode, suite), in the order suites first appear.
pub fn aggregate<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Vec<SuiteStats> {
    let mut groups: Vec<(Mode, &Suite, Vec<&Sample>)> = Vec::new();
    let mut index: std::collections::HashMap<(Mode, &Suite), usize> =
        std::collections::HashMap::new();
    for s in samples {
        match index.get(&(s.mode, &s.suite)) {
            Some(&i) => groups[i].2.push(s),
            None => {
                index.insert((s.mode, &s.suite), groups.len());
                groups.push((s.mode, &s.suite, vec![s]));
            }
        }
    }
    groups
        .into_iter()
        .map(|(mode, suite, list)| {
            let figures: Vec<f64> = list.iter().filter_map(|s| figure(s)).collect();
            let good: Vec<&&Sample> = list.iter().filter(|s| s.outcome.is_success()).collect();
            let cpu: Vec<f64> = good
                .iter()
                .filter_map(|s| match (mode, s.client_window_cpu) {
                    (Mode::Connect, _) => Some(s.client_cpu?.total().as_secs_f64()),
                    (Mode::Echo, _) => None,
                    (_, Some(w)) => w.per_gb(),
                    _ => {
                        let c = s.client_cpu?.total().as_secs_f64();
                        (s.bytes > 0).then(|| c / s.bytes as f64 * 1e9)
                    }
                })
                .collect();
            let server: Vec<f64> = good.iter().filter_map(|s| s.server_cpu?.per_gb()).collect();
            let client_windows: Vec<CpuWindow> =
                good.iter().filter_map(|s| s.client_window_cpu).collect();
            let server_windows: Vec<CpuWindow> = good.iter().filter_map(|s| s.server_cpu).collect();
            let mut factors: Vec<f64> = good.iter().filter_map(|s| s.compression_factor).collect();
            let phase_list: Vec<Phases> = good.iter().filter_map(|s| s.phases).collect();
            let phases = (!phase_list.is_empty()).then(|| {
                let m = |f: fn(&Phases) -> f64| {
                    let mut v: Vec<f64> = phase_list.iter().map(f).collect();
                    median(&mut v).unwrap_or(0.0)
                };
                Phases {
                    tcp: m(|p| p.tcp),
                    version: m(|p| p.version),
                    kex: m(|p| p.kex),
                    auth: m(|p| p.auth),
                    session: m(|p| p.session),
                }
            });
            let mut bytes: Vec<u64> = list
                .iter()
                .filter(|s| s.outcome.is_success())
                .map(|s| s.bytes)
                .collect();
            bytes.sort();
            SuiteStats {
                mode,
                suite: suite.clone(),
                ok: list.iter().filter(|s| s.outcome.is_success()).count(),
                failed: list
                    .iter()
                    .filter(|s| matches!(s.outcome, Outcome::Failed { .. }))
                    .count(),
                refused: list
                    .iter()
                    .any(|s| matches!(s.outcome, Outcome::Refused { .. })),
                figure: summarize(&figures),
                echo: percentiles(
                    &good
                        .iter()
                        .flat_map(|s| s.echoes.iter().copied())
                        .collect::<Vec<_>>(),
                ),
                client_cpu: summarize(&cpu),
                server_cpu: summarize(&server),
                client_busy: busy(&client_windows),
                server_busy: busy(&server_windows),
                phases,
                compression_factor: median(&mut factors),
                rekey: rekey_of(&good),
                bytes: bytes.get(bytes.len() / 2).copied().unwrap_or(0),
                last_error: list
                    .iter()
                    .rev()
                    .find_map(|s| s.outcome.message().map(str::to_string)),
            }
        })
        .collect()
}

/// The rekeying of a suite's samples: the shortest interval any recorded (the one a
/// long transfer meets first) and the median stall.
fn rekey_of(samples: &[&&Sample]) -> Option<Rekey> {
    let recorded: Vec<Rekey> = samples.iter().filter_map(|s| s.rekey).collect();
    let every = recorded.iter().map(|r| r.every).min()?;
    let mut seconds: Vec<f64> = recorded.iter().map(|r| r.seconds).collect();
    Some(Rekey {
        every,
        seconds: median(&mut seconds)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_has_no_interval() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.sd, s.ci95),
            (1, 5.0, 5.0, 0.0, None)
        );
        assert_eq!(s.relative_ci(), None);
    }

    #[test]
    fn identical_values_have_a_zero_interval() {
        let s = summarize(&[2.0, 2.0, 2.0]).unwrap();
        assert_eq!(s.ci95, Some(0.0));
        assert_eq!(s.relative_ci(), Some(0.0));
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
            seconds: f64::from(peak_ticks) / 100.0,
            peak: f64::from(peak_ticks) / 100.0,
            interval: std::time::Duration::from_millis(200),
            bytes: 1 << 20,
            limit,
            throttled,
        }
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

#[cfg(test)]
mod ranking_tests {
    use super::*;
    use crate::model::AlgoKind;

    fn stats(cipher: &str, mac: Option<&str>, figures: &[f64]) -> SuiteStats {
        SuiteStats {
            mode: Mode::Send,
            suite: Suite {
                cipher: Some(cipher.into()),
                mac: mac.map(str::to_string),
                ..Suite::default()
            },
            ok: figures.len(),
            failed: 0,
            refused: false,
            figure: summarize(figures),
            client_cpu: None,
            server_cpu: None,
            client_busy: None,
            server_busy: None,
            phases: None,
            compression_factor: None,
            rekey: None,
            echo: None,
            bytes: 0,
            last_error: None,
        }
    }

    #[test]
    fn outliers_by_tukey_fences() {
        assert_eq!(
            summarize(&[10.0, 10.1, 9.9, 10.0, 30.0]).unwrap().outliers,
            1
        );
        assert_eq!(summarize(&[1.0, 2.0, 3.0]).unwrap().outliers, 0);
    }

    #[test]
    fn ties_are_overlapping_intervals_with_the_best() {
        let all = vec![
            stats("slow", Some("m"), &[100.0, 101.0, 99.0]),
            stats("best", None, &[200.0, 210.0, 190.0]),
            stats("close", None, &[195.0, 205.0, 185.0]),
        ];
        let r = rank(&all, Mode::Send);
        let names: Vec<&str> = r
            .iter()
            .map(|x| x.stats.suite.cipher.as_deref().unwrap())
            .collect();
        assert_eq!(names, ["best", "close", "slow"]);
        assert_eq!(
            r.iter().map(|x| x.tie_with_best).collect::<Vec<_>>(),
            [true, true, false]
        );
        assert_eq!(r[2].rank, 3);
    }

    #[test]
    fn connect_ranks_lower_first() {
        let mut a = stats("a", None, &[0.2, 0.2]);
        let mut b = stats("b", None, &[0.1, 0.1]);
        a.mode = Mode::Connect;
        b.mode = Mode::Connect;
        let r = rank(&[a, b], Mode::Connect);
        assert_eq!(r[0].stats.suite.cipher.as_deref(), Some("b"));
        assert!(!r[1].tie_with_best);
    }

    #[test]
    fn marginals_ignore_implicit_macs() {
        let all = vec![
            stats("c1", Some("m1"), &[100.0]),
            stats("c1", Some("m2"), &[300.0]),
            stats("c2", Some("m1"), &[200.0]),
            stats("gcm", None, &[900.0]),
        ];
        let macs = marginals(&all, Mode::Send, AlgoKind::Mac);
        assert_eq!(
            macs.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
            ["m2", "m1"]
        );
        assert_eq!(
            (macs[1].median, macs[1].best, macs[1].suites),
            (150.0, 200.0, 2)
        );
        let ciphers = marginals(&all, Mode::Send, AlgoKind::Cipher);
        assert_eq!(ciphers[0].name, "gcm");
    }

    #[test]
    fn welch_separates_clear_differences_only() {
        let a = summarize(&[100.0, 101.0, 99.0, 100.5]).unwrap();
        let b = summarize(&[120.0, 121.0, 119.0, 120.5]).unwrap();
        let c = summarize(&[100.2, 99.1, 101.3, 100.0]).unwrap();
        assert!(welch_p(&a, &b).unwrap() < 0.001);
        assert!(welch_p(&a, &c).unwrap() > 0.5);
        assert_eq!(welch_p(&summarize(&[1.0]).unwrap(), &a), None);
    }
}

#[cfg(test)]
mod aggregate_tests {
    use super::*;
    use crate::model::{CpuTimes, FailureKind};
    use std::time::Duration;

    fn sample(cipher: &str, transfer_ms: u64, outcome: Outcome) -> Sample {
        Sample {
            suite: Suite {
                cipher: Some(cipher.into()),
                ..Suite::default()
            },
            mode: Mode::Send,
            outcome,
            wall: Duration::from_millis(transfer_ms + 200),
            transfer: Some(Duration::from_millis(transfer_ms)),
            bytes: 100_000_000,
            window: None,
            rtt: None,
            client_cpu: Some(CpuTimes {
                user: Duration::from_millis(400),
                system: Duration::from_millis(100),
            }),
            negotiated: None,
            client_window_cpu: None,
            server_cpu: None,
            phases: None,
            compression_factor: None,
            rekey: None,
            echoes: Vec::new(),
        }
    }

    #[test]
    fn groups_by_suite_and_counts_outcomes() {
        let samples = vec![
            sample("a", 100, Outcome::Success),
            sample("b", 200, Outcome::Success),
            sample("a", 300, Outcome::Success),
            sample("a", 100, Outcome::failed(FailureKind::Timeout, "slow")),
        ];
        let stats = aggregate(&samples);
        assert_eq!(stats.len(), 2);
        let a = &stats[0];
        assert_eq!((a.ok, a.failed, a.refused), (2, 1, false));
        let f = a.figure.unwrap();
        // 1e8 bytes in 0.1 s and 0.3 s.
        assert!((f.max - 1e9).abs() < 1.0 && (f.min - 1e8 / 0.3).abs() < 1.0);
        // 0.5 s of CPU per 1e8 bytes = 5 s per GB.
        assert!((a.client_cpu.unwrap().median - 5.0).abs() < 1e-9);
        assert_eq!(a.last_error.as_deref(), Some("slow"));
        assert_eq!(stats[1].ok, 1);
    }
}
