//! The path's ceiling per transfer direction: the most one SSH connection moved over it.
//! When that suite had neither side's CPU saturated, the path (or its window) stopped
//! it: the ceiling is reached. Otherwise the path carries at least that, even when a
//! slower suite had CPU to spare (its own window per round trip held it, not the path).
//! Beside it, in the sandbox, what one raw TCP stream moved along the same path.

use super::{Bound, SuiteStats};
use crate::model::{Mode, Suite};
use serde::Serialize;

/// What one transfer direction's path is known to carry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathCeiling {
    pub mode: Mode,
    /// Bytes per second, the mean of `suite`'s samples.
    pub rate: f64,
    pub suite: Suite,
    /// True when `suite`, the fastest, was bound by neither CPU: `rate` is the path's
    /// own limit for one connection. False: the ceiling may lie higher.
    pub reached: bool,
    /// Not reached, though a slower suite was bound by neither CPU.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spare_slower: bool,
    /// What limited `suite`.
    pub bound: Option<Bound>,
    /// Bytes per second of one raw TCP stream along the path (the sandbox), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<f64>,
    /// The path runs through a jump host or proxy, whose connection and CPU the
    /// verdicts do not see (the client's proxy process they do).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub via_proxy: bool,
}

/// The send and receive ceilings of `stats` (one path's suites; compressed ones take no
/// part, their rate is the data's), with the path's raw TCP rate and whether it runs
/// through a proxy.
pub fn ceilings(stats: &[SuiteStats], tcp: Option<f64>, via_proxy: bool) -> Vec<PathCeiling> {
    let mut out = Vec::new();
    for mode in [Mode::Send, Mode::Receive] {
        let rated = || {
            stats
                .iter()
                .filter(move |s| s.mode == mode && s.suite.compression.is_none())
                .filter_map(|s| Some((s, s.figure?.mean)))
        };
        let cpu_free = |s: &SuiteStats| {
            matches!(
                s.bound(),
                Some(Bound::Window | Bound::Link | Bound::Network)
            )
        };
        // A CPU-bound suite faster than every free one shows the path carries more
        // than the free ones moved: the fastest of all sets the figure.
        if let Some((s, rate)) = fastest(rated()) {
            let spare = rated().any(|(s, _)| cpu_free(s));
            out.push(PathCeiling {
                mode,
                rate,
                suite: s.suite.clone(),
                reached: cpu_free(s),
                spare_slower: spare && !cpu_free(s),
                bound: s.bound(),
                tcp,
                via_proxy,
            });
        }
    }
    out
}

fn fastest<'a>(list: impl Iterator<Item = (&'a SuiteStats, f64)>) -> Option<(&'a SuiteStats, f64)> {
    list.max_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summarize;

    fn stats(mode: Mode, cipher: &str, rate: f64, busy: (f64, f64)) -> SuiteStats {
        let suite = Suite {
            cipher: Some(cipher.into()),
            ..Suite::default()
        };
        let mut s = SuiteStats::empty(mode, suite);
        s.figure = summarize(&[rate]);
        s.ok = 3;
        (s.client_busy, s.server_busy) = (Some(busy.0), Some(busy.1));
        s
    }

    #[test]
    fn the_ceiling_is_reached_by_the_fastest_suite_with_neither_cpu_saturated() {
        let list = [
            stats(Mode::Send, "aes128-gcm@openssh.com", 500e6, (0.6, 0.5)),
            stats(Mode::Send, "aes256-ctr", 400e6, (0.97, 0.5)),
            stats(Mode::Send, "3des-cbc", 20e6, (0.7, 0.7)),
            stats(Mode::Receive, "aes256-ctr", 800e6, (0.99, 0.99)),
            stats(Mode::Receive, "3des-cbc", 20e6, (0.99, 0.99)),
        ];
        let c = ceilings(&list, Some(4e9), false);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].mode, c[0].rate, c[0].reached),
            (Mode::Send, 500e6, true)
        );
        assert_eq!(c[0].suite.cipher.as_deref(), Some("aes128-gcm@openssh.com"));
        assert_eq!(c[0].tcp, Some(4e9));
        // Every download was CPU-bound: the fastest is a lower bound.
        assert_eq!((c[1].rate, c[1].reached), (800e6, false));
        assert_eq!((c[1].bound, c[1].spare_slower), (Some(Bound::Both), false));
        // Nothing known of the CPUs: a lower bound, and said so.
        let mut unknown = list[3].clone();
        unknown.server_busy = None;
        unknown.client_busy = None;
        let c = ceilings(&[unknown], None, false);
        assert_eq!(
            (c[0].reached, c[0].spare_slower, c[0].tcp),
            (false, false, None)
        );
        assert!(ceilings(&list[..0], None, false).is_empty());
    }

    #[test]
    fn a_path_through_a_proxy_says_what_the_verdict_cannot_see() {
        let list = [stats(Mode::Send, "aes128-ctr", 150e6, (0.4, 0.3))];
        let c = ceilings(&list, None, true);
        assert!(c[0].via_proxy && c[0].reached);
    }

    /// A suite with CPU to spare that moved less than a CPU-bound one was held by its own
    /// window per round trip, not by the path: the path carried the faster one's rate.
    #[test]
    fn a_faster_cpu_bound_suite_makes_the_ceiling_a_lower_bound() {
        let list = [
            stats(Mode::Send, "aes128-gcm@openssh.com", 900e6, (0.97, 0.5)),
            stats(Mode::Send, "aes256-ctr", 500e6, (0.6, 0.5)),
        ];
        let c = ceilings(&list, None, false);
        assert_eq!(
            (c[0].rate, c[0].reached, c[0].spare_slower),
            (900e6, false, true)
        );
        assert_eq!(c[0].suite.cipher.as_deref(), Some("aes128-gcm@openssh.com"));
        assert_eq!(c[0].bound, Some(Bound::Client));
    }
}
