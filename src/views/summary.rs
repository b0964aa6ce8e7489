//! `summary`: top suites, the fastest algorithm of each kind (marginals), the top suites
//! per cipher, where connect time goes, the spread, and typed [`Warning`]s. The table,
//! CSV and JSON are all rendered from one [`SummaryView`].

use super::export::{Document, Grid};
use super::scope::{Scope, TERRAPIN_NOTE, figure_text, name_or, suite_label, unit};
use super::show::SuiteRow;
use crate::analysis::{self, Ranked, SuiteStats};
use crate::model::{AlgoKind, Mode, Phases};
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
    pub name: String,
    pub phases: [f64; 5],
}

/// One mode's part of the summary.
#[derive(Clone, Debug)]
pub struct ModeSummary {
    pub mode: Mode,
    pub top: Vec<SuiteRow>,
    pub spread: Option<Spread>,
    pub phases: Vec<PhaseRow>,
    pub marginals: Vec<(AlgoKind, Vec<MarginalRow>)>,
    /// Top 3 suites of each cipher, ranked within it.
    pub per_cipher: Vec<SuiteRow>,
}

/// Everything `summary` prints.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryView {
    pub destination: String,
    pub runs: Vec<i64>,
    pub top: Vec<SuiteRow>,
    pub marginals: Vec<MarginalRow>,
    pub warnings: Vec<Warning>,
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

fn mode_summary(scope: &Scope, mode: Mode, top: usize) -> ModeSummary {
    let measured: Vec<SuiteRow> = analysis::rank(&scope.stats, mode)
        .iter()
        .filter(|r| r.stats.figure.is_some())
        .map(|r| SuiteRow::new(r, scope.grade(&r.stats.suite)))
        .collect();
    ModeSummary {
        mode,
        spread: spread(mode, &measured),
        top: measured.into_iter().take(top).collect(),
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
    }
}

/// Rank once per mode, then derive the warnings from what was ranked.
pub fn view(scope: &Scope, top: usize) -> SummaryView {
    let sections: Vec<ModeSummary> = scope
        .modes()
        .into_iter()
        .map(|m| mode_summary(scope, m, top))
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
        header: scope.header(),
        sections,
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
        .filter(|s| s.figure.is_some() && s.ok < 3)
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
fn by_cipher(stats: &[SuiteStats], mode: Mode) -> Vec<(String, Vec<Ranked>)> {
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

fn per_cipher(scope: &Scope, mode: Mode) -> Vec<SuiteRow> {
    by_cipher(&scope.stats, mode)
        .iter()
        .flat_map(|(_, ranked)| ranked.iter().filter(|r| r.stats.figure.is_some()).take(3))
        .map(|r| SuiteRow::new(r, scope.grade(&r.stats.suite)))
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

/// The summary as a document.
pub fn summary(scope: &Scope, top: usize) -> (Document, SummaryView) {
    let v = view(scope, top);
    let mut doc = Document::default();
    doc.text(v.header.clone());
    for sec in &v.sections {
        render_mode(&mut doc, sec, top);
    }
    if v.warnings.is_empty() {
        doc.text("No warnings.");
    } else {
        let lines: Vec<String> = v.warnings.iter().map(|w| format!("- {w}")).collect();
        doc.text(format!("Warnings:\n{}", lines.join("\n")));
    }
    (doc, v)
}

fn render_mode(doc: &mut Document, sec: &ModeSummary, top: usize) {
    let mode = sec.mode;
    doc.grid(top_table(sec, top));
    if let Some(s) = &sec.spread {
        let side = |r: &SuiteRow| {
            format!(
                "{} {} ({})",
                figure_text(mode, r.mean.unwrap_or(0.0)),
                unit(mode),
                suite_label(mode, &r.suite)
            )
        };
        doc.text(format!(
            "{mode} spread: best {}, worst {}: {:.2}x",
            side(&s.best),
            side(&s.worst),
            s.ratio
        ));
    }
    if !sec.phases.is_empty() {
        doc.grid(phase_table(&sec.phases));
    }
    for (kind, rows) in &sec.marginals {
        doc.grid(marginal_table(mode, *kind, rows));
    }
    if mode.varies_cipher() {
        doc.grid(per_cipher_table(mode, &sec.per_cipher));
    }
}

fn top_table(sec: &ModeSummary, top: usize) -> Grid {
    let mode = sec.mode;
    let mut headers = vec!["#", "Suite", unit(mode), "±95%", "n", "Grade", "Tie"];
    headers.extend(match mode {
        Mode::Echo => ["p90 (µs)", "p99 (µs)"],
        _ => ["Bound", "CPU s/GB (client / server)"],
    });
    let right: &[usize] = if mode == Mode::Echo {
        &[0, 2, 3, 4, 7, 8]
    } else {
        &[0, 2, 3, 4]
    };
    let title = format!("Top {} {mode}", top.min(sec.top.len()));
    let mut g = Grid::new(title, &headers).right(right);
    let shown = |v: Option<f64>| v.map_or("-".into(), |v| figure_text(mode, v));
    let two = |v: Option<f64>| v.map_or("?".into(), |v| format!("{v:.2}"));
    for r in &sec.top {
        let mut row = vec![
            r.rank.to_string(),
            suite_label(mode, &r.suite),
            shown(r.mean),
            shown(r.ci95),
            r.n.to_string(),
            r.grade.to_string(),
            r.tie().into(),
        ];
        row.extend(match mode {
            Mode::Echo => [shown(r.echo.map(|e| e.p90)), shown(r.echo.map(|e| e.p99))],
            Mode::Connect => ["-".into(), "-".into()],
            _ => [
                r.bound.map_or("-", |b| b.as_str()).into(),
                format!("{} / {}", two(r.client_cpu), two(r.server_cpu)),
            ],
        });
        g.row(row);
    }
    g
}

fn phase_table(rows: &[PhaseRow]) -> Grid {
    let mut g = Grid::new(
        "Where connect time goes (median ms per phase)",
        &[
            "Algorithm",
            "TCP",
            "Version",
            "Key exchange",
            "Auth",
            "Session",
            "Total",
        ],
    )
    .right(&[1, 2, 3, 4, 5, 6]);
    for r in rows {
        let mut row = vec![r.name.clone()];
        row.extend(r.phases.iter().map(|v| format!("{:.1}", v * 1e3)));
        row.push(format!("{:.1}", r.phases.iter().sum::<f64>() * 1e3));
        g.row(row);
    }
    g
}

fn marginal_table(mode: Mode, kind: AlgoKind, rows: &[MarginalRow]) -> Grid {
    let mut g = Grid::new(
        format!("Fastest {} ({mode})", kind.label()),
        &[
            "Name",
            &format!("Median of suites ({})", unit(mode)),
            &format!("Best suite ({})", unit(mode)),
            "Suites",
            "Grade",
        ],
    )
    .right(&[1, 2, 3]);
    for x in rows {
        g.row(vec![
            x.name.clone(),
            figure_text(mode, x.median),
            figure_text(mode, x.best),
            x.suites.to_string(),
            x.grade.to_string(),
        ]);
    }
    g
}

fn per_cipher_table(mode: Mode, rows: &[SuiteRow]) -> Grid {
    let mut g = Grid::new(
        format!("Top 3 per cipher ({mode})"),
        &["Cipher", "MAC", unit(mode), "±95%", "n"],
    )
    .right(&[2, 3, 4]);
    let shown = |v: Option<f64>| v.map_or("-".into(), |v| figure_text(mode, v));
    for r in rows {
        g.row(vec![
            name_or(&r.suite.cipher, ""),
            name_or(&r.suite.mac, "<implicit>"),
            shown(r.mean),
            shown(r.ci95),
            r.n.to_string(),
        ]);
    }
    g
}
