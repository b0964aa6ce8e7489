//! `compare A B`: two destinations or runs side by side per suite, with the ratio and
//! whether the difference is significant (Welch's t-test, p < 0.05). The table and the
//! JSON are rendered from one [`CompareView`].

use super::export::{Document, Grid};
use super::scope::{Scope, display_value, suite_label, unit, wrap};
use crate::analysis;
use crate::model::{Mode, Suite};
use serde::Serialize;

/// One suite measured on both sides.
#[derive(Clone, Debug, Serialize)]
pub struct CompareRow {
    pub mode: Mode,
    #[serde(flatten)]
    pub suite: Suite,
    pub a_mean: f64,
    pub b_mean: f64,
    /// B's figure over A's (throughput: > 1 means B is faster; connect: > 1 means B is
    /// slower).
    pub ratio: f64,
    pub p_value: Option<f64>,
    pub significant: bool,
}

/// Everything `compare` prints.
#[derive(Clone, Debug, Serialize)]
pub struct CompareView {
    pub a: String,
    pub a_runs: Vec<i64>,
    pub b: String,
    pub b_runs: Vec<i64>,
    pub suites: Vec<CompareRow>,
    /// Each side's notes on how its runs measured: where one side's differ from the
    /// other's (connect timed over sftp sessions), their figures differ in kind too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub a_notes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub b_notes: Vec<String>,
}

/// Pair the suites measured on both sides, mode by mode.
pub fn view(a: &Scope, b: &Scope) -> CompareView {
    let mut suites = Vec::new();
    for mode in Mode::ALL {
        // Summed connect pairs are estimates, not samples to test.
        for sa in a.stats.iter().filter(|s| s.mode == mode && !s.sum) {
            let Some(sb) = b
                .stats
                .iter()
                .find(|s| s.mode == mode && s.suite == sa.suite)
            else {
                continue;
            };
            let (Some(fa), Some(fb)) = (sa.figure, sb.figure) else {
                continue;
            };
            let p = analysis::welch_p(&fa, &fb);
            suites.push(CompareRow {
                mode,
                suite: sa.suite.clone(),
                a_mean: fa.mean,
                b_mean: fb.mean,
                ratio: fb.mean / fa.mean,
                p_value: p,
                significant: p.is_some_and(|p| p < 0.05),
            });
        }
    }
    CompareView {
        a: a.destination.clone(),
        a_runs: a.run_ids(),
        b: b.destination.clone(),
        b_runs: b.run_ids(),
        suites,
        a_notes: a.notes(),
        b_notes: b.notes(),
    }
}

fn cells(r: &CompareRow) -> Vec<String> {
    vec![
        suite_label(r.mode, &r.suite),
        format!("{:.1}", display_value(r.mode, r.a_mean)),
        format!("{:.1}", display_value(r.mode, r.b_mean)),
        format!("{:.2}", r.ratio),
        r.p_value.map_or("-".into(), |p| format!("{p:.3}")),
        match (r.p_value, r.significant) {
            (None, _) => "too few samples".into(),
            (_, true) => "yes".into(),
            (_, false) => "no".into(),
        },
    ]
}

pub fn compare(a: &Scope, b: &Scope) -> (Document, CompareView) {
    let v = view(a, b);
    let mut doc = Document::default();
    doc.text(format!("A = {}\nB = {}", v.a, v.b));
    for mode in Mode::ALL {
        let rows: Vec<&CompareRow> = v.suites.iter().filter(|r| r.mode == mode).collect();
        if rows.is_empty() {
            continue;
        }
        let mut g = Grid::new(
            format!("{mode} ({})", unit(mode)),
            &["Suite", "A", "B", "B/A", "p", "Significant"],
        )
        .right(&[1, 2, 3, 4])
        .names(&[0])
        .droppable(&[4, 3]);
        for r in rows {
            g.row(cells(r));
        }
        doc.grid(g);
    }
    if v.suites.is_empty() {
        doc.text("No suite was measured successfully on both sides.");
    }
    let notes: Vec<String> = (v.a_notes.iter().map(|n| ("A", n)))
        .chain(v.b_notes.iter().map(|n| ("B", n)))
        .map(|(side, n)| wrap(&format!("  {side}: {n}"), "     "))
        .collect();
    if !notes.is_empty() {
        doc.text(format!("\nHow the runs measured:\n{}", notes.join("\n")));
    }
    (doc, v)
}
