//! Terminal tables of a run's samples, one per mode, fastest first.

use crate::measure::Sample;
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

fn cpu(sample: &Sample) -> String {
    sample
        .client_cpu
        .map(|c| format!("{:.3}", c.total().as_secs_f64()))
        .unwrap_or_else(|| "-".into())
}

/// Render one table per mode present, then a list of samples that did not succeed.
pub fn render(samples: &[Sample]) -> String {
    let mut out = String::new();
    for mode in Mode::ALL {
        let mut rows: Vec<&Sample> = samples.iter().filter(|s| s.mode == mode).collect();
        if rows.is_empty() {
            continue;
        }
        let ok = |s: &Sample| s.outcome.is_success();
        if mode == Mode::Connect {
            rows.sort_by(|a, b| ok(b).cmp(&ok(a)).then(a.wall.cmp(&b.wall)));
            let mut t = new_table(&[
                "KEX",
                "Host key",
                "Time (ms)",
                "Client CPU (s)",
                "Grade",
                "Result",
            ]);
            for s in &rows {
                t.add_row(vec![
                    Cell::new(s.suite.kex.as_deref().unwrap_or("(default)")),
                    Cell::new(s.suite.hostkey.as_deref().unwrap_or("(default)")),
                    right(if ok(s) {
                        format!("{:.1}", s.wall.as_secs_f64() * 1e3)
                    } else {
                        "-".into()
                    }),
                    right(cpu(s)),
                    Cell::new(suite_grade(&s.suite)),
                    Cell::new(s.outcome.label()),
                ]);
            }
            out.push_str(&format!("connect ({} suites)\n{t}\n\n", rows.len()));
        } else {
            let rate = |s: &Sample| s.throughput().unwrap_or(0.0);
            rows.sort_by(|a, b| rate(b).total_cmp(&rate(a)));
            let mut t = new_table(&[
                "Cipher",
                "MAC",
                "MB/s",
                "Transfer (s)",
                "Wall (s)",
                "Client CPU (s)",
                "Grade",
                "Result",
            ]);
            for s in &rows {
                t.add_row(vec![
                    Cell::new(s.suite.cipher.as_deref().unwrap_or("(default)")),
                    Cell::new(s.suite.mac.as_deref().unwrap_or("<implicit>")),
                    right(
                        s.throughput()
                            .map_or("-".into(), |r| format!("{:.1}", r / 1e6)),
                    ),
                    right(
                        s.transfer
                            .filter(|_| ok(s))
                            .map_or("-".into(), |d| format!("{:.3}", d.as_secs_f64())),
                    ),
                    right(format!("{:.3}", s.wall.as_secs_f64())),
                    right(cpu(s)),
                    Cell::new(suite_grade(&s.suite)),
                    Cell::new(s.outcome.label()),
                ]);
            }
            let bytes = rows.iter().map(|s| s.bytes).max().unwrap_or(0);
            out.push_str(&format!(
                "{mode} ({} suites, {} per sample, handshake excluded; MB = 10^6 bytes)\n{t}\n\n",
                rows.len(),
                human_bytes(bytes)
            ));
        }
    }
    let problems: Vec<&Sample> = samples.iter().filter(|s| !s.outcome.is_success()).collect();
    if !problems.is_empty() {
        out.push_str("Not measured:\n");
        for s in problems {
            out.push_str(&format!(
                "  {} {}: {} - {}\n",
                s.mode,
                s.suite.label(),
                s.outcome.label(),
                s.outcome.message().unwrap_or("")
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
