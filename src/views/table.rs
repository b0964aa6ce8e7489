//! Terminal tables of aggregated results, one per mode, best first.

use crate::analysis::SuiteStats;
use crate::offer::catalogue::{self, Grade};
use crate::suite::{AlgoKind, Mode, Suite};
use comfy_table::{Cell, CellAlignment, Table, presets};

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

fn new_table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(header.to_vec());
    t
}

fn right(s: String) -> Cell {
    Cell::new(s).set_alignment(CellAlignment::Right)
}

fn result(s: &SuiteStats) -> String {
    match (s.refused, s.failed) {
        (true, _) => "refused".into(),
        (false, 0) => "ok".into(),
        (false, n) => format!("{n} failed"),
    }
}

fn scaled(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{:.*}", digits, x * scale))
}

/// Render one table per mode present, then the suites that could not be measured.
pub fn render(stats: &[SuiteStats]) -> String {
    let mut out = String::new();
    for mode in Mode::ALL {
        let mut rows: Vec<&SuiteStats> = stats.iter().filter(|s| s.mode == mode).collect();
        if rows.is_empty() {
            continue;
        }
        let median = |s: &SuiteStats| s.figure.map(|f| f.median);
        if mode == Mode::Connect {
            rows.sort_by(|a, b| {
                median(a)
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&median(b).unwrap_or(f64::INFINITY))
            });
            let mut t = new_table(&[
                "KEX",
                "Host key",
                "Median (ms)",
                "±95% (ms)",
                "n",
                "Client CPU (ms)",
                "Grade",
                "Result",
            ]);
            for s in &rows {
                t.add_row(vec![
                    Cell::new(s.suite.kex.as_deref().unwrap_or("(default)")),
                    Cell::new(s.suite.hostkey.as_deref().unwrap_or("(default)")),
                    right(scaled(median(s), 1e3, 1)),
                    right(scaled(s.figure.and_then(|f| f.ci95), 1e3, 1)),
                    right(s.ok.to_string()),
                    right(scaled(s.client_cpu.map(|c| c.median), 1e3, 1)),
                    Cell::new(suite_grade(&s.suite)),
                    Cell::new(result(s)),
                ]);
            }
            out.push_str(&format!(
                "connect ({} suites; time from ssh start to exit)\n{t}\n\n",
                rows.len()
            ));
        } else {
            rows.sort_by(|a, b| {
                median(b)
                    .unwrap_or(0.0)
                    .total_cmp(&median(a).unwrap_or(0.0))
            });
            let mut t = new_table(&[
                "Cipher",
                "MAC",
                "Median MB/s",
                "±95%",
                "n",
                "Size",
                "Client CPU (s/GB)",
                "Grade",
                "Result",
            ]);
            for s in &rows {
                t.add_row(vec![
                    Cell::new(s.suite.cipher.as_deref().unwrap_or("(default)")),
                    Cell::new(s.suite.mac.as_deref().unwrap_or("<implicit>")),
                    right(scaled(median(s), 1e-6, 1)),
                    right(scaled(s.figure.and_then(|f| f.ci95), 1e-6, 1)),
                    right(s.ok.to_string()),
                    right(if s.bytes > 0 {
                        human_bytes(s.bytes)
                    } else {
                        "-".into()
                    }),
                    right(scaled(s.client_cpu.map(|c| c.median), 1.0, 2)),
                    Cell::new(suite_grade(&s.suite)),
                    Cell::new(result(s)),
                ]);
            }
            out.push_str(&format!(
                "{mode} ({} suites; handshake excluded; MB = 10^6 bytes; ±95% = Student-t interval of the mean)\n{t}\n\n",
                rows.len()
            ));
        }
    }
    let problems: Vec<&SuiteStats> = stats.iter().filter(|s| s.refused || s.failed > 0).collect();
    if !problems.is_empty() {
        out.push_str("Not measured or failed:\n");
        for s in problems {
            out.push_str(&format!(
                "  {} {}: {} - {}\n",
                s.mode,
                s.suite.label(),
                result(s),
                s.last_error.as_deref().unwrap_or("")
            ));
        }
    }
    out
}

/// `33554432` → `32 MiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn bytes_are_human() {
        assert_eq!(human_bytes(32 << 20), "32 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(10), "10 B");
    }
}
