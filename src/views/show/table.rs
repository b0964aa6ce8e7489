//! `show`'s table: the classic five columns (Destination, Mode, MAC, Cipher, KEX), each
//! mode's own after them, and every row's cells.

use super::{ModeSection, SuiteRow};
use crate::analysis::Percentiles;
use crate::model::{Mode, Stop};
use crate::views::export::Grid;
use crate::views::scope::{BUILT_IN_MAC, figure_text, name_or};
use crate::views::workload::{self, workload_cells};

/// A mode's own columns after the seeds' five (Destination, Mode, MAC, Cipher, KEX),
/// counted from the first own column: which are figures (right-aligned), which name
/// algorithms, and which a narrow terminal leaves out first.
pub struct OwnColumns {
    pub headers: &'static [&'static str],
    pub right: &'static [usize],
    pub names: &'static [usize],
    pub droppable: &'static [usize],
}

/// Echo's own columns: the round trip and its percentiles, the keystrokes.
const ECHO: OwnColumns = OwnColumns {
    headers: &[
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
    right: &[0, 1, 2, 3, 4, 5, 6],
    names: &[],
    droppable: &[6, 3, 2, 4, 5, 1, 8],
};

/// Typing's: the keystroke clock first, then as echo's (milliseconds).
const TYPING: OwnColumns = OwnColumns {
    headers: &[
        "Keystroke timing",
        "Echo (ms)",
        "±95%",
        "p50 (ms)",
        "p90 (ms)",
        "p99 (ms)",
        "n",
        "Keystrokes",
        "Grade",
        "Tie",
    ],
    right: &[1, 2, 3, 4, 5, 6, 7],
    names: &[0],
    droppable: &[7, 4, 3, 5, 6, 2, 9],
};

/// Exec's: how the commands reached the server, then each command's time.
const EXEC: OwnColumns = OwnColumns {
    headers: &[
        "Commands",
        "Per command (ms)",
        "±95%",
        "p50 (ms)",
        "p90 (ms)",
        "p99 (ms)",
        "n",
        "Commands run",
        "Grade",
        "Tie",
    ],
    ..TYPING
};

/// X11's: compression and the clock, then each xdpyinfo run's time.
const X11: OwnColumns = OwnColumns {
    headers: &[
        "Variant",
        "xdpyinfo (ms)",
        "±95%",
        "p50 (ms)",
        "p90 (ms)",
        "p99 (ms)",
        "n",
        "Runs",
        "Grade",
        "Tie",
    ],
    ..TYPING
};

fn own_columns(mode: Mode) -> OwnColumns {
    match mode {
        Mode::Echo => ECHO,
        Mode::Typing => TYPING,
        Mode::Exec => EXEC,
        Mode::X11 => X11,
        Mode::Connect => OwnColumns {
            headers: &[
                "Host key",
                "Time (ms)",
                "±95%",
                "n",
                "CPU (ms)",
                "Grade",
                "Tie",
            ],
            right: &[1, 2, 3, 4],
            names: &[0],
            droppable: &[4, 3, 2, 6],
        },
        _ if mode.workload().is_some() => workload::COLUMNS,
        _ => OwnColumns {
            headers: &[
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
            right: &[0, 1, 2, 3, 4, 7],
            names: &[],
            droppable: &[0, 7, 8, 4, 3, 2, 6],
        },
    }
}

/// The seeds' five columns before every mode's own.
const SEEDS: [&str; 5] = ["Destination", "Mode", "MAC", "Cipher", "KEX"];

pub fn table(destination: &str, sec: &ModeSection, title: String) -> Grid {
    let own = own_columns(sec.mode);
    let after = |cols: &[usize]| cols.iter().map(|c| c + SEEDS.len()).collect::<Vec<_>>();
    let mut headers = SEEDS.to_vec();
    headers.extend(own.headers);
    let mut names = vec![2, 3, 4];
    names.extend(after(own.names));
    // Stopped, then the compression ratio, go before the mode's own.
    let extra = headers.len();
    let compressed = sec.rows.iter().any(|r| r.suite.compression.is_some());
    let raced = sec.rows.iter().any(|r| r.stop.is_some());
    let mut droppable = match (compressed, raced) {
        (true, true) => vec![extra + 2, extra + 1],
        (false, true) => vec![extra],
        (true, false) => vec![extra + 1],
        (false, false) => vec![],
    };
    droppable.extend(after(own.droppable));
    let grade = headers.iter().position(|h| *h == "Grade");
    let mut g = Grid::new(title, &headers)
        .right(&after(own.right))
        .names(&names)
        // The title names the destination and the mode; a transfer's KEX and a
        // connection's cipher and MAC are not what it measures.
        .implied(match sec.mode {
            Mode::Connect => &[0, 1, 2, 3],
            _ => &[0, 1, 4],
        })
        .heading(match sec.mode {
            Mode::Connect => &[4, 5],
            _ => &[2, 3],
        })
        .droppable(&droppable);
    g.grade = grade;
    if compressed {
        g.headers.push("Compression".into());
        g.headers.push("Ratio".into());
    }
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

/// Echo's, typing's and exec's own cells: what varied (typing's clock, exec's way), the
/// figure, the pooled percentiles and how many keys or commands they pool.
fn operation_cells(r: &SuiteRow, mean: String, ci: String) -> Vec<String> {
    let shown = |v: Option<f64>| v.map_or("-".into(), |v| figure_text(r.mode, v));
    let mut row = match r.mode {
        // The client's own setting where it has none to choose.
        Mode::Typing => vec![(r.suite.keystrokes).map_or("(client's)".into(), |k| k.to_string())],
        Mode::Exec => vec![r.suite.exec.map_or("-".into(), |v| v.to_string())],
        Mode::X11 => vec![crate::views::scope::suite_label(Mode::X11, &r.suite)],
        _ => Vec::new(),
    };
    let p = |get: fn(&Percentiles) -> f64| shown(r.echo.map(|e| get(&e)));
    row.extend([mean, ci, p(|e| e.p50), p(|e| e.p90), p(|e| e.p99)]);
    let count = r.echo.map_or("0".into(), |e| e.n.to_string());
    row.extend([n_cell(r), if r.sum { "-".into() } else { count }]);
    row.extend([r.grade.to_string(), r.tie().into()]);
    row
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
        session(&r.suite.mac, BUILT_IN_MAC),
        session(&r.suite.cipher, "(default)"),
        name_or(&r.suite.kex, "(default)"),
    ];
    if mode.times_operations() {
        row.extend(operation_cells(r, mean, ci));
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
