//! The summary as a document: one table per part of each mode's summary.

use super::{MarginalRow, ModeSummary, PhaseRow, SummaryView, TopLists};
use crate::model::{AlgoKind, Mode};
use crate::views::export::{Document, Grid};
use crate::views::scope::{
    Scope, ceiling_sentence, figure_text, name_or, notes_text, suite_label, unit,
};
use crate::views::show::SuiteRow;

/// The summary as a document.
pub fn summary(scope: &Scope, tops: TopLists) -> (Document, SummaryView) {
    let v = super::view(scope, tops);
    let mut doc = Document::default();
    doc.text(v.header.clone());
    // The run's answer first: per mode the best allowed suite, how sure, and ssh's own
    // choice; the tables below say how it was found.
    for line in crate::views::headline::answer_lines(scope, crate::views::scope::WIDTH) {
        doc.para(line, "           ");
    }
    for sec in &v.sections {
        render_mode(&mut doc, sec, tops.n);
    }
    if v.warnings.is_empty() {
        doc.text("No warnings.");
    } else {
        let lines: Vec<String> = v.warnings.iter().map(|w| format!("- {w}")).collect();
        doc.text(format!("Warnings:\n{}", lines.join("\n")));
    }
    if let Some(notes) = notes_text(&v.notes) {
        doc.text(notes);
    }
    (doc, v)
}

/// Why a mode's best is as fast as it is, in sentences: a workload against its raw
/// stream; a window- or link-bound transfer, what its window allows; parallel streams;
/// the path's ceiling.
pub fn why(sec: &ModeSummary) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = sec.top.first().and_then(|r| r.workload.as_ref()) {
        out.push(v.sentence.clone());
    }
    out.extend(sec.top.first().and_then(SuiteRow::bound_sentence));
    out.extend(sec.streams.iter().map(crate::views::verdicts::streams));
    out.extend(sec.ceiling.iter().map(ceiling_sentence));
    out
}

fn render_mode(doc: &mut Document, sec: &ModeSummary, top: usize) {
    let mode = sec.mode;
    if let (true, Some(why)) = (sec.top.is_empty(), &sec.unavailable) {
        doc.text(format!("{mode}: not measured: {why}"));
        return;
    }
    if sec.top.is_empty() {
        // Empty tables would say less than this.
        doc.text(format!(
            "{mode}: no figure, no sample succeeded (`sshbench show --sort name` lists \
             what each suite met)"
        ));
        return;
    }
    doc.grid(top_table(sec, top));
    if sec.top.iter().any(|r| r.sum) {
        doc.text(crate::views::scope::sum_note(sec.mode));
    }
    if sec.set_aside > 0 {
        let (n, one) = (sec.set_aside, sec.set_aside == 1);
        doc.text(format!(
            "Not listed: {n} faster {} (--all-grades lists {}).",
            match one {
                true => "suite, a sum or of a legacy or broken grade",
                false => "suites, sums or of a legacy or broken grade",
            },
            if one { "it" } else { "them" },
        ));
    }
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
    for line in why(sec) {
        doc.text(line);
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
    let (p90, p99) = (
        format!("p90 ({})", unit(mode)),
        format!("p99 ({})", unit(mode)),
    );
    let mut headers = vec!["#", "Suite", unit(mode), "±95%", "n", "Grade", "Tie"];
    headers.extend(match mode {
        m if m.times_operations() => [p90.as_str(), p99.as_str()],
        _ => ["Bound", "CPU s/GB (client / server)"],
    });
    let right: &[usize] = if mode.times_operations() {
        &[0, 2, 3, 4, 7, 8]
    } else {
        &[0, 2, 3, 4]
    };
    let title = format!("Top {} {mode}", top.min(sec.top.len()));
    let mut g = Grid::new(title, &headers)
        .right(right)
        .names(&[1])
        .grade(5)
        .droppable(&[8, 7, 4, 3]);
    let shown = |v: Option<f64>| v.map_or("-".into(), |v| figure_text(mode, v));
    let two = |v: Option<f64>| v.map_or("?".into(), |v| format!("{v:.2}"));
    for r in &sec.top {
        let mut row = vec![
            r.rank.to_string(),
            suite_label(mode, &r.suite),
            shown(r.mean),
            shown(r.ci95),
            if r.sum { "sum".into() } else { r.n.to_string() },
            r.grade.to_string(),
            r.tie().into(),
        ];
        row.extend(match mode {
            m if m.times_operations() => {
                [shown(r.echo.map(|e| e.p90)), shown(r.echo.map(|e| e.p99))]
            }
            Mode::Connect => ["-".into(), "-".into()],
            _ => [
                r.bound
                    .map_or("-", crate::views::verdicts::bound_label)
                    .into(),
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
            "Kind",
            "Algorithm",
            "TCP",
            "Version",
            "Key exchange",
            "Auth",
            "Session",
            "Total",
        ],
    )
    .right(&[2, 3, 4, 5, 6, 7])
    .names(&[1])
    // What every algorithm takes alike goes first: the version exchange, TCP, then
    // the session's start and authentication.
    .droppable(&[3, 2, 6, 5]);
    for r in rows {
        let mut row = vec![r.kind.label().to_string(), r.name.clone()];
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
    .right(&[1, 2, 3])
    .names(&[0])
    .grade(4)
    .droppable(&[3, 1]);
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
    .right(&[2, 3, 4])
    .names(&[0, 1])
    .droppable(&[4]);
    let shown = |v: Option<f64>| v.map_or("-".into(), |v| figure_text(mode, v));
    for r in rows {
        g.row(vec![
            name_or(&r.suite.cipher, ""),
            name_or(&r.suite.mac, crate::views::scope::BUILT_IN_MAC),
            shown(r.mean),
            shown(r.ci95),
            if r.sum { "sum".into() } else { r.n.to_string() },
        ]);
    }
    g
}
