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

impl PathCeiling {
    /// One sentence: the figure, which suite set it, and the raw TCP stream's.
    pub fn sentence(&self, label: &str) -> String {
        let mb = |r: f64| r / 1e6;
        let head = if self.reached {
            format!(
                "{} path: {:.1} MB/s ({label}) with neither CPU saturated, the most one connection carried",
                self.mode,
                mb(self.rate)
            )
        } else {
            let why = match (self.bound, self.spare_slower) {
                (Some(b @ (Bound::Client | Bound::Server | Bound::Both)), false) => {
                    format!("limited by {}; no suite had CPU to spare", b.as_str())
                }
                (Some(b @ (Bound::Client | Bound::Server | Bound::Both)), true) => {
                    format!(
                        "limited by {}; those with CPU to spare moved less",
                        b.as_str()
                    )
                }
                (Some(Bound::Rekeying), _) => "limited by its rekeys".to_string(),
                (_, true) => "its CPUs unknown; those with CPU to spare moved less".to_string(),
                (_, false) => "no suite was known to have CPU to spare".to_string(),
            };
            format!(
                "{} path: at least {:.1} MB/s ({label}; {why}), so its own ceiling may be higher",
                self.mode,
                mb(self.rate)
            )
        };
        let proxy = if self.via_proxy {
            " It runs through a jump host or proxy: that hop's connection is part of the \
             path, and the jump host's CPU is not counted."
        } else {
            ""
        };
        match self.tcp {
            Some(t) => format!(
                "{head}; one raw TCP stream along it moved {:.1} MB/s.{proxy}",
                mb(t)
            ),
            None => format!("{head}.{proxy}"),
        }
    }
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
        assert_eq!(
            c[0].sentence("aes128-gcm"),
            "send path: 500.0 MB/s (aes128-gcm) with neither CPU saturated, the most one connection carried; one raw TCP stream along it moved 4000.0 MB/s."
        );
        // Every download was CPU-bound: the fastest is a lower bound.
        assert_eq!((c[1].rate, c[1].reached), (800e6, false));
        assert_eq!(
            c[1].sentence("x"),
            "receive path: at least 800.0 MB/s (x; limited by client and server CPU; no suite had CPU to spare), so its own ceiling may be higher; one raw TCP stream along it moved 4000.0 MB/s."
        );
        // Nothing known of the CPUs: a lower bound, and said so.
        let mut unknown = list[3].clone();
        unknown.server_busy = None;
        unknown.client_busy = None;
        let c = ceilings(&[unknown], None, false);
        assert_eq!(
            c[0].sentence("x"),
            "receive path: at least 800.0 MB/s (x; no suite was known to have CPU to spare), so its own ceiling may be higher."
        );
        assert!(ceilings(&list[..0], None, false).is_empty());
    }

    #[test]
    fn a_path_through_a_proxy_says_what_the_verdict_cannot_see() {
        let list = [stats(Mode::Send, "aes128-ctr", 150e6, (0.4, 0.3))];
        let c = ceilings(&list, None, true);
        assert!(c[0].via_proxy && c[0].reached);
        assert_eq!(
            c[0].sentence("x"),
            "send path: 150.0 MB/s (x) with neither CPU saturated, the most one connection \
             carried. It runs through a jump host or proxy: that hop's connection is part of \
             the path, and the jump host's CPU is not counted."
        );
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
        assert_eq!(
            c[0].sentence("x"),
            "send path: at least 900.0 MB/s (x; limited by client CPU; those with CPU to spare moved less), so its own ceiling may be higher."
        );
    }
}
