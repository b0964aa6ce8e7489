//! `show`: the classic table (Destination, Mode, MAC, Cipher, KEX, Time) with throughput,
//! interval, n, CPU, grade and the tie mark, or bars. The table, CSV and JSON are all
//! rendered from one [`ShowView`].

mod table;

pub use super::bars::bars;
use super::export::Document;
pub use super::scope::RunNote;
use super::scope::{Scope, ceiling_sentence, notes_text, suite_label, unit};
use super::workload::WorkloadLine;
use super::workload::workload_note;
use crate::analysis::ceiling::PathCeiling;
use crate::analysis::streams::StreamsFigure;
use crate::analysis::{self, Bound, PathWindow, Percentiles, Ranked, SuiteStats};
use crate::model::{Mode, Phases, Rekey, Stop, Suite};
use crate::offer::grade::SuiteGrade;
use serde::Serialize;
pub use table::OwnColumns;
use table::table;

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
    /// The plain ranking by figure; else, fastest first, the suites of an allowed grade
    /// measured as such lead, and sums and legacy or broken suites follow.
    pub all_grades: bool,
}

/// One suite with raw figures and units: a row of every table and of the JSON.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteRow {
    pub mode: Mode,
    #[serde(flatten)]
    pub suite: Suite,
    pub rank: usize,
    /// The best measured suite of its mode.
    #[serde(skip)]
    pub best: bool,
    pub tie_with_best: bool,
    pub n: usize,
    pub failed: usize,
    pub refused: bool,
    pub unavailable: bool,
    /// Workloads: files per sample, and the comparison with the raw stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadLine>,
    /// Send: the median round trip (seconds) through the session before the transfer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<f64>,
    /// The channel window the transfer met and the path's round trip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_window: Option<PathWindow>,
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
    pub bound: Option<Bound>,
    /// Connect: median seconds per phase.
    pub phases: Option<Phases>,
    pub compression_factor: Option<f64>,
    /// Transfers: bytes of the encrypted stream between rekeys and one rekey's stall
    /// (seconds), as spread into the figure.
    pub rekey: Option<Rekey>,
    /// Echo: percentiles (seconds) over every timed keystroke.
    pub echo: Option<Percentiles>,
    pub grade: SuiteGrade,
    pub last_error: Option<String>,
    /// Connect: a pair not measured, its figure summed from its parts'.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sum: bool,
    /// A raced run: why it got no more rounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
}

impl SuiteRow {
    /// What a ranking leads with: a suite measured as such whose every forced
    /// algorithm has an allowed grade (recommended or acceptable), or ssh's defaults.
    pub fn leads(&self) -> bool {
        use crate::offer::catalogue::Grade;
        let allowed = matches!(
            self.grade,
            SuiteGrade::Defaults | SuiteGrade::Known(Grade::Recommended | Grade::Acceptable)
        );
        allowed && !self.sum && self.mean.is_some()
    }

    pub fn new(r: &Ranked, grade: SuiteGrade) -> SuiteRow {
        let (s, f) = (&r.stats, r.stats.figure);
        SuiteRow {
            mode: s.mode,
            suite: s.suite.clone(),
            rank: r.rank,
            stop: None,
            best: r.best,
            tie_with_best: r.tie_with_best,
            n: s.ok,
            sum: s.sum,
            failed: s.failed,
            refused: s.refused,
            unavailable: s.unavailable,
            files: s.files,
            workload: None,
            rtt: s.rtt,
            path_window: s.path_window,
            unit: if s.mode.is_throughput() {
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
            client_cpu: s.client_cpu.map(|c| c.median),
            server_cpu: s.server_cpu.map(|c| c.median),
            client_busy: s.client_busy,
            server_busy: s.server_busy,
            bound: s.bound(),
            phases: s.phases,
            compression_factor: s.compression_factor,
            rekey: s.rekey,
            echo: s.echo,
            grade,
            last_error: s.last_error.as_ref().map(crate::views::problem::say),
        }
    }

    /// A row with its grade for the scope's server and, for a workload, its comparison
    /// with the raw stream among the scope's suites.
    pub fn in_scope(r: &Ranked, scope: &Scope) -> SuiteRow {
        SuiteRow {
            workload: crate::analysis::workload::verdict_among(&scope.stats, &r.stats)
                .map(|v| super::workload::line(r.stats.mode, &r.stats.suite, &v)),
            stop: scope.stop(r.stats.mode, &r.stats.suite),
            ..SuiteRow::new(r, scope.grade(&r.stats.suite))
        }
    }

    /// A window- or link-bound suite: what its window allows and what would help.
    pub fn bound_sentence(&self) -> Option<String> {
        super::verdicts::window_bound(self.mode, self.bound?, self.path_window?, self.mean?)
    }

    /// `best`, `≈ best` (interval overlaps the best one's), `refused`, `failed` or
    /// nothing.
    pub fn tie(&self) -> &'static str {
        if self.refused {
            "refused"
        } else if self.unavailable && self.mean.is_none() {
            "unavailable"
        } else if self.mean.is_none() {
            "failed"
        } else {
            match (self.best, self.tie_with_best) {
                (true, _) => "best",
                (_, true) => "≈ best",
                _ => "",
            }
        }
    }
}

/// One mode's rows as shown, and how many suites it had before `--top`.
#[derive(Clone, Debug)]
pub struct ModeSection {
    pub mode: Mode,
    pub total: usize,
    /// Of `total`, the suites derived as sums (not measured as such).
    pub sums: usize,
    /// Whether the allowed suites measured as such were put first.
    pub allowed_first: bool,
    pub rows: Vec<SuiteRow>,
    /// `--chart`: the ranked statistics the bars are drawn from.
    pub ranked: Vec<Ranked>,
}

/// Everything `show` prints.
#[derive(Clone, Debug, Serialize)]
pub struct ShowView {
    pub destination: String,
    pub runs: Vec<i64>,
    pub suites: Vec<SuiteRow>,
    #[serde(skip)]
    pub header: String,
    #[serde(skip)]
    pub sections: Vec<ModeSection>,
    /// Suites refused or with failures, in the selected modes: one line each.
    #[serde(skip)]
    pub problems: Vec<String>,
    /// Parallel streams of the selected modes (`run --streams`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamsFigure>,
    /// What the path carries in the selected transfer modes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ceilings: Vec<PathCeiling>,
    /// How the runs measured where they departed from the usual.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<RunNote>,
}

fn ordered(scope: &Scope, mode: Mode, opts: &ShowOptions) -> Vec<Ranked> {
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
    ranked
}

/// Rank once, per selected mode, and keep what `show` prints.
pub fn view(scope: &Scope, opts: &ShowOptions) -> ShowView {
    let mut sections = Vec::new();
    for mode in scope.modes().into_iter().filter(|m| opts.modes.contains(m)) {
        let mut pairs: Vec<(Ranked, SuiteRow)> = (ordered(scope, mode, opts).into_iter())
            .map(|r| {
                let row = SuiteRow::in_scope(&r, scope);
                (r, row)
            })
            .collect();
        let (total, sums) = (pairs.len(), pairs.iter().filter(|p| p.1.sum).count());
        let allowed_first = opts.sort == SortKey::Speed && !opts.worst && !opts.all_grades;
        if allowed_first {
            // Stable: each part stays fastest first.
            pairs.sort_by_key(|(_, row)| !row.leads());
        }
        if let Some(n) = opts.top {
            pairs.truncate(n);
        }
        let (ranked, rows) = pairs.into_iter().unzip();
        sections.push(ModeSection {
            mode,
            total,
            sums,
            allowed_first,
            rows,
            ranked,
        });
    }
    let problems = scope
        .stats
        .iter()
        .filter(|s| opts.modes.contains(&s.mode) && (s.refused || s.unavailable || s.failed > 0))
        .map(problem_line)
        .collect();
    ShowView {
        destination: scope.destination.clone(),
        runs: scope.run_ids(),
        suites: sections.iter().flat_map(|s| s.rows.clone()).collect(),
        header: scope.header(),
        sections,
        problems,
        streams: (scope.streams.iter())
            .filter(|f| opts.modes.contains(&f.mode))
            .cloned()
            .collect(),
        ceilings: (scope.ceilings.iter())
            .filter(|c| opts.modes.contains(&c.mode))
            .cloned()
            .collect(),
        notes: scope.run_notes(),
    }
}

/// What a mode's suites are and how they are ordered: "115 suites: 28 measured, 87
/// sums of two measured ones; recommended and acceptable suites measured as such first
/// (--all-grades: by figure alone)".
fn counted_sentence(sec: &ModeSection) -> String {
    let counted = match sec.sums {
        0 => format!("{} suites, all measured", sec.total),
        n => format!(
            "{} suites: {} measured, {n} sums of measured ones",
            sec.total,
            sec.total - n
        ),
    };
    match sec.allowed_first {
        true => format!(
            "{counted}; recommended and acceptable suites measured as such first \
             (--all-grades: by figure alone)."
        ),
        false => format!("{counted}."),
    }
}

/// The classic table, or bars with `opts.chart`.
pub fn show(scope: &Scope, opts: &ShowOptions) -> (Document, ShowView) {
    let v = view(scope, opts);
    let mut doc = Document::default();
    doc.text(v.header.clone());
    for sec in &v.sections {
        // The title names the table in CSV too: it stays as scripts knew it.
        let title = format!(
            "{}: {} of {} suites{}",
            sec.mode,
            sec.rows.len(),
            sec.total,
            if opts.worst { ", worst first" } else { "" }
        );
        match opts.chart {
            Some(ascii) => {
                doc.text(format!(
                    "\n{title} ({}, mean with 95% interval)",
                    unit(sec.mode)
                ));
                doc.code(bars(&sec.ranked, sec.mode, 40, ascii));
            }
            None => doc.grid(table(&v.destination, sec, title)),
        }
        doc.para(counted_sentence(sec), "  ");
        if let Some(note) = workload_note(scope, sec) {
            doc.text(note);
        }
        if sec.rows.iter().any(|r| r.sum) {
            doc.text(super::scope::sum_note(sec.mode));
        }
        if let Some(t) = super::scope::race_tally(scope, sec.mode) {
            doc.text(super::scope::race_sentence(&t));
        }
        for f in v.streams.iter().filter(|f| f.mode == sec.mode) {
            doc.text(super::verdicts::streams(f));
        }
        for c in v.ceilings.iter().filter(|c| c.mode == sec.mode) {
            doc.text(ceiling_sentence(c));
        }
    }
    if !v.problems.is_empty() {
        doc.text(format!(
            "\nNot measured or failed:\n{}",
            v.problems.join("\n")
        ));
    }
    if let Some(notes) = notes_text(&v.notes) {
        doc.text(notes);
    }
    (doc, v)
}

fn problem_line(s: &SuiteStats) -> String {
    let what = if s.refused {
        "refused".to_string()
    } else if s.unavailable {
        "not available".to_string()
    } else {
        format!("{} failed", s.failed)
    };
    format!(
        "  {} {}: {what} - {}",
        s.mode,
        suite_label(s.mode, &s.suite),
        s.last_error
            .as_ref()
            .map(crate::views::problem::say)
            .unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::SuiteStats;
    use crate::model::Suite;

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
                unavailable: false,
                files: None,
                rtt: None,
                behind_the_path: false,
                sum: false,
                path_window: None,
                path_tcp: None,
                figure: analysis::summarize(v),
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
            lines[0].starts_with("fast ") && lines[0].contains('┤'),
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
}
