//! `recommend`: an `ssh_config` block (and the matching `sshd_config` lines) with the
//! measured algorithms fastest first, among acceptable grades only: broken never unless
//! asked for, legacy only with `--allow legacy`.

use super::export::Document;
use super::report::{Scope, TERRAPIN_NOTE, display_value, unit};
use crate::analysis::{SuiteStats, higher_is_better};
use crate::offer::catalogue::{self, Grade};
use crate::offer::{self, AlgoLists};
use crate::suite::{AlgoKind, Mode, Suite};
use crate::target;
use serde::Serialize;

/// What to optimize.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    Send,
    Receive,
    Connect,
    /// Send and receive equally (geometric mean of each mode's relative speed).
    Balanced,
    /// Keystroke echo latency (typing, tmux, X11).
    Interactive,
}

impl Goal {
    fn session_modes(self) -> &'static [Mode] {
        match self {
            Goal::Send => &[Mode::Send],
            Goal::Receive => &[Mode::Receive],
            Goal::Connect | Goal::Balanced => &[Mode::Send, Mode::Receive],
            Goal::Interactive => &[Mode::Echo],
        }
    }
}

/// One recommended list.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    pub keyword: &'static str,
    pub kind: AlgoKind,
    /// Fastest first.
    pub names: Vec<String>,
    /// Each name's score: its best figure relative to the best name (1.0 = best).
    pub scores: Vec<f64>,
    pub comments: Vec<String>,
}

#[derive(Serialize)]
struct RecommendJson<'a> {
    destination: &'a str,
    runs: Vec<i64>,
    goal: Goal,
    allowed: Grade,
    lines: &'a [Line],
    notes: &'a [String],
}

/// What may be recommended: grades up to `max`, as the catalogue has them, except that
/// with a server that lacks strict KEX the ciphers open to Terrapin (CVE-2023-48795)
/// count as legacy: chacha20-poly1305, and CBC ciphers (exposed with -etm MACs).
#[derive(Clone, Copy, Debug)]
struct Policy {
    max: Grade,
    terrapin: bool,
}

impl Policy {
    /// Whether Terrapin lowers this name's grade here.
    fn demoted(self, kind: AlgoKind, name: &str) -> bool {
        self.terrapin && terrapin_cipher(kind, name)
    }

    fn grade(self, kind: AlgoKind, name: &str) -> Option<Grade> {
        let g = catalogue::grade(kind, name)?;
        Some(if self.demoted(kind, name) {
            g.max(Grade::Legacy)
        } else {
            g
        })
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

/// A cipher that Terrapin can attack when the server lacks strict KEX: chacha20-poly1305
/// always, CBC ciphers together with an encrypt-then-MAC MAC.
fn terrapin_cipher(kind: AlgoKind, name: &str) -> bool {
    kind == AlgoKind::Cipher && (offer::terrapin_exposed(kind, name) || offer::is_cbc(name))
}

/// A name, its score (geometric mean of its ratio to the best, 1.0 = best) and its best
/// suite in each mode.
type RankedName = (String, f64, Vec<(Mode, SuiteStats)>);

/// Rank the names of `kind` by their best allowed suite in each of `modes`, combined as a
/// geometric mean of the ratio to each mode's best. Returns (name, score, best suite per
/// mode) fastest first.
fn rank_names(
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
    let mut out = Vec::new();
    for n in names {
        let mut log_sum = 0.0;
        let mut count = 0;
        let mut bests = Vec::new();
        for &mode in modes {
            let usable = |s: &&SuiteStats| {
                s.mode == mode && s.figure.is_some() && policy.suite_allowed(&s.suite)
            };
            let mode_best = stats
                .iter()
                .filter(usable)
                .map(|s| s.figure.unwrap().mean)
                .reduce(|a, b| {
                    if higher_is_better(mode) {
                        a.max(b)
                    } else {
                        a.min(b)
                    }
                });
            let own = stats
                .iter()
                .filter(usable)
                .filter(|s| s.suite.get(kind) == Some(n.as_str()))
                .max_by(|a, b| {
                    let (x, y) = (a.figure.unwrap().mean, b.figure.unwrap().mean);
                    if higher_is_better(mode) {
                        x.total_cmp(&y)
                    } else {
                        y.total_cmp(&x)
                    }
                });
            if let (Some(best), Some(own)) = (mode_best, own) {
                let v = own.figure.unwrap().mean;
                let ratio = if higher_is_better(mode) {
                    v / best
                } else {
                    best / v
                };
                log_sum += ratio.ln();
                count += 1;
                bests.push((mode, own.clone()));
            }
        }
        if count > 0 {
            out.push((n, (log_sum / count as f64).exp(), bests));
        }
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    // Among names the measurements cannot tell apart from the fastest, the better
    // grade goes first: speed that is not measurable must not cost security.
    let tied = out
        .iter()
        .take_while(|(_, _, bests)| {
            out.first()
                .is_some_and(|first| indistinguishable(&first.2, bests))
        })
        .count();
    out[..tied].sort_by(|a, b| {
        let g = |n: &str| policy.grade(kind, n).unwrap_or(Grade::Broken);
        g(&a.0).cmp(&g(&b.0)).then(b.1.total_cmp(&a.1))
    });
    out
}

/// Whether two names' best suites have overlapping 95% intervals in every mode both
/// were measured in (and there is at least one).
fn indistinguishable(a: &[(Mode, SuiteStats)], b: &[(Mode, SuiteStats)]) -> bool {
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

fn figure_text(mode: Mode, s: &SuiteStats) -> String {
    let f = s.figure.expect("measured");
    format!("{:.1} {} {mode}", display_value(mode, f.mean), unit(mode))
}

/// Build one line with its comments.
fn line(
    stats: &[SuiteStats],
    kind: AlgoKind,
    modes: &[Mode],
    policy: Policy,
    defaults: &AlgoLists,
    notes: &mut Vec<String>,
) -> Option<Line> {
    let ranked = rank_names(stats, kind, modes, policy);
    let (first, _, first_bests) = ranked.first()?;
    let mut comments = Vec::new();
    let figures: Vec<String> = first_bests
        .iter()
        .map(|(m, s)| figure_text(*m, s))
        .collect();
    comments.push(format!("{first}: {}", figures.join(", ")));
    // The current default: the first name of the client's preference list that was
    // measured here in the goal's modes (i.e. that this server accepts and the run
    // included).
    let prefs = defaults.get(kind).unwrap_or_default();
    let measured = |d: &String| {
        stats.iter().any(|s| {
            modes.contains(&s.mode) && s.figure.is_some() && s.suite.get(kind) == Some(d.as_str())
        })
    };
    let skipped: Vec<&String> = prefs.iter().take_while(|d| !measured(d)).collect();
    let unmeasured = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            " ({} not measured)",
            skipped
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    match prefs.iter().find(|d| measured(d)) {
        Some(d) if d == first => comments.push(format!(
            "already your client's first choice among the measured names{unmeasured}"
        )),
        Some(d) => match ranked.iter().find(|r| &r.0 == d) {
            Some((_, score, bests)) => {
                let gain = (ranked[0].1 / score - 1.0) * 100.0;
                let figs: Vec<String> = bests.iter().map(|(m, s)| figure_text(*m, s)).collect();
                comments.push(format!(
                    "{gain:+.0}% over your client's first choice {d}{unmeasured} ({}){}",
                    figs.join(", "),
                    if indistinguishable(first_bests, bests) {
                        ", within noise"
                    } else {
                        ""
                    }
                ));
            }
            None => comments.push(format!(
                "your client's first choice {d} is {} and not recommended",
                policy.grade(kind, d).map_or("unknown".into(), |g| {
                    if policy.demoted(kind, d) {
                        format!("{g} here (Terrapin)")
                    } else {
                        g.to_string()
                    }
                })
            )),
        },
        None => {}
    }
    // Tie with the runner-up: the data cannot decide between them.
    if let Some((second, _, second_bests)) = ranked.get(1) {
        if indistinguishable(first_bests, second_bests) {
            comments.push(format!(
                "{first} and {second} are not distinguishable in these measurements (the better grade is listed first)"
            ));
        }
    }
    let thin = first_bests.iter().any(|(_, s)| s.ok < 3);
    if thin {
        notes.push(format!(
            "{}: the data is too thin to decide (fewer than 3 samples); measure more rounds",
            kind.config_keyword()
        ));
    }
    Some(Line {
        keyword: kind.config_keyword(),
        kind,
        names: ranked.iter().map(|r| r.0.clone()).collect(),
        scores: ranked.iter().map(|r| r.1).collect(),
        comments,
    })
}

/// The `Host` pattern for a destination as stored.
fn host_pattern(destination: &str) -> String {
    if target::is_sandbox_label(destination) {
        return "*".into();
    }
    let host = destination.rsplit_once('@').map_or(destination, |(_, h)| h);
    let host = host.trim_start_matches('[');
    match host.split_once(']') {
        Some((h, _)) => h.to_string(),
        None if host.matches(':').count() == 1 => {
            host.split(':').next().unwrap_or(host).to_string()
        }
        None => host.to_string(),
    }
}

pub fn recommend(scope: &Scope, goal: Goal, max: Grade) -> (Document, serde_json::Value) {
    let defaults = scope
        .runs
        .last()
        .map(|r| r.client_defaults.clone())
        .unwrap_or_default();
    let policy = Policy {
        max,
        terrapin: scope.lacks_strict_kex(),
    };
    let mut notes = Vec::new();
    if policy.terrapin {
        notes.push(TERRAPIN_NOTE.to_string());
    }
    let transfer = goal.session_modes();
    let mut lines = Vec::new();
    for (kind, modes) in [
        (AlgoKind::Kex, &[Mode::Connect][..]),
        (AlgoKind::HostKey, &[Mode::Connect][..]),
        (AlgoKind::Cipher, transfer),
        (AlgoKind::Mac, transfer),
    ] {
        match line(&scope.stats, kind, modes, policy, &defaults, &mut notes) {
            Some(l) => lines.push(l),
            None => notes.push(format!(
                "{}: nothing measured with an acceptable grade ({} mode); left to ssh's defaults",
                kind.config_keyword(),
                modes
                    .iter()
                    .map(|m| m.as_str())
                    .collect::<Vec<_>>()
                    .join("/")
            )),
        }
    }
    let mut doc = Document::default();
    let goal_text = match goal {
        Goal::Send => "sending",
        Goal::Receive => "receiving",
        Goal::Connect => "connecting (ciphers and MACs for send and receive alike)",
        Goal::Balanced => "sending and receiving alike",
        Goal::Interactive => "interactive latency (keystroke echo round trip)",
    };
    doc.text(format!(
        "# sshbench recommendation for {} (runs {}), fastest first for {goal_text}.\n# Grades allowed: {}; broken algorithms are never listed{}.",
        scope.destination,
        scope.run_ids().iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
        match max {
            Grade::Recommended => "recommended",
            Grade::Acceptable => "recommended, acceptable",
            Grade::Legacy => "recommended, acceptable, legacy (--allow legacy)",
            Grade::Broken => "ALL, INCLUDING BROKEN (--allow broken)",
        },
        if max == Grade::Broken { " -- except now, as asked: do not use this on a network you do not trust" } else { "" }
    ));
    let mut client = format!(
        "# ~/.ssh/config\nHost {}\n",
        host_pattern(&scope.destination)
    );
    if target::is_sandbox_label(&scope.destination) {
        client.push_str(&format!(
            "    # measured against the {}: this machine as both client and server\n",
            scope.destination
        ));
    }
    let mut server = String::from("# /etc/ssh/sshd_config (for the server's admin)\n");
    for l in &lines {
        for c in &l.comments {
            client.push_str(&format!("    # {c}\n"));
        }
        client.push_str(&format!("    {} {}\n", l.keyword, l.names.join(",")));
        server.push_str(&format!("{} {}\n", l.keyword, l.names.join(",")));
    }
    doc.code(client);
    doc.code(server);
    if !notes.is_empty() {
        doc.text(
            notes
                .iter()
                .map(|n| format!("# note: {n}"))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    let json = RecommendJson {
        destination: &scope.destination,
        runs: scope.run_ids(),
        goal,
        allowed: max,
        lines: &lines,
        notes: &notes,
    };
    (doc, serde_json::to_value(json).expect("serializable"))
}

/// The ranked names of a kind as `recommend` would list them (for tests and tools).
pub fn ranked_names(
    stats: &[SuiteStats],
    kind: AlgoKind,
    modes: &[Mode],
    max: Grade,
) -> Vec<String> {
    let policy = Policy {
        max,
        terrapin: false,
    };
    rank_names(stats, kind, modes, policy)
        .into_iter()
        .map(|r| r.0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        assert_eq!(host_pattern("pi@nas.local:2222"), "nas.local");
        assert_eq!(host_pattern("nas"), "nas");
        assert_eq!(host_pattern("root@[::1]:22"), "::1");
        assert_eq!(host_pattern("local sandbox"), "*");
        assert_eq!(host_pattern("local sandbox (shared CPUs)"), "*");
    }
}
