//! `compare A B`: two destinations or runs side by side per suite, with the ratio and
//! whether the difference is significant (Welch's t-test, p < 0.05).

use super::export::{Document, Grid};
use super::report::{Scope, display_value, suite_label, unit};
use crate::analysis;
use crate::suite::{Mode, Suite};
use serde::Serialize;

#[derive(Serialize)]
struct Row<'a> {
    mode: Mode,
    #[serde(flatten)]
    suite: &'a Suite,
    a_mean: f64,
    b_mean: f64,
    /// B's figure over A's (throughput: > 1 means B is faster; connect: > 1 means B is
    /// slower).
    ratio: f64,
    p_value: Option<f64>,
    significant: bool,
}

#[derive(Serialize)]
struct CompareJson<'a> {
    a: &'a str,
    a_runs: Vec<i64>,
    b: &'a str,
    b_runs: Vec<i64>,
    suites: Vec<Row<'a>>,
}

pub fn compare(a: &Scope, b: &Scope) -> (Document, serde_json::Value) {
    let mut doc = Document::default();
    doc.text(format!("A = {}\nB = {}", a.destination, b.destination));
    let mut rows = Vec::new();
    for mode in Mode::ALL {
        let mut g = Grid::new(
            format!("{mode} ({})", unit(mode)),
            &["Suite", "A", "B", "B/A", "p", "Significant"],
        )
        .right(&[1, 2, 3, 4]);
        let mut any = false;
        for sa in a.stats.iter().filter(|s| s.mode == mode) {
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
            let significant = p.is_some_and(|p| p < 0.05);
            g.row(vec![
                suite_label(mode, &sa.suite),
                format!("{:.1}", display_value(mode, fa.mean)),
                format!("{:.1}", display_value(mode, fb.mean)),
                format!("{:.2}", fb.mean / fa.mean),
                p.map_or("-".into(), |p| format!("{p:.3}")),
                match (p, significant) {
                    (None, _) => "too few samples".into(),
                    (_, true) => "yes".into(),
                    (_, false) => "no".into(),
                },
            ]);
            rows.push(Row {
                mode,
                suite: &sa.suite,
                a_mean: fa.mean,
                b_mean: fb.mean,
                ratio: fb.mean / fa.mean,
                p_value: p,
                significant,
            });
            any = true;
        }
        if any {
            doc.grid(g);
        }
    }
    if rows.is_empty() {
        doc.text("No suite was measured successfully on both sides.");
    }
    let json = CompareJson {
        a: &a.destination,
        a_runs: a.run_ids(),
        b: &b.destination,
        b_runs: b.run_ids(),
        suites: rows,
    };
    (doc, serde_json::to_value(json).expect("serializable"))
}
