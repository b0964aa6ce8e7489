//! What the reader should know before trusting the tables: typed [`Warning`]s, derived
//! from the ranked statistics.

use super::super::scope::{Scope, TERRAPIN_NOTE, suite_label};
use crate::analysis::{self, Ranked, SuiteStats};
use crate::model::Mode;
use crate::offer::grade::SuiteGrade;
use serde::Serialize;
use std::fmt;

/// Something the reader should know before trusting the tables.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    /// The fastest suite of a mode uses a legacy or broken algorithm.
    WeakFastest {
        mode: Mode,
        suite: String,
        grade: SuiteGrade,
    },
    /// Several suites cannot be told apart from the best.
    Ties {
        mode: Mode,
        count: usize,
    },
    /// For these ciphers the choice of MAC is within noise.
    MacsWithinNoise {
        mode: Mode,
        ciphers: Vec<String>,
    },
    /// Suites with fewer than three counted samples.
    ThinSuites {
        count: usize,
    },
    /// The server lacks strict KEX.
    Terrapin,
    Failed {
        count: usize,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::WeakFastest { mode, suite, grade } => write!(
                f,
                "the fastest {mode} suite ({suite}) uses a {grade} algorithm; `sshbench recommend` leaves it out"
            ),
            Warning::Ties { mode, count } => write!(
                f,
                "{count} {mode} suites are not distinguishable from the best (overlapping 95% intervals)"
            ),
            Warning::MacsWithinNoise { mode, ciphers } => write!(
                f,
                "{mode}: differences among MACs are within noise for {}",
                ciphers.join(", ")
            ),
            Warning::ThinSuites { count } => write!(
                f,
                "{count} suites have fewer than 3 counted samples: their intervals are wide or missing; add rounds with `sshbench run --rounds` or `--precision`"
            ),
            Warning::Terrapin => f.write_str(TERRAPIN_NOTE),
            Warning::Failed { count } => write!(
                f,
                "{count} samples failed (`sshbench show --sort name` lists them per suite)"
            ),
        }
    }
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What the reader should know: per mode, then about the whole scope.
pub fn warnings(scope: &Scope) -> Vec<Warning> {
    let mut out = Vec::new();
    for mode in scope.modes() {
        let ranked: Vec<Ranked> = analysis::rank(&scope.stats, mode);
        if let Some(best) = ranked.first().filter(|r| r.stats.figure.is_some()) {
            let grade = scope.grade(&best.stats.suite);
            if grade.is_weak() {
                out.push(Warning::WeakFastest {
                    mode,
                    suite: suite_label(mode, &best.stats.suite),
                    grade,
                });
            }
            let count = ranked.iter().filter(|r| r.tie_with_best).count();
            if count > 1 {
                out.push(Warning::Ties { mode, count });
            }
        }
        let ciphers = macs_within_noise(&scope.stats, mode);
        if mode.varies_cipher() && !ciphers.is_empty() {
            out.push(Warning::MacsWithinNoise { mode, ciphers });
        }
    }
    let thin = scope
        .stats
        .iter()
        .filter(|s| s.figure.is_some() && s.ok < 3 && !s.sum)
        .count();
    if thin > 0 {
        out.push(Warning::ThinSuites { count: thin });
    }
    if scope.lacks_strict_kex() {
        out.push(Warning::Terrapin);
    }
    let failed: usize = scope.stats.iter().map(|s| s.failed).sum();
    if failed > 0 {
        out.push(Warning::Failed { count: failed });
    }
    out
}

/// Each cipher's suites of one mode, ranked within the cipher, in the order of the
/// cipher's best suite.
pub(super) fn by_cipher(stats: &[SuiteStats], mode: Mode) -> Vec<(String, Vec<Ranked>)> {
    let mut ciphers: Vec<String> = Vec::new();
    for r in analysis::rank(stats, mode) {
        if let Some(c) = r.stats.suite.cipher {
            if !ciphers.contains(&c) {
                ciphers.push(c);
            }
        }
    }
    ciphers
        .into_iter()
        .map(|c| {
            let own: Vec<SuiteStats> = stats
                .iter()
                .filter(|s| s.mode == mode && s.suite.cipher.as_deref() == Some(c.as_str()))
                .cloned()
                .collect();
            let ranked = analysis::rank(&own, mode);
            (c, ranked)
        })
        .collect()
}

/// The ciphers whose MACs all tie with the cipher's best suite.
fn macs_within_noise(stats: &[SuiteStats], mode: Mode) -> Vec<String> {
    by_cipher(stats, mode)
        .into_iter()
        .filter(|(_, ranked)| {
            let with_mac: Vec<&Ranked> = ranked
                .iter()
                .filter(|r| r.stats.suite.mac.is_some() && r.stats.figure.is_some())
                .collect();
            with_mac.len() > 1 && with_mac.iter().all(|r| r.tie_with_best)
        })
        .map(|(c, _)| c)
        .collect()
}
