//! `summary`: top suites, the fastest algorithm of each kind (marginals), the top suites
//! per cipher, where connect time goes, the spread, and typed [`Warning`]s. The table,
//! CSV and JSON are all rendered from one [`SummaryView`].

mod render;
mod warnings;

pub use render::{summary, why};

pub use warnings::{Warning, warnings};

use super::scope::Scope;
use super::show::SuiteRow;
use crate::analysis::ceiling::PathCeiling;
use crate::analysis::streams::StreamsFigure;
use crate::analysis::{self, SuiteStats};
use crate::model::{AlgoKind, Mode, Phases};
use crate::offer::grade::SuiteGrade;
use serde::Serialize;
use warnings::by_cipher;

/// One algorithm's effect in one mode.
#[derive(Clone, Debug, Serialize)]
pub struct MarginalRow {
    pub mode: Mode,
    pub kind: AlgoKind,
    pub name: String,
    pub median: f64,
    pub best: f64,
    pub suites: usize,
    pub grade: SuiteGrade,
}

/// Best and worst measured suite of a mode.
#[derive(Clone, Debug)]
pub struct Spread {
    pub best: SuiteRow,
    pub worst: SuiteRow,
    /// How many times better the best is.
    pub ratio: f64,
}

/// Connect: the median of each phase over the suites of one algorithm.
#[derive(Clone, Debug)]
pub struct PhaseRow {
    /// Key exchange or host key: the table lists both.
    pub kind: AlgoKind,
    pub name: String,
    pub phases: [f64; 5],
}

/// How the top lists are made.
#[derive(Clone, Copy, Debug)]
pub struct TopLists {
    /// Suites in each.
    pub n: usize,
    /// Every suite, sums and legacy or broken ones included; else only the suites of an
    /// allowed grade measured as such ([`SuiteRow::leads`]).
    pub all_grades: bool,
}

/// One mode's part of the summary.
#[derive(Clone, Debug)]
pub struct ModeSummary {
    pub mode: Mode,
    pub top: Vec<SuiteRow>,
    /// Suites faster than the best of the top list that it leaves out (sums, legacy or
    /// broken), without `--all-grades`.
    pub set_aside: usize,
    pub spread: Option<Spread>,
    pub phases: Vec<PhaseRow>,
    pub marginals: Vec<(AlgoKind, Vec<MarginalRow>)>,
    /// Top 3 suites of each cipher, ranked within it.
    pub per_cipher: Vec<SuiteRow>,
    /// Parallel streams of this mode (`run --streams`).
    pub streams: Vec<StreamsFigure>,
    /// What the path carries in this mode (send, receive).
    pub ceiling: Option<PathCeiling>,
    /// Why the mode could not be measured here, if it could not (a tool missing, a login
    /// that runs no commands).
    pub unavailable: Option<String>,
}

/// Everything `summary` prints.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryView {
    pub destination: String,
    pub runs: Vec<i64>,
    pub top: Vec<SuiteRow>,
    pub marginals: Vec<MarginalRow>,
    pub warnings: Vec<Warning>,
    /// Parallel streams (`run --streams`) of the best suites.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamsFigure>,
    /// What the path carries, per transfer direction.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ceilings: Vec<PathCeiling>,
    /// How the runs measured where they departed from the usual.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<crate::views::scope::RunNote>,
    #[serde(skip)]
    pub header: String,
    #[serde(skip)]
    pub sections: Vec<ModeSummary>,
}

/// Which kinds vary in a mode.
fn kinds(mode: Mode) -> &'static [AlgoKind] {
    match mode {
        Mode::Connect => &[AlgoKind::Kex, AlgoKind::HostKey],
        _ => &[AlgoKind::Cipher, AlgoKind::Mac],
    }
}

fn spread(mode: Mode, measured: &[SuiteRow]) -> Option<Spread> {
    let (best, worst) = (measured.first()?, measured.last()?);
    let (b, w) = (best.mean?, worst.mean?);
    let ratio = if analysis::higher_is_better(mode) {
        b / w
    } else {
        w / b
    };
    Some(Spread {
        best: best.clone(),
        worst: worst.clone(),
        ratio,
    })
}

fn marginal_rows(scope: &Scope, mode: Mode, kind: AlgoKind) -> Vec<MarginalRow> {
    let grader = scope.grader();
    analysis::marginals(&scope.stats, mode, kind)
        .into_iter()
        .map(|m| MarginalRow {
            mode,
            kind,
            grade: grader
                .algo(kind, &m.name)
                .map_or(SuiteGrade::Unknown, SuiteGrade::Known),
            name: m.name,
            median: m.median,
            best: m.best,
            suites: m.suites,
        })
        .collect()
}

fn mode_summary(scope: &Scope, mode: Mode, tops: TopLists) -> ModeSummary {
    let measured: Vec<SuiteRow> = analysis::rank(&scope.stats, mode)
        .iter()
        .filter(|r| r.stats.figure.is_some())
        .map(|r| SuiteRow::in_scope(r, scope))
        .collect();
    // Where no suite leads (a server of legacy ciphers only), the list is of them all,
    // each with its grade: said, not hidden.
    let every = tops.all_grades || !measured.iter().any(SuiteRow::leads);
    let set_aside = match every {
        true => 0,
        false => measured.iter().take_while(|r| !r.leads()).count(),
    };
    let top = (measured.iter())
        .filter(|r| every || r.leads())
        .take(tops.n)
        .cloned()
        .collect();
    ModeSummary {
        mode,
        spread: spread(
            mode,
            &measured
                .iter()
                .filter(|r| !r.sum)
                .cloned()
                .collect::<Vec<_>>(),
        ),
        top,
        set_aside,
        phases: if mode == Mode::Connect {
            connect_phases(&scope.stats)
        } else {
            Vec::new()
        },
        marginals: kinds(mode)
            .iter()
            .map(|&k| (k, marginal_rows(scope, mode, k)))
            .filter(|(_, m)| !m.is_empty())
            .collect(),
        per_cipher: if mode.varies_cipher() {
            per_cipher(scope, mode)
        } else {
            Vec::new()
        },
        streams: (scope.streams.iter())
            .filter(|f| f.mode == mode)
            .cloned()
            .collect(),
        ceiling: scope.ceilings.iter().find(|c| c.mode == mode).cloned(),
        unavailable: (scope.stats.iter())
            .find(|s| s.mode == mode && s.unavailable)
            .and_then(|s| s.last_error.as_ref().map(crate::views::problem::say)),
    }
}

/// Rank once per mode, then derive the warnings from what was ranked.
pub fn view(scope: &Scope, tops: TopLists) -> SummaryView {
    let sections: Vec<ModeSummary> = scope
        .modes()
        .into_iter()
        .map(|m| mode_summary(scope, m, tops))
        .collect();
    SummaryView {
        destination: scope.destination.clone(),
        runs: scope.run_ids(),
        top: sections.iter().flat_map(|s| s.top.clone()).collect(),
        marginals: sections
            .iter()
            .flat_map(|s| s.marginals.iter().flat_map(|(_, m)| m.clone()))
            .collect(),
        warnings: warnings(scope),
        streams: sections.iter().flat_map(|s| s.streams.clone()).collect(),
        ceilings: sections.iter().filter_map(|s| s.ceiling.clone()).collect(),
        notes: scope.run_notes(),
        header: scope.header(),
        sections,
    }
}

fn per_cipher(scope: &Scope, mode: Mode) -> Vec<SuiteRow> {
    by_cipher(&scope.stats, mode)
        .iter()
        .flat_map(|(_, ranked)| ranked.iter().filter(|r| r.stats.figure.is_some()).take(3))
        .map(|r| SuiteRow::new(r, scope.grade(&r.stats.suite)))
        .collect()
}

/// Where connect time goes: the median of each phase over the suites of each key
/// exchange and each host key algorithm.
fn connect_phases(stats: &[SuiteStats]) -> Vec<PhaseRow> {
    let connect: Vec<&SuiteStats> = stats
        .iter()
        .filter(|s| s.mode == Mode::Connect && s.phases.is_some())
        .collect();
    let mut rows = Vec::new();
    for kind in [AlgoKind::Kex, AlgoKind::HostKey] {
        let mut names: Vec<&str> = Vec::new();
        for n in connect.iter().filter_map(|s| s.suite.get(kind)) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        for n in names {
            let own: Vec<Phases> = connect
                .iter()
                .filter(|s| s.suite.get(kind) == Some(n))
                .filter_map(|s| s.phases)
                .collect();
            let med = |f: fn(&Phases) -> f64| {
                analysis::summarize(&own.iter().map(f).collect::<Vec<_>>())
                    .map_or(0.0, |s| s.median)
            };
            rows.push(PhaseRow {
                kind,
                name: n.to_string(),
                phases: [
                    med(|p| p.tcp),
                    med(|p| p.version),
                    med(|p| p.kex),
                    med(|p| p.auth),
                    med(|p| p.session),
                ],
            });
        }
    }
    rows
}
