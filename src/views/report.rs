//! `show` and `summary`: ranked tables, marginal effects and warnings over stored runs.

use super::export::{Document, Grid};
use crate::analysis::{self, Marginal, Ranked, SuiteStats};
use crate::offer::catalogue::{self, Grade};
use crate::store::RunRecord;
use crate::suite::{AlgoKind, Mode, Suite};
use serde::Serialize;

/// What a report is about.
pub struct Scope<'a> {
    pub destination: String,
    pub runs: &'a [RunRecord],
    pub stats: Vec<SuiteStats>,
}

/// What `summary` and `recommend` say about a server without strict KEX.
pub const TERRAPIN_NOTE: &str = "the server does not offer strict KEX, so chacha20-poly1305, and CBC \
     ciphers with -etm MACs, are open to the Terrapin attack (CVE-2023-48795): `recommend` counts \
     them as legacy here; a server with OpenSSH 9.6 or later (or its distribution's fix) removes this";

impl Scope<'_> {
    /// Whether the newest run that read the server's offer found no strict KEX.
    pub fn lacks_strict_kex(&self) -> bool {
        self.runs.iter().rev().find_map(|r| r.server_strict_kex) == Some(false)
    }

    pub fn run_ids(&self) -> Vec<i64> {
        self.runs.iter().map(|r| r.id).collect()
    }

    pub fn modes(&self) -> Vec<Mode> {
        Mode::ALL
            .into_iter()
            .filter(|m| self.stats.iter().any(|s| s.mode == *m))
            .collect()
    }

    fn header(&self) -> String {
        let samples: usize = self.stats.iter().map(|s| s.ok + s.failed).sum();
        let ids: Vec<String> = self.run_ids().iter().map(i64::to_string).collect();
        format!(
            "destination: {} (run{} {}; {samples} counted samples)",
            self.destination,
            if ids.len() == 1 { "" } else { "s" },
            ids.join(", ")
        )
    }
}

/// The worst grade among the suite's forced algorithms ("unknown" if any is unknown).
pub fn suite_grade(suite: &Suite) -> String {
    let parts = [
        (AlgoKind::Kex, &suite.kex),
        (AlgoKind::HostKey, &suite.hostkey),
        (AlgoKind::Cipher, &suite.cipher),
        (AlgoKind::Mac, &suite.mac),
    ];
    let mut worst: Option<Grade> = None;
    for (kind, name) in parts {
        let Some(name) = name else { continue };
        match catalogue::grade(kind, name) {
            None => return "unknown".into(),
            Some(g) => worst = Some(worst.map_or(g, |w| w.max(g))),
        }
    }
    worst.map_or_else(|| "-".into(), |g| g.to_string())
}

/// Figures in the unit people read: MB/s for transfers, ms for connect, µs for echo.
pub fn display_value(mode: Mode, v: f64) -> f64 {
    match mode {
        Mode::Connect => v * 1e3,
        Mode::Echo => v * 1e6,
        Mode::Send | Mode::Receive => v / 1e6,
    }
}

pub fn unit(mode: Mode) -> &'static str {
    match mode {
        Mode::Connect => "ms",
        Mode::Echo => "µs",
        Mode::Send | Mode::Receive => "MB/s",
    }
}

fn fmt(mode: Mode, v: f64) -> String {
    format!("{:.1}", display_value(mode, v))
}

fn tie_mark(r: &Ranked) -> &'static str {
    match (r.rank, r.tie_with_best) {
        (1, _) => "best",
        (_, true) => "≈ best",
        _ => "",
    }
}

/// How `show` orders rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Best figure first (`--worst`: worst first).
    Speed,
    /// Least client CPU first.
    Cpu,
    /// By algorithm names.
    Name,
}

pub struct ShowOptions {
    /// Horizontal bars instead of tables: `Some(ascii)`.
    pub chart: Option<bool>,
    pub modes: Vec<Mode>,
    /// Rows per mode; `None` = all.
    pub top: Option<usize>,
    pub worst: bool,
    pub sort: SortKey,
}

/// One suite in JSON, with raw figures and units.
#[derive(Serialize)]
pub struct SuiteJson<'a> {
    pub mode: Mode,
    #[serde(flatten)]
    pub suite: &'a Suite,
    pub rank: usize,
    pub tie_with_best: bool,
    pub n: usize,
    pub failed: usize,
    pub refused: bool,
    /// `bytes_per_second` for send/receive, `seconds` for connect and echo (echo: the
    /// mean, median... of the sessions' median round trips).
    pub unit: &'static str,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub sd: Option<f64>,
    pub ci95: Option<f64>,
    pub outliers: Option<usize>,
    /// Seconds of client CPU per GB (transfers) or per connection (connect).
    pub client_cpu: Option<f64>,
    /// Seconds of server session CPU per GB, where the server tells.
    pub server_cpu: Option<f64>,
    /// Busy fractions of one core during transfers.
    pub client_busy: Option<f64>,
    pub server_busy: Option<f64>,
    pub bound: Option<crate::analysis::Bound>,
    /// Connect: median seconds per phase.
    pub phases: Option<crate::measure::Phases>,
    pub compression_factor: Option<f64>,
    /// Transfers: bytes of the encrypted stream between rekeys and one rekey's stall
    /// (seconds), as spread into the figure.
    pub rekey: Option<crate::measure::Rekey>,
    /// Echo: percentiles (seconds) over every timed keystroke.
    pub echo: Option<analysis::Percentiles>,
    pub grade: String,
    pub last_error: Option<&'a str>,
}

fn suite_json(r: &Ranked) -> SuiteJson<'_> {
    let f = r.stats.figure;
    SuiteJson {
        mode: r.stats.mode,
        suite: &r.stats.suite,
        rank: r.rank,
        tie_with_best: r.tie_with_best,
        n: r.stats.ok,
        failed: r.stats.failed,
        refused: r.stats.refused,
        unit: if r.stats.mode.is_transfer() {
            "bytes_per_second"
        } else {
            "seconds"
        },
        mean: f.map(|f| f.mean),
        median: f.map(|f| f.median),
        min: f.map(|f| f.min),
        max: f.map(|f| f.max),
        sd: f.map(|f| f.sd),
        ci95: f.and_then(|f| f.ci95),
        outliers: f.map(|f| f.outliers),
        client_cpu: r.stats.client_cpu.map(|c| c.median),
        server_cpu: r.stats.server_cpu.map(|c| c.median),
        client_busy: r.stats.client_busy,
        server_busy: r.stats.server_busy,
        bound: r.stats.bound(),
        phases: r.stats.phases,
        compression_factor: r.stats.compression_factor,
        rekey: r.stats.rekey,
        echo: r.stats.echo,
        grade: suite_grade(&r.stats.suite),
        last_error: r.stats.last_error.as_deref(),
    }
}

#[derive(Serialize)]
struct ShowJson<'a> {
    destination: &'a str,
    runs: Vec<i64>,
    suites: Vec<SuiteJson<'a>>,
}

fn name(v: &Option<String>, implicit: &str) -> String {
    v.clone().unwrap_or_else(|| implicit.to_string())
}

/// The classic table (Destination, Mode, MAC, Cipher, KEX, Time) with throughput,
/// interval, n, CPU, grade and the tie mark.
pub fn show(scope: &Scope, opts: &ShowOptions) -> (Document, serde_json::Value) {
    let mut doc = Document::default();
    doc.text(scope.header());
    let mut ranked_all: Vec<Ranked> = Vec::new();
    for mode in scope.modes().into_iter().filter(|m| opts.modes.contains(m)) {
        let mut ranked = analysis::rank(&scope.stats, mode);
        match opts.sort {
            SortKey::Speed => {}
            SortKey::Cpu => ranked.sort_by(|a, b| {
                let c = |r: &Ranked| r.stats.client_cpu.map_or(f64::INFINITY, |c| c.median);
                c(a).total_cmp(&c(b))
            }),
            SortKey::Name => ranked.sort_by(|a, b| a.stats.suite.cmp(&b.stats.suite)),
        }
        if opts.worst {
            ranked.reverse();
        }
        let total = ranked.len();
        if let Some(n) = opts.top {
            ranked.truncate(n);
        }
        let title = format!(
            "{mode}: {} of {total} suites{}",
            ranked.len(),
            if opts.worst { ", worst first" } else { "" }
        );
        if let Some(ascii) = opts.chart {
            doc.text(format!(
                "\n{title} ({}, mean with 95% interval)",
                unit(mode)
            ));
            doc.code(bars(&ranked, mode, 40, ascii));
            ranked_all.extend(ranked);
            continue;
        }
        // The seeds' layout first (Destination, Mode, MAC, Cipher, KEX), then the mode's
        // own figures; `right` counts from the first of those.
        let (own, right): (&[&str], &[usize]) = match mode {
            Mode::Echo => (
                &[
                    "RTT (µs)",
                    "±95%",
                    "p50 (µs)",
                    "p90 (µs)",
                    "p99 (µs)",
                    "n",
                    "Keystrokes",
                    "Grade",
                    "Tie",
                ],
                &[0, 1, 2, 3, 4, 5, 6],
            ),
            Mode::Connect => (
                &[
                    "Host key",
                    "Time (ms)",
                    "±95%",
                    "n",
                    "CPU (ms)",
                    "Grade",
                    "Tie",
                ],
                &[1, 2, 3, 4],
            ),
            Mode::Send | Mode::Receive => (
                &[
                    "Time (s/8 MB)",
                    "MB/s",
                    "±95%",
                    "n",
                    "CPU (s/GB)",
                    "Grade",
                    "Tie",
                    "Server CPU (s/GB)",
                    "Bound",
                ],
                &[0, 1, 2, 3, 4, 7],
            ),
        };
        let mut headers = vec!["Destination", "Mode", "MAC", "Cipher", "KEX"];
        headers.extend(own);
        let mut g =
            Grid::new(title, &headers).right(&right.iter().map(|c| c + 5).collect::<Vec<_>>());
        let compressed = ranked.iter().any(|r| r.stats.suite.compression.is_some());
        if compressed {
            g.headers.push("Compression".into());
            g.headers.push("Ratio".into());
        }
        for r in &ranked {
            let s = &r.stats;
            let f = s.figure;
            let mean = f.map_or("-".into(), |f| fmt(mode, f.mean));
            let ci = f.and_then(|f| f.ci95).map_or("-".into(), |c| fmt(mode, c));
            let cpu = s.client_cpu.map_or("-".into(), |c| match mode {
                Mode::Connect => format!("{:.1}", c.median * 1e3),
                _ => format!("{:.2}", c.median),
            });
            let tie = if s.refused {
                "refused".to_string()
            } else if f.is_none() {
                "failed".into()
            } else {
                tie_mark(r).into()
            };
            let mut row = vec![
                scope.destination.clone(),
                mode.to_string(),
                if mode == Mode::Connect {
                    "-".into()
                } else {
                    name(&s.suite.mac, "<implicit>")
                },
                if mode == Mode::Connect {
                    "-".into()
                } else {
                    name(&s.suite.cipher, "(default)")
                },
                name(&s.suite.kex, "(default)"),
            ];
            match mode {
                Mode::Echo => {
                    let p = |get: fn(&analysis::Percentiles) -> f64| {
                        s.echo.map_or("-".into(), |e| fmt(mode, get(&e)))
                    };
                    row.extend([
                        mean,
                        ci,
                        p(|e| e.p50),
                        p(|e| e.p90),
                        p(|e| e.p99),
                        s.ok.to_string(),
                        s.echo.map_or("0".into(), |e| e.n.to_string()),
                        suite_grade(&s.suite),
                        tie,
                    ]);
                }
                Mode::Connect | Mode::Send | Mode::Receive => {
                    row.push(if mode == Mode::Connect {
                        name(&s.suite.hostkey, "(default)")
                    } else {
                        f.map_or("-".into(), |f| format!("{:.3}", 8e6 / f.mean))
                    });
                    row.extend([mean, ci, s.ok.to_string(), cpu, suite_grade(&s.suite), tie]);
                }
            }
            if mode.is_transfer() {
                row.push(
                    s.server_cpu
                        .map_or("-".into(), |c| format!("{:.2}", c.median)),
                );
                row.push(s.bound().map_or("-", |b| b.as_str()).into());
            }
            if compressed {
                row.push(s.suite.compression.clone().unwrap_or_else(|| "none".into()));
                row.push(
                    s.compression_factor
                        .map_or("-".into(), |f| format!("{f:.2}")),
                );
            }
            g.row(row);
        }
        doc.grid(g);
        ranked_all.extend(ranked);
    }
    let problems: Vec<String> = scope
        .stats
        .iter()
        .filter(|s| opts.modes.contains(&s.mode) && (s.refused || s.failed > 0))
        .map(|s| {
            let what = if s.refused {
                "refused".to_string()
            } else {
                format!("{} failed", s.failed)
            };
            format!(
                "  {} {}: {what} - {}",
                s.mode,
                suite_label(s.mode, &s.suite),
                s.last_error.as_deref().unwrap_or("")
            )
        })
        .collect();
    if !problems.is_empty() {
        doc.text(format!(
            "\nNot measured or failed:\n{}",
            problems.join("\n")
        ));
    }
    let json = ShowJson {
        destination: &scope.destination,
        runs: scope.run_ids(),
        suites: ranked_all.iter().map(suite_json).collect(),
    };
    (doc, serde_json::to_value(json).expect("serializable"))
}

/// Horizontal bars of the means, `width` cells long at the largest value, with the
/// interval's ends marked; Unicode blocks (eighths) or, for `ascii`, `#` and `|`.
pub fn bars(ranked: &[Ranked], mode: Mode, width: usize, ascii: bool) -> String {
    let labels: Vec<String> = ranked
        .iter()
        .map(|r| suite_label(mode, &r.stats.suite))
        .collect();
    let pad = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let max = ranked
        .iter()
        .filter_map(|r| r.stats.figure.map(|f| f.mean + f.ci95.unwrap_or(0.0)))
        .fold(0.0, f64::max);
    let mut out = String::new();
    for (r, label) in ranked.iter().zip(&labels) {
        let Some(f) = r.stats.figure else {
            out.push_str(&format!("{label:<pad$}  (not measured)\n"));
            continue;
        };
        let scale = |v: f64| {
            if max > 0.0 {
                v / max * width as f64
            } else {
                0.0
            }
        };
        let eighths = (scale(f.mean) * 8.0).round() as usize;
        let mut cells: Vec<char> = Vec::with_capacity(width + 1);
        if ascii {
            cells.extend(std::iter::repeat_n('#', (eighths + 4) / 8));
        } else {
            const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
            cells.extend(std::iter::repeat_n('█', eighths / 8));
            if eighths % 8 > 0 {
                cells.push(PARTS[eighths % 8]);
            }
        }
        cells.resize(width + 1, ' ');
        if let Some(ci) = f.ci95.filter(|c| *c > 0.0) {
            let (lo, hi) = (
                scale(f.mean - ci).round() as usize,
                scale(f.mean + ci).round() as usize,
            );
            let (open, close) = if ascii { ('|', '|') } else { ('├', '┤') };
            if lo < cells.len() && lo != hi {
                cells[lo] = open;
            }
            if hi < cells.len() {
                cells[hi] = close;
            }
        }
        let bar: String = cells.into_iter().collect();
        out.push_str(&format!(
            "{label:<pad$} {bar} {}{}\n",
            fmt(mode, f.mean),
            f.ci95.map_or(String::new(), |c| format!(
                " {}{}",
                if ascii { "+-" } else { "±" },
                fmt(mode, c)
            ))
        ));
    }
    out
}

/// A readable suite label for one mode (the parts that vary in it).
pub fn suite_label(mode: Mode, s: &Suite) -> String {
    match mode {
        Mode::Connect => format!(
            "{} + {}",
            name(&s.kex, "(default kex)"),
            name(&s.hostkey, "(default host key)")
        ),
        _ => format!(
            "{} + {}{}",
            name(&s.cipher, "(default)"),
            name(&s.mac, "<implicit>"),
            s.compression
                .as_deref()
                .map(|c| format!(" + {c}"))
                .unwrap_or_default()
        ),
    }
}

fn grade_of(kind: AlgoKind, name: &str) -> String {
    catalogue::grade(kind, name).map_or("unknown".into(), |g| g.to_string())
}

#[derive(Serialize)]
struct MarginalJson {
    mode: Mode,
    kind: AlgoKind,
    name: String,
    median: f64,
    best: f64,
    suites: usize,
    grade: String,
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    destination: &'a str,
    runs: Vec<i64>,
    top: Vec<SuiteJson<'a>>,
    marginals: Vec<MarginalJson>,
    warnings: Vec<String>,
}

/// Which kinds vary in a mode.
fn kinds(mode: Mode) -> &'static [AlgoKind] {
    match mode {
        Mode::Connect => &[AlgoKind::Kex, AlgoKind::HostKey],
        _ => &[AlgoKind::Cipher, AlgoKind::Mac],
    }
}

/// Top suites, fastest algorithm of each kind (marginals), top suites per cipher, the
/// spread, and warnings.
pub fn summary(scope: &Scope, top: usize) -> (Document, serde_json::Value) {
    let mut doc = Document::default();
    doc.text(scope.header());
    let mut warnings = Vec::new();
    let mut top_json = Vec::new();
    let mut marg_json = Vec::new();
    let ranked_by_mode: Vec<(Mode, Vec<Ranked>)> = scope
        .modes()
        .into_iter()
        .map(|m| (m, analysis::rank(&scope.stats, m)))
        .collect();
    for (mode, ranked) in &ranked_by_mode {
        let mode = *mode;
        let measured: Vec<&Ranked> = ranked.iter().filter(|r| r.stats.figure.is_some()).collect();
        let mut headers = vec!["#", "Suite", unit(mode), "±95%", "n", "Grade", "Tie"];
        headers.extend(match mode {
            Mode::Echo => ["p90 (µs)", "p99 (µs)"],
            _ => ["Bound", "CPU s/GB (client / server)"],
        });
        let mut g = Grid::new(format!("Top {} {mode}", top.min(measured.len())), &headers).right(
            if mode == Mode::Echo {
                &[0, 2, 3, 4, 7, 8]
            } else {
                &[0, 2, 3, 4]
            },
        );
        for r in measured.iter().take(top) {
            let f = r.stats.figure.expect("measured");
            let mut row = vec![
                r.rank.to_string(),
                suite_label(mode, &r.stats.suite),
                fmt(mode, f.mean),
                f.ci95.map_or("-".into(), |c| fmt(mode, c)),
                r.stats.ok.to_string(),
                suite_grade(&r.stats.suite),
                tie_mark(r).into(),
            ];
            row.extend(match (mode, r.stats.echo) {
                (Mode::Echo, e) => [
                    e.map_or("-".into(), |e| fmt(mode, e.p90)),
                    e.map_or("-".into(), |e| fmt(mode, e.p99)),
                ],
                (Mode::Connect, _) => ["-".into(), "-".into()],
                _ => [
                    r.stats.bound().map_or("-", |b| b.as_str()).into(),
                    format!(
                        "{} / {}",
                        r.stats
                            .client_cpu
                            .map_or("?".into(), |c| format!("{:.2}", c.median)),
                        r.stats
                            .server_cpu
                            .map_or("?".into(), |s| format!("{:.2}", s.median))
                    ),
                ],
            });
            g.row(row);
            top_json.push(suite_json(r));
        }
        doc.grid(g);

        if let (Some(best), Some(worst)) = (measured.first(), measured.last()) {
            let (b, w) = (
                best.stats.figure.unwrap().mean,
                worst.stats.figure.unwrap().mean,
            );
            let spread = if analysis::higher_is_better(mode) {
                b / w
            } else {
                w / b
            };
            doc.text(format!(
                "{mode} spread: best {} {} ({}), worst {} {} ({}): {spread:.2}x",
                fmt(mode, b),
                unit(mode),
                suite_label(mode, &best.stats.suite),
                fmt(mode, w),
                unit(mode),
                suite_label(mode, &worst.stats.suite),
            ));
            let grade = suite_grade(&best.stats.suite);
            if grade == Grade::Broken.as_str() || grade == Grade::Legacy.as_str() {
                warnings.push(format!(
                    "the fastest {mode} suite ({}) uses a {grade} algorithm; `sshbench recommend` leaves it out",
                    suite_label(mode, &best.stats.suite)
                ));
            }
            let ties = measured.iter().filter(|r| r.tie_with_best).count();
            if ties > 1 {
                warnings.push(format!(
                    "{ties} {mode} suites are not distinguishable from the best (overlapping 95% intervals)"
                ));
            }
        }
        if mode == Mode::Connect {
            connect_phases(&mut doc, &scope.stats);
        }
        for &kind in kinds(mode) {
            let m: Vec<Marginal> = analysis::marginals(&scope.stats, mode, kind);
            if m.is_empty() {
                continue;
            }
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
            for x in &m {
                g.row(vec![
                    x.name.clone(),
                    fmt(mode, x.median),
                    fmt(mode, x.best),
                    x.suites.to_string(),
                    grade_of(kind, &x.name),
                ]);
                marg_json.push(MarginalJson {
                    mode,
                    kind,
                    name: x.name.clone(),
                    median: x.median,
                    best: x.best,
                    suites: x.suites,
                    grade: grade_of(kind, &x.name),
                });
            }
            doc.grid(g);
        }
        if mode.varies_cipher() {
            per_cipher(&mut doc, &mut warnings, mode, &scope.stats);
        }
    }
    let thin: Vec<&SuiteStats> = scope
        .stats
        .iter()
        .filter(|s| s.figure.is_some() && s.ok < 3)
        .collect();
    if !thin.is_empty() {
        warnings.push(format!(
            "{} suites have fewer than 3 counted samples: their intervals are wide or missing; add rounds with `sshbench run --rounds` or `--precision`",
            thin.len()
        ));
    }
    if scope.lacks_strict_kex() {
        warnings.push(TERRAPIN_NOTE.to_string());
    }
    let failed: usize = scope.stats.iter().map(|s| s.failed).sum();
    if failed > 0 {
        warnings.push(format!(
            "{failed} samples failed (`sshbench show --sort name` lists them per suite)"
        ));
    }
    if warnings.is_empty() {
        doc.text("No warnings.");
    } else {
        doc.text(format!(
            "Warnings:\n{}",
            warnings
                .iter()
                .map(|w| format!("- {w}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    let json = SummaryJson {
        destination: &scope.destination,
        runs: scope.run_ids(),
        top: top_json,
        marginals: marg_json,
        warnings,
    };
    (doc, serde_json::to_value(json).expect("serializable"))
}

/// Where connect time goes: the median of each phase over the suites of each key
/// exchange and each host key algorithm.
fn connect_phases(doc: &mut Document, stats: &[SuiteStats]) {
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
    for kind in [AlgoKind::Kex, AlgoKind::HostKey] {
        let mut names: Vec<&str> = Vec::new();
        for s in stats
            .iter()
            .filter(|s| s.mode == Mode::Connect && s.phases.is_some())
        {
            if let Some(n) = s.suite.get(kind) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        for n in names {
            let own: Vec<crate::measure::Phases> = stats
                .iter()
                .filter(|s| s.mode == Mode::Connect)
                .filter(|s| s.suite.get(kind) == Some(n))
                .filter_map(|s| s.phases)
                .collect();
            let med = |f: fn(&crate::measure::Phases) -> f64| {
                analysis::summarize(&own.iter().map(f).collect::<Vec<_>>())
                    .map_or(0.0, |s| s.median)
            };
            let p = [
                med(|p| p.tcp),
                med(|p| p.version),
                med(|p| p.kex),
                med(|p| p.auth),
                med(|p| p.session),
            ];
            let mut row = vec![n.to_string()];
            row.extend(p.iter().map(|v| format!("{:.1}", v * 1e3)));
            row.push(format!("{:.1}", p.iter().sum::<f64>() * 1e3));
            g.row(row);
        }
    }
    if !g.rows.is_empty() {
        doc.grid(g);
    }
}

/// Top 3 suites of each cipher, and whether its MACs differ beyond noise.
fn per_cipher(doc: &mut Document, warnings: &mut Vec<String>, mode: Mode, stats: &[SuiteStats]) {
    let ranked = analysis::rank(stats, mode);
    let mut ciphers: Vec<&str> = Vec::new();
    for r in &ranked {
        if let Some(c) = r.stats.suite.cipher.as_deref() {
            if !ciphers.contains(&c) {
                ciphers.push(c);
            }
        }
    }
    let mut g = Grid::new(
        format!("Top 3 per cipher ({mode})"),
        &["Cipher", "MAC", unit(mode), "±95%", "n"],
    )
    .right(&[2, 3, 4]);
    let mut within_noise = Vec::new();
    for c in ciphers {
        let own: Vec<SuiteStats> = ranked
            .iter()
            .filter(|r| r.stats.suite.cipher.as_deref() == Some(c))
            .map(|r| r.stats.clone())
            .collect();
        let own_ranked = analysis::rank(&own, mode);
        for r in own_ranked.iter().take(3) {
            let Some(f) = r.stats.figure else { continue };
            g.row(vec![
                c.to_string(),
                name(&r.stats.suite.mac, "<implicit>"),
                fmt(mode, f.mean),
                f.ci95.map_or("-".into(), |x| fmt(mode, x)),
                r.stats.ok.to_string(),
            ]);
        }
        let with_mac: Vec<&Ranked> = own_ranked
            .iter()
            .filter(|r| r.stats.suite.mac.is_some() && r.stats.figure.is_some())
            .collect();
        if with_mac.len() > 1 && with_mac.iter().all(|r| r.tie_with_best) {
            within_noise.push(c.to_string());
        }
    }
    doc.grid(g);
    if !within_noise.is_empty() {
        warnings.push(format!(
            "{mode}: differences among MACs are within noise for {}",
            within_noise.join(", ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(figs: &[(&str, &[f64])]) -> Vec<Ranked> {
        let stats: Vec<SuiteStats> = figs
            .iter()
            .map(|(c, v)| SuiteStats {
                mode: Mode::Send,
                suite: Suite {
                    cipher: Some(c.to_string()),
                    ..Suite::default()
                },
                ok: v.len(),
                failed: 0,
                refused: false,
                figure: analysis::summarize(v),
                client_cpu: None,
                server_cpu: None,
                client_busy: None,
                server_busy: None,
                phases: None,
                compression_factor: None,
                rekey: None,
                echo: None,
                bytes: 0,
                last_error: None,
            })
            .collect();
        analysis::rank(&stats, Mode::Send)
    }

    #[test]
    fn bars_scale_to_the_largest_and_mark_intervals() {
        let r = ranked(&[("fast", &[800e6, 820e6, 780e6]), ("slow", &[200e6])]);
        let text = bars(&r, Mode::Send, 20, false);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("fast + <implicit> ") && lines[0].contains('┤'),
            "{text}"
        );
        assert!(lines[0].ends_with("800.0 ±49.7"), "{text}");
        let full = lines[0].matches('█').count();
        let quarter = lines[1].matches('█').count();
        assert!(full >= 17 && (4..=5).contains(&quarter), "{text}");
        let ascii = bars(&r, Mode::Send, 20, true);
        assert!(
            ascii.is_ascii() && ascii.contains('#') && ascii.contains('|'),
            "{ascii}"
        );
    }

    #[test]
    fn grade_is_the_worst_part() {
        let s = Suite {
            cipher: Some("aes128-ctr".into()),
            mac: Some("hmac-md5".into()),
            ..Suite::default()
        };
        assert_eq!(suite_grade(&s), "broken");
        let s = Suite {
            cipher: Some("rot13".into()),
            ..Suite::default()
        };
        assert_eq!(suite_grade(&s), "unknown");
        assert_eq!(suite_grade(&Suite::default()), "-");
    }
}
