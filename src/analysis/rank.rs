//! Ranking the suites of a mode (best first, ties with the best marked by overlapping
//! 95% intervals) and each algorithm's marginal effect.

use super::{SuiteStats, Summary, higher_is_better, summarize};
use crate::model::Mode;

/// A suite's place in its mode's ranking.
#[derive(Clone, Debug)]
pub struct Ranked {
    pub stats: SuiteStats,
    /// 1 = best.
    pub rank: usize,
    /// The best measured suite (the first, unless summed pairs rank before it).
    pub best: bool,
    /// Its 95% interval overlaps the best suite's: not distinguishable from the best.
    pub tie_with_best: bool,
}

/// The interval `[mean - ci, mean + ci]` (a point without a CI).
fn interval(s: &Summary) -> (f64, f64) {
    let ci = s.ci95.unwrap_or(0.0);
    (s.mean - ci, s.mean + ci)
}

/// The test behind `≈ best`: the two 95% intervals overlap. Racing stops a suite by it
/// too, so a suite it drops is one the table would not have marked `≈ best`.
pub fn not_distinguishable(a: &Summary, b: &Summary) -> bool {
    let ((a_lo, a_hi), (b_lo, b_hi)) = (interval(a), interval(b));
    a_lo <= b_hi && a_hi >= b_lo
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
    // The best is measured: a summed connect pair is an estimate, ranked by it but
    // compared with the best measured pair.
    let at = rows.iter().position(|s| !s.sum).unwrap_or(0);
    let best = rows.get(at).and_then(|s| s.figure);
    rows.into_iter()
        .enumerate()
        .map(|(i, s)| {
            let tie = match (best, s.figure) {
                (Some(b), Some(f)) => not_distinguishable(&f, &b),
                _ => false,
            };
            Ranked {
                stats: s.clone(),
                rank: i + 1,
                best: i == at,
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
    // A summed pair says nothing of a name that its measured parts do not.
    for s in stats.iter().filter(|s| s.mode == mode && !s.sum) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::welch_p;
    use crate::model::{AlgoKind, Suite};

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
            unavailable: false,
            files: None,
            rtt: None,
            behind_the_path: false,
            sum: false,
            path_window: None,
            path_tcp: None,
            figure: summarize(figures),
            client_cpu: None,
            server_cpu: None,
            client_busy: None,
            server_busy: None,
            phases: None,
            compression_factor: None,
            rekey: None,
            echo: None,
            typing: None,
            x11_bulk: None,
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
