//! Statistics over samples: pure functions, no I/O.

use crate::measure::{Outcome, Sample};
use crate::suite::{Mode, Suite};
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
}

impl Summary {
    /// CI half-width relative to the mean (e.g. 0.02 = ±2%).
    pub fn relative_ci(&self) -> Option<f64> {
        let ci = self.ci95?;
        (self.mean != 0.0).then(|| ci / self.mean.abs())
    }
}

/// Summarize `xs` (finite values only); `None` when empty.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
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
    Some(Summary {
        n,
        mean,
        median,
        min: v[0],
        max: v[n - 1],
        sd,
        ci95,
    })
}

/// Everything known about one suite in one mode.
#[derive(Clone, Debug)]
pub struct SuiteStats {
    pub mode: Mode,
    pub suite: Suite,
    pub ok: usize,
    pub failed: usize,
    pub refused: bool,
    /// Connect: seconds. Send/receive: bytes per second.
    pub figure: Option<Summary>,
    /// Client CPU seconds per GB moved (transfers) or per connection (connect).
    pub client_cpu: Option<Summary>,
    /// Median bytes per transfer sample.
    pub bytes: u64,
    /// The last failure or refusal message.
    pub last_error: Option<String>,
}

/// The figure a sample is ranked by: seconds for connect, bytes/s for transfers.
pub fn figure(s: &Sample) -> Option<f64> {
    if !s.outcome.is_success() {
        return None;
    }
    match s.mode {
        Mode::Connect => Some(s.wall.as_secs_f64()),
        _ => s.throughput(),
    }
}

/// Group samples by (mode, suite), in the order suites first appear.
pub fn aggregate<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Vec<SuiteStats> {
    let mut groups: Vec<(Mode, &Suite, Vec<&Sample>)> = Vec::new();
    for s in samples {
        match groups.iter_mut().find(|g| g.0 == s.mode && *g.1 == s.suite) {
            Some(g) => g.2.push(s),
            None => groups.push((s.mode, &s.suite, vec![s])),
        }
    }
    groups
        .into_iter()
        .map(|(mode, suite, list)| {
            let figures: Vec<f64> = list.iter().filter_map(|s| figure(s)).collect();
            let cpu: Vec<f64> = list
                .iter()
                .filter(|s| s.outcome.is_success())
                .filter_map(|s| {
                    let c = s.client_cpu?.total().as_secs_f64();
                    match mode {
                        Mode::Connect => Some(c),
                        _ => (s.bytes > 0).then(|| c / s.bytes as f64 * 1e9),
                    }
                })
                .collect();
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
                client_cpu: summarize(&cpu),
                bytes: bytes.get(bytes.len() / 2).copied().unwrap_or(0),
                last_error: list
                    .iter()
                    .rev()
                    .find_map(|s| s.outcome.message().map(str::to_string)),
            }
        })
        .collect()
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
    fn student_t_interval() {
        // n = 4, mean 2.5, sd = 1.2910; t(0.975, 3) = 3.1824 → half-width 2.0543.
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((s.mean - 2.5).abs() < 1e-12);
        assert!((s.median - 2.5).abs() < 1e-12);
        assert!((s.ci95.unwrap() - 2.0543).abs() < 1e-3, "{:?}", s.ci95);
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[f64::NAN]), None);
        assert_eq!(summarize(&[f64::INFINITY, 1.0]).unwrap().n, 1);
    }
}

#[cfg(test)]
mod aggregate_tests {
    use super::*;
    use crate::measure::{CpuTimes, FailureKind};
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
