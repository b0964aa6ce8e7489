//! The workload rows of `show`: their own columns (the rate next to the raw stream's,
//! the share, the limit) and the note under each workload table that says why.

use super::scope::{Scope, figure_text};
use super::show::{ModeSection, SuiteRow};
use crate::analysis::workload::{percent, suite_spread};

/// A workload table's own columns, and which are figures.
pub const COLUMNS: (&[&str], &[usize]) = (
    &[
        "Options",
        "MB/s",
        "±95%",
        "n",
        "Files",
        "Raw MB/s",
        "Of raw",
        "CPU (s/GB)",
        "Grade",
        "Tie",
        "Limit",
    ],
    &[1, 2, 3, 4, 5, 6, 7],
);

/// Under a workload's table: why its best suite moves as it does, and how much the suite
/// choice changes the mode compared with what the tool's own limit costs.
pub fn workload_note(scope: &Scope, sec: &ModeSection) -> Option<String> {
    let best = sec.rows.iter().find(|r| r.mean.is_some())?;
    let v = best.workload.as_ref()?;
    let mut note = format!("  {}", v.sentence);
    if let (Some(spread), Some(share)) = (suite_spread(&scope.stats, sec.mode), v.share) {
        let faster = match 1.0 / share {
            x if x >= 2.0 => format!("{x:.0}× as fast"),
            x => format!("{:.0}% faster", (x - 1.0).max(0.0) * 100.0),
        };
        note.push_str(&format!(
            "\n  Choosing the suite changes {} by {:.0}%; the raw stream is {faster}.",
            sec.mode,
            spread * 100.0
        ));
    }
    Some(note)
}

/// A workload row's own cells: its rate, what it is of the raw stream's, and why.
pub fn workload_cells(r: &SuiteRow, mean: String, ci: String, cpu: String) -> Vec<String> {
    let v = r.workload.as_ref();
    vec![
        r.suite.tool.clone().unwrap_or_else(|| "defaults".into()),
        mean,
        ci,
        r.n.to_string(),
        r.files.map_or("-".into(), |f| f.to_string()),
        v.and_then(|v| v.raw)
            .map_or("-".into(), |x| figure_text(r.mode, x)),
        v.and_then(|v| v.share).map_or("-".into(), percent),
        cpu,
        r.grade.to_string(),
        r.tie().into(),
        v.map_or("-", |v| v.limit.as_str()).into(),
    ]
}
