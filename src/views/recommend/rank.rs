//! How `recommend` ranks the names of one kind: which suites are allowed (the one
//! grade, up to `--allow`), each name's score over the goal's modes, and the rule that
//! a better grade goes first among names the measurements cannot tell apart.

use crate::analysis::{SuiteStats, higher_is_better};
use crate::model::{AlgoKind, Mode, Suite};
use crate::offer::catalogue::Grade;
use crate::offer::grade::Grader;

/// What may be recommended: grades up to `max`, as the catalogue has them, except that
/// with a server that lacks strict KEX the ciphers open to Terrapin (CVE-2023-48795)
/// count as legacy: chacha20-poly1305, and CBC ciphers (exposed with -etm MACs).
#[derive(Clone, Copy, Debug)]
pub(super) struct Policy {
    pub max: Grade,
    pub grader: Grader,
    pub order: Order,
    /// Where the server's admin would offer another name.
    pub server: super::ServerSoftware,
}

/// How `recommend` orders each list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// The best grade first, fastest first within a grade (a post-quantum key exchange
    /// leads a faster classical one).
    #[default]
    Grade,
    /// Fastest first across the allowed grades; among names the measurements cannot
    /// tell apart, the better grade first.
    Speed,
}

impl Policy {
    /// Whether Terrapin lowers this name's grade here.
    pub fn demoted(self, kind: AlgoKind, name: &str) -> bool {
        self.grader.demoted(kind, name)
    }

    pub fn grade(self, kind: AlgoKind, name: &str) -> Option<Grade> {
        self.grader.algo(kind, name)
    }

    fn allowed(self, kind: AlgoKind, name: &str) -> bool {
        self.grade(kind, name).is_some_and(|g| g <= self.max)
    }

    /// A suite is usable when every forced part is allowed.
    fn suite_allowed(self, s: &Suite) -> bool {
        [
            AlgoKind::Kex,
            AlgoKind::HostKey,
            AlgoKind::Cipher,
            AlgoKind::Mac,
        ]
        .into_iter()
        .all(|k| s.get(k).is_none_or(|n| self.allowed(k, n)))
    }
}

/// A name, its score (geometric mean of its ratio to the best, 1.0 = best) and its best
/// suite in each mode.
pub(super) type RankedName = (String, f64, Vec<(Mode, SuiteStats)>);

/// Rank the names of `kind` by their best allowed suite in each of `modes`, combined as a
/// geometric mean of the ratio to each mode's best. Returns (name, score, best suite per
/// mode) fastest first.
pub(super) fn rank_names(
    stats: &[SuiteStats],
    kind: AlgoKind,
    modes: &[Mode],
    policy: Policy,
) -> Vec<RankedName> {
    let mut names: Vec<String> = Vec::new();
    for s in stats
        .iter()
        .filter(|s| modes.contains(&s.mode) && s.figure.is_some())
    {
        if let Some(n) = s.suite.get(kind) {
            if policy.allowed(kind, n) && !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    let mut out: Vec<RankedName> = names
        .into_iter()
        .filter_map(|n| score(stats, kind, modes, policy, n))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let g = |n: &str| policy.grade(kind, n).unwrap_or(Grade::Broken);
    if policy.order == Order::Grade {
        // The best grade first, fastest first within a grade (a stable sort).
        out.sort_by_key(|r| g(&r.0));
        return out;
    }
    // Among names the measurements cannot tell apart from the fastest, the better
    // grade goes first: speed that is not measurable must not cost security.
    let tied = out
        .iter()
        .take_while(|(_, _, bests)| {
            out.first()
                .is_some_and(|first| indistinguishable(&first.2, bests))
        })
        .count();
    out[..tied].sort_by(|a, b| g(&a.0).cmp(&g(&b.0)).then(b.1.total_cmp(&a.1)));
    out
}

/// Whether two names' best suites have overlapping 95% intervals in every mode both
/// were measured in (and there is at least one).
pub(super) fn indistinguishable(a: &[(Mode, SuiteStats)], b: &[(Mode, SuiteStats)]) -> bool {
    let pairs: Vec<(&SuiteStats, &SuiteStats)> = a
        .iter()
        .filter_map(|(m, x)| b.iter().find(|(m2, _)| m2 == m).map(|(_, y)| (x, y)))
        .collect();
    !pairs.is_empty()
        && pairs.iter().all(|(x, y)| match (x.figure, y.figure) {
            (Some(x), Some(y)) => {
                let (cx, cy) = (x.ci95.unwrap_or(0.0), y.ci95.unwrap_or(0.0));
                (x.mean - cx) <= (y.mean + cy) && (y.mean - cy) <= (x.mean + cx)
            }
            _ => false,
        })
}

/// The best figure of `mode` among allowed suites, and the best of those using `name`.
fn bests<'a>(
    stats: &'a [SuiteStats],
    kind: AlgoKind,
    mode: Mode,
    policy: Policy,
    name: &str,
) -> Option<(f64, &'a SuiteStats)> {
    let hib = higher_is_better(mode);
    let usable: Vec<&SuiteStats> = stats
        .iter()
        .filter(|s| s.mode == mode && s.figure.is_some() && policy.suite_allowed(&s.suite))
        .collect();
    let mean = |s: &SuiteStats| s.figure.map_or(f64::NAN, |f| f.mean);
    let mode_best = usable
        .iter()
        .map(|s| mean(s))
        .reduce(|a, b| if hib { a.max(b) } else { a.min(b) })?;
    let own = usable
        .into_iter()
        .filter(|s| s.suite.get(kind) == Some(name))
        .max_by(|a, b| {
            let (x, y) = (mean(a), mean(b));
            if hib {
                x.total_cmp(&y)
            } else {
                y.total_cmp(&x)
            }
        })?;
    Some((mode_best, own))
}

/// One name's score: the geometric mean over `modes` of its best allowed suite's ratio
/// to the mode's best.
fn score(
    stats: &[SuiteStats],
    kind: AlgoKind,
    modes: &[Mode],
    policy: Policy,
    name: String,
) -> Option<RankedName> {
    let mut log_sum = 0.0;
    let mut per_mode = Vec::new();
    for &mode in modes {
        let Some((best, own)) = bests(stats, kind, mode, policy, &name) else {
            continue;
        };
        let v = own.figure.map_or(f64::NAN, |f| f.mean);
        let ratio = if higher_is_better(mode) {
            v / best
        } else {
            best / v
        };
        log_sum += ratio.ln();
        per_mode.push((mode, own.clone()));
    }
    if per_mode.is_empty() {
        return None;
    }
    let n = per_mode.len() as f64;
    Some((name, (log_sum / n).exp(), per_mode))
}
