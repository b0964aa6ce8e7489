//! `show --chart`: horizontal bars of the means with their 95% intervals, in Unicode
//! blocks or ASCII.

use super::scope::{figure_text, suite_label};
use crate::analysis::Ranked;
use crate::model::Mode;

/// One bar's cells: `width` cells long at `max`, the interval's ends marked; Unicode
/// blocks (eighths) or, for `ascii`, `#` and `|`.
fn bar_cells(mean: f64, ci: Option<f64>, max: f64, width: usize, ascii: bool) -> String {
    let scale = |v: f64| {
        if max > 0.0 {
            v / max * width as f64
        } else {
            0.0
        }
    };
    let eighths = (scale(mean) * 8.0).round() as usize;
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
    if let Some(ci) = ci.filter(|c| *c > 0.0) {
        let (lo, hi) = (
            scale(mean - ci).round() as usize,
            scale(mean + ci).round() as usize,
        );
        let (open, close) = if ascii { ('|', '|') } else { ('├', '┤') };
        if lo < cells.len() && lo != hi {
            cells[lo] = open;
        }
        if hi < cells.len() {
            cells[hi] = close;
        }
    }
    cells.into_iter().collect()
}

/// Horizontal bars of the means, `width` cells long at the largest value.
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
        let bar = bar_cells(f.mean, f.ci95, max, width, ascii);
        let pm = if ascii { "+-" } else { "±" };
        let ci = f
            .ci95
            .map_or(String::new(), |c| format!(" {pm}{}", figure_text(mode, c)));
        out.push_str(&format!(
            "{label:<pad$} {bar} {}{ci}\n",
            figure_text(mode, f.mean)
        ));
    }
    out
}
