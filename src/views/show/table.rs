//! `show`'s table: the classic five columns (Destination, Mode, MAC, Cipher, KEX), each
//! mode's own after them, and every row's cells.

use super::{ModeSection, SuiteRow};
use crate::analysis::Percentiles;
use crate::model::{Mode, Stop};
use crate::views::export::Grid;
use crate::views::scope::{figure_text, name_or};
use crate::views::workload::{self, workload_cells};

/// The mode's own columns after the seeds' five (Destination, Mode, MAC, Cipher, KEX),
/// and which of them are figures (right-aligned, counted from the first own column).
fn own_columns(mode: Mode) -> (&'static [&'static str], &'static [usize]) {
    match mode {
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
        _ if mode.workload().is_some() => workload::COLUMNS,
        _ => (
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
    }
}

pub fn table(destination: &str, sec: &ModeSection, title: String) -> Grid {
    let (own, right) = own_columns(sec.mode);
    let mut headers = vec!["Destination", "Mode", "MAC", "Cipher", "KEX"];
    headers.extend(own);
    let mut g = Grid::new(title, &headers).right(&right.iter().map(|c| c + 5).collect::<Vec<_>>());
    let compressed = sec.rows.iter().any(|r| r.suite.compression.is_some());
    if compressed {
        g.headers.push("Compression".into());
        g.headers.push("Ratio".into());
    }
    let raced = sec.rows.iter().any(|r| r.stop.is_some());
    if raced {
        g.headers.push("Stopped".into());
    }
    for r in &sec.rows {
        let mut row = row_cells(destination, r);
        if compressed {
            row.push(r.suite.compression_label().unwrap_or_else(|| "none".into()));
            row.push(
                r.compression_factor
                    .map_or("-".into(), |f| format!("{f:.2}")),
            );
        }
        if raced {
            row.push(r.stop.map_or("-".into(), stop_text));
        }
        g.row(row);
    }
    g
}

/// `dropped after 3` (rounds), `separated after 9`, `budget after 12`, `rounds after 20`.
fn stop_text(s: Stop) -> String {
    format!("{} after {}", s.reason, s.round)
}

/// The n column: the samples, or `sum` for a pair not measured as such.
fn n_cell(r: &SuiteRow) -> String {
    if r.sum { "sum".into() } else { r.n.to_string() }
}

fn row_cells(destination: &str, r: &SuiteRow) -> Vec<String> {
    let mode = r.mode;
    let shown = |v: Option<f64>| v.map_or("-".into(), |v| figure_text(mode, v));
    let (mean, ci) = (shown(r.mean), shown(r.ci95));
    let session = |v: &Option<String>, implicit| match mode {
        Mode::Connect => "-".to_string(),
        _ => name_or(v, implicit),
    };
    let mut row = vec![
        destination.to_string(),
        mode.to_string(),
        session(&r.suite.mac, "<implicit>"),
        session(&r.suite.cipher, "(default)"),
        name_or(&r.suite.kex, "(default)"),
    ];
    if mode == Mode::Echo {
        let p = |get: fn(&Percentiles) -> f64| shown(r.echo.map(|e| get(&e)));
        row.extend([mean, ci, p(|e| e.p50), p(|e| e.p90), p(|e| e.p99)]);
        let keys = r.echo.map_or("0".into(), |e| e.n.to_string());
        row.extend([n_cell(r), if r.sum { "-".into() } else { keys }]);
        row.extend([r.grade.to_string(), r.tie().into()]);
        return row;
    }
    let cpu = r.client_cpu.map_or("-".into(), |c| match mode {
        Mode::Connect => format!("{:.1}", c * 1e3),
        _ => format!("{c:.2}"),
    });
    if mode.workload().is_some() {
        row.extend(workload_cells(r, mean, ci, cpu));
        return row;
    }
    row.push(match mode {
        Mode::Connect => name_or(&r.suite.hostkey, "(default)"),
        _ => r.mean.map_or("-".into(), |m| format!("{:.3}", 8e6 / m)),
    });
    row.extend([
        mean,
        ci,
        n_cell(r),
        cpu,
        r.grade.to_string(),
        r.tie().into(),
    ]);
    if mode.is_transfer() {
        row.push(r.server_cpu.map_or("-".into(), |c| format!("{c:.2}")));
        row.push(
            r.bound
                .map_or("-", crate::views::verdicts::bound_label)
                .into(),
        );
    }
    row
}
