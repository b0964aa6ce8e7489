//! `sshbench report`: one self-contained HTML page (inline CSS, inline SVG charts, a
//! little inline script for sorting; nothing fetched from the network). The page comes
//! from a minijinja template with HTML auto-escaping, so whatever a server sent (its
//! banner, algorithm names) is shown as text; the charts come from plotters, which
//! escapes every label.

use super::charts::{self, Bar};
use super::report::{Scope, display_value, suite_grade, suite_label, unit};
use crate::analysis::{self, SuiteStats};
use crate::suite::Mode;
use anyhow::{Context, Result};
use minijinja::{Environment, Value, context};
use serde::Serialize;

const TEMPLATE: &str = include_str!("templates/report.html");

/// A chart: its title and SVG.
pub struct Chart {
    pub title: String,
    /// A file name stem for `--png`.
    pub name: String,
    pub svg: String,
}

fn graded_label(mode: Mode, s: &SuiteStats) -> String {
    let g = suite_grade(&s.suite);
    let label = suite_label(mode, &s.suite);
    if g == "recommended" {
        label
    } else {
        format!("{label} [{g}]")
    }
}

/// Every chart of the report.
pub fn charts(scope: &Scope) -> Result<Vec<Chart>> {
    let mut out = Vec::new();
    for mode in scope.modes() {
        let ranked = analysis::rank(&scope.stats, mode);
        let bars: Vec<Bar> = ranked
            .iter()
            .filter_map(|r| {
                let f = r.stats.figure?;
                Some(Bar {
                    label: graded_label(mode, &r.stats),
                    value: display_value(mode, f.mean),
                    ci: f.ci95.map_or(0.0, |c| display_value(mode, c)),
                    group: match mode {
                        Mode::Connect => r.stats.suite.kex.clone().unwrap_or_default(),
                        _ => r.stats.suite.cipher.clone().unwrap_or_default(),
                    },
                })
            })
            .collect();
        let (title, name) = match mode {
            Mode::Connect => (
                "Connect time per key exchange × host key (lower is better)".to_string(),
                "connect",
            ),
            Mode::Send => ("Send throughput per cipher × MAC".to_string(), "send"),
            Mode::Receive => ("Receive throughput per cipher × MAC".to_string(), "receive"),
            Mode::Echo => (
                "Keystroke echo round trip per cipher × MAC (median per session; lower is better)"
                    .to_string(),
                "echo",
            ),
        };
        out.push(Chart {
            svg: charts::bar_chart(&title, unit(mode), &bars)?,
            title,
            name: name.into(),
        });
        if mode == Mode::Connect {
            let phased: Vec<&analysis::Ranked> =
                ranked.iter().filter(|r| r.stats.phases.is_some()).collect();
            if !phased.is_empty() {
                let labels: Vec<String> = phased
                    .iter()
                    .map(|r| graded_label(mode, &r.stats))
                    .collect();
                let values: Vec<Vec<f64>> = phased
                    .iter()
                    .map(|r| {
                        let p = r.stats.phases.expect("filtered");
                        [p.tcp, p.version, p.kex, p.auth, p.session]
                            .iter()
                            .map(|v| v * 1e3)
                            .collect()
                    })
                    .collect();
                let title = "Where connect time goes (median per phase)".to_string();
                out.push(Chart {
                    svg: charts::stacked_bar_chart(
                        &title,
                        "ms",
                        &labels,
                        &["TCP", "version", "key exchange", "auth", "session"],
                        &values,
                    )?,
                    title,
                    name: "connect-phases".into(),
                });
            }
        }
        if mode == Mode::Echo {
            let tails: Vec<(&analysis::Ranked, analysis::Percentiles)> = ranked
                .iter()
                .filter_map(|r| Some((r, r.stats.echo?)))
                .collect();
            if !tails.is_empty() {
                let labels: Vec<String> = tails
                    .iter()
                    .map(|(r, _)| graded_label(mode, &r.stats))
                    .collect();
                let values: Vec<Vec<f64>> = tails
                    .iter()
                    .map(|(_, e)| {
                        [e.p50, e.p90 - e.p50, e.p99 - e.p90]
                            .iter()
                            .map(|v| display_value(mode, *v))
                            .collect()
                    })
                    .collect();
                let title = "Keystroke echo round trip percentiles (all keystrokes)".to_string();
                out.push(Chart {
                    svg: charts::stacked_bar_chart(
                        &title,
                        unit(mode),
                        &labels,
                        &["p50", "p50 → p90", "p90 → p99"],
                        &values,
                    )?,
                    title,
                    name: "echo-percentiles".into(),
                });
            }
        }
        if mode.is_transfer() {
            let cpu: Vec<Bar> = ranked
                .iter()
                .filter_map(|r| {
                    let c = r.stats.client_cpu?;
                    Some(Bar {
                        label: graded_label(mode, &r.stats),
                        value: c.median,
                        ci: 0.0,
                        group: r.stats.suite.cipher.clone().unwrap_or_default(),
                    })
                })
                .collect();
            let title =
                format!("Client CPU seconds per GB, {mode} (median; includes the handshake)");
            out.push(Chart {
                svg: charts::bar_chart(&title, "CPU s/GB", &cpu)?,
                title,
                name: format!("{mode}-cpu"),
            });
        }
        if mode.varies_cipher() {
            let mut ciphers: Vec<String> = Vec::new();
            let mut macs: Vec<String> = Vec::new();
            for r in &ranked {
                let c = r.stats.suite.cipher.clone().unwrap_or_default();
                let m = r
                    .stats
                    .suite
                    .mac
                    .clone()
                    .unwrap_or_else(|| "<implicit>".into());
                if !ciphers.contains(&c) {
                    ciphers.push(c);
                }
                if !macs.contains(&m) {
                    macs.push(m);
                }
            }
            let cell = |r: usize, c: usize| {
                scope
                    .stats
                    .iter()
                    .find(|s| {
                        s.mode == mode
                            && s.suite.cipher.as_deref() == Some(ciphers[r].as_str())
                            && s.suite.mac.as_deref().unwrap_or("<implicit>") == macs[c]
                    })
                    .and_then(|s| s.figure)
                    .map(|f| display_value(mode, f.mean))
            };
            let title = format!("{mode}: cipher × MAC ({})", unit(mode));
            out.push(Chart {
                svg: charts::heat_map(&title, &ciphers, &macs, &cell)?,
                title,
                name: format!("{mode}-heatmap"),
            });
        }
    }
    Ok(out)
}

#[derive(Serialize)]
struct CellOut {
    text: String,
    num: bool,
    v: f64,
    grade: bool,
}

fn text(s: impl Into<String>) -> CellOut {
    CellOut {
        text: s.into(),
        num: false,
        v: 0.0,
        grade: false,
    }
}

fn num(v: Option<f64>, digits: usize) -> CellOut {
    match v {
        Some(v) => CellOut {
            text: format!("{v:.digits$}"),
            num: true,
            v,
            grade: false,
        },
        None => CellOut {
            text: "-".into(),
            num: true,
            v: f64::NAN,
            grade: false,
        },
    }
}

/// The whole page.
pub fn render(
    scope: &Scope,
    recommendation: &str,
    warnings: &[String],
    charts: &[Chart],
) -> Result<String> {
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)
        .context("loading the report template")?;
    let tmpl = env.get_template("report.html")?;
    let headers = [
        "Mode",
        "KEX",
        "Host key",
        "Cipher",
        "MAC",
        "Mean",
        "±95%",
        "p99",
        "Unit",
        "n",
        "Failed",
        "Client CPU",
        "Grade",
    ];
    let mut rows = Vec::new();
    for mode in scope.modes() {
        for r in analysis::rank(&scope.stats, mode) {
            let s = &r.stats;
            let f = s.figure;
            let g = suite_grade(&s.suite);
            rows.push(vec![
                text(mode.as_str()),
                text(s.suite.kex.clone().unwrap_or_else(|| "-".into())),
                text(s.suite.hostkey.clone().unwrap_or_else(|| "-".into())),
                text(s.suite.cipher.clone().unwrap_or_else(|| "-".into())),
                text(s.suite.mac.clone().unwrap_or_else(|| {
                    if mode == Mode::Connect {
                        "-".into()
                    } else {
                        "<implicit>".into()
                    }
                })),
                num(f.map(|f| display_value(mode, f.mean)), 1),
                num(f.and_then(|f| f.ci95).map(|c| display_value(mode, c)), 1),
                num(s.echo.map(|e| display_value(mode, e.p99)), 1),
                text(unit(mode)),
                num(Some(s.ok as f64), 0),
                num(Some(s.failed as f64), 0),
                num(s.client_cpu.map(|c| c.median), 3),
                CellOut {
                    text: g,
                    num: false,
                    v: 0.0,
                    grade: true,
                },
            ]);
        }
    }
    let last = scope.runs.last();
    let machine = last.map_or(String::new(), |r| {
        let m = &r.machine;
        format!(
            "{} ({} cores; AES instructions: {}; SHA instructions: {}); {} {}",
            m.cpu_model.as_deref().unwrap_or("unknown CPU"),
            m.cores.map_or("?".into(), |c| c.to_string()),
            m.aes.map_or("unknown", |b| if b { "yes" } else { "no" }),
            m.sha.map_or("unknown", |b| if b { "yes" } else { "no" }),
            m.os,
            m.kernel.as_deref().unwrap_or("")
        )
    });
    let runs: Vec<Value> = scope
        .runs
        .iter()
        .map(|r| {
            context! {
                id => r.id,
                started => r.started_at.chars().take(19).collect::<String>().replace('T', " "),
                finished => r.finished_at.as_deref().map(|f| f.chars().take(19).collect::<String>().replace('T', " ")).unwrap_or_else(|| "unfinished".into()),
                status => r.status,
            }
        })
        .collect();
    let samples: usize = scope.stats.iter().map(|s| s.ok + s.failed).sum();
    let chart_values: Vec<Value> = charts
        .iter()
        .map(|c| context! { title => c.title, svg => Value::from_safe_string(c.svg.clone()) })
        .collect();
    let html = tmpl.render(context! {
        destination => scope.destination,
        runs => runs,
        client => last.map(|r| r.client_version.clone()).unwrap_or_default(),
        server => last.and_then(|r| r.server_version.clone()).unwrap_or_else(|| "unknown".into()),
        machine => machine,
        samples => samples,
        recommendation => recommendation,
        warnings => warnings,
        charts => chart_values,
        headers => headers,
        rows => rows,
        version => env!("CARGO_PKG_VERSION"),
    })?;
    Ok(html)
}
