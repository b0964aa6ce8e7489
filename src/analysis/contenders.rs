//! A fleet's kinds of host: which suites can still win on a host of a kind whose first
//! hosts were measured with the whole design (the contenders), and whether a host
//! measured by its contenders alone agrees with those hosts.
//!
//! The kind's full hosts are taken together: hosts of one kind rank suites alike, and
//! their samples pooled rank the kind more precisely than any one of them (a union of
//! each host's ties would grow with every host's noise). Contenders, per mode: every
//! suite tied with the kind's best (overlapping 95% intervals), ssh's unforced pick, and
//! the kind's best suite of each family of cipher (or, for connect, of key exchange): a
//! sentinel, so that a host where a family ranks otherwise is seen. A suite of no family
//! (X11's compression variants, say) is always a contender.

use super::rank::{not_distinguishable, rank};
use super::{Ranked, SuiteStats};
use crate::model::fleet::{Disagreement, LEVEL_TOLERANCE};
use crate::model::{Mode, Suite};

/// The family whose best suite is a sentinel: its key exchange's (connect), else its
/// cipher's; `None` where it names neither.
fn family(mode: Mode, suite: &Suite) -> Option<&'static str> {
    if mode == Mode::Connect {
        return suite.kex.as_deref().map(|k| match k {
            k if k.contains("mlkem") || k.contains("sntrup") => "post-quantum hybrid",
            k if k.starts_with("curve") => "curve25519",
            k if k.starts_with("ecdh") => "ecdh",
            k if k.starts_with("diffie-hellman-group-exchange") => "dh-gex",
            k if k.starts_with("diffie-hellman") => "dh",
            _ => "other",
        });
    }
    suite.cipher.as_deref().map(|c| match c {
        c if c.contains("gcm") => "aes-gcm",
        c if c.starts_with("chacha20") => "chacha20",
        c if c.contains("ctr") => "aes-ctr",
        c if c.contains("cbc") => "cbc",
        _ => "other",
    })
}

/// A mode's measured suites, best first (summed connect pairs are estimates: left out).
fn measured(stats: &[SuiteStats], mode: Mode) -> Vec<Ranked> {
    (rank(stats, mode).into_iter())
        .filter(|r| !r.stats.sum && r.stats.figure.is_some())
        .collect()
}

fn modes(stats: &[SuiteStats]) -> Vec<Mode> {
    let mut modes: Vec<Mode> = stats.iter().map(|s| s.mode).collect();
    modes.sort();
    modes.dedup();
    modes
}

/// The suites tied with the kind's best in `mode`.
fn tied(kind: &[SuiteStats], mode: Mode) -> Vec<Suite> {
    (measured(kind, mode).into_iter())
        .filter(|r| r.best || r.tie_with_best)
        .map(|r| r.stats.suite)
        .collect()
}

/// The contenders of a kind, from its full hosts' pooled stats and ssh's unforced pick
/// per mode.
pub fn contenders(kind: &[SuiteStats], unforced: &[(Mode, Suite)]) -> Vec<(Mode, Suite)> {
    let mut out: Vec<(Mode, Suite)> = unforced.to_vec();
    for mode in modes(kind) {
        out.extend(tied(kind, mode).into_iter().map(|s| (mode, s)));
        let mut seen: Vec<&str> = Vec::new();
        for r in measured(kind, mode) {
            match family(mode, &r.stats.suite) {
                Some(f) if seen.contains(&f) => {}
                Some(f) => {
                    seen.push(f);
                    out.push((mode, r.stats.suite));
                }
                None => out.push((mode, r.stats.suite)),
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether a host measured by its contenders (`host`) disagrees with its kind (the full
/// hosts' pooled stats): a suite not tied with the kind's best beat the kind's best here
/// beyond both intervals, or its best figure lies beyond [`LEVEL_TOLERANCE`] of the
/// kind's, beyond both intervals. The first such mode says why.
pub fn disagreement(host: &[SuiteStats], kind: &[SuiteStats]) -> Option<Disagreement> {
    for mode in modes(host) {
        let here = measured(host, mode);
        let Some(best) = here.first() else { continue };
        let figure = best.stats.figure?;
        let kind_tied = tied(kind, mode);
        if !kind_tied.contains(&best.stats.suite) {
            let kind_best = here.iter().find(|r| kind_tied.contains(&r.stats.suite));
            let apart =
                |k: &&Ranked| (k.stats.figure).is_some_and(|f| !not_distinguishable(&figure, &f));
            if let Some(k) = kind_best.filter(apart) {
                return Some(Disagreement::OtherBest {
                    mode,
                    best: Box::new(best.stats.suite.clone()),
                    kind_best: Box::new(k.stats.suite.clone()),
                });
            }
        }
        let Some(level) = measured(kind, mode).first().and_then(|r| r.stats.figure) else {
            continue;
        };
        let ratio = figure.mean / level.mean;
        let apart = !not_distinguishable(&figure, &level);
        if ratio.is_finite() && (ratio - 1.0).abs() > LEVEL_TOLERANCE && apart {
            return Some(Disagreement::OtherLevel { mode, ratio });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summarize;

    fn suite(cipher: &str, mac: Option<&str>) -> Suite {
        Suite {
            cipher: Some(cipher.into()),
            mac: mac.map(str::to_string),
            ..Suite::default()
        }
    }

    /// Send figures (MB/s): five samples around `mean`, ±1%.
    fn stats(rows: &[(&Suite, f64)]) -> Vec<SuiteStats> {
        (rows.iter())
            .map(|(s, mean)| {
                let mut st = SuiteStats::empty(Mode::Send, (*s).clone());
                let xs: Vec<f64> = [-1.0, -0.5, 0.0, 0.5, 1.0]
                    .iter()
                    .map(|d| (mean + d * mean / 100.0) * 1e6)
                    .collect();
                st.figure = summarize(&xs);
                st
            })
            .collect()
    }

    fn full_host() -> (Vec<SuiteStats>, Vec<Suite>) {
        let s = vec![
            suite("aes128-gcm@openssh.com", None),
            suite("chacha20-poly1305@openssh.com", None),
            suite("aes128-ctr", Some("umac-64-etm@openssh.com")),
            suite("aes128-ctr", Some("umac-128-etm@openssh.com")),
            suite("aes256-ctr", Some("hmac-sha2-256-etm@openssh.com")),
            suite("aes128-cbc", Some("hmac-sha1")),
        ];
        let figures = [400.0, 300.0, 250.0, 240.0, 200.0, 100.0];
        let rows: Vec<(&Suite, f64)> = s.iter().zip(figures).collect();
        (stats(&rows), s)
    }

    #[test]
    fn contenders_are_the_ties_the_pick_and_each_family_s_best() {
        let (kind, s) = full_host();
        let unforced = [(Mode::Send, s[4].clone())];
        let got = contenders(&kind, &unforced);
        let mut want: Vec<(Mode, Suite)> = [0, 1, 2, 4, 5]
            .iter()
            .map(|&i| (Mode::Send, s[i].clone()))
            .collect();
        want.sort();
        // The second CTR suite is no family's best, nor tied, nor ssh's pick.
        assert_eq!(got, want);
        let got = contenders(&kind, &[]);
        assert!(!got.contains(&(Mode::Send, s[4].clone())), "{got:?}");
    }

    #[test]
    fn a_host_disagrees_when_another_suite_wins_or_its_level_is_another() {
        let (full, s) = full_host();
        // The same ranking, 10% slower: one of the kind.
        let near = stats(&[(&s[0], 360.0), (&s[1], 270.0), (&s[2], 225.0)]);
        assert_eq!(disagreement(&near, &full), None);
        // chacha20 beats AES-GCM here (no AES instructions, say).
        let other = stats(&[(&s[0], 150.0), (&s[1], 300.0), (&s[2], 120.0)]);
        assert_eq!(
            disagreement(&other, &full),
            Some(Disagreement::OtherBest {
                mode: Mode::Send,
                best: Box::new(s[1].clone()),
                kind_best: Box::new(s[0].clone()),
            })
        );
        // Same order, half the rate (a CPU quota on its sshd, say).
        let slow = stats(&[(&s[0], 200.0), (&s[1], 150.0), (&s[2], 120.0)]);
        match disagreement(&slow, &full) {
            Some(Disagreement::OtherLevel { mode, ratio }) => {
                assert_eq!(mode, Mode::Send);
                assert!((ratio - 0.5).abs() < 0.01, "{ratio}");
            }
            d => panic!("{d:?}"),
        }
    }
}
