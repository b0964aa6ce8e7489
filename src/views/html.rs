//! `sshbench report`: one self-contained HTML page (inline CSS, inline SVG charts, a
//! little inline script for sorting; nothing fetched from the network). The page comes
//! from a minijinja template with HTML auto-escaping, so whatever a server sent (its
//! banner, algorithm names) is shown as text; the charts come from plotters, which
//! escapes every label.

use super::charts::{self, Bar};
use super::scope::{Scope, display_value, suite_label, unit};
use super::show::{ModeSection, ShowView, SuiteRow};
use super::summary::Warning;
use crate::analysis::Percentiles;
use crate::model::{Mode, Phases, Shape};
use crate::offer::catalogue::Grade;
use crate::offer::grade::SuiteGrade;
use crate::store::RunRecord;
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

fn graded_label(r: &SuiteRow) -> String {
    let label = suite_label(r.mode, &r.suite);
    match r.grade {
        SuiteGrade::Known(Grade::Recommended) => label,
        g => format!("{label} [{g}]"),
    }
}

/// Every chart of the report, from `show`'s view of every mode and suite.
pub fn charts(view: &ShowView) -> Result<Vec<Chart>> {
    let mut out = Vec::new();
    for sec in &view.sections {
        let mode = sec.mode;
        out.push(figure_chart(sec)?);
        if mode == Mode::Connect {
            out.extend(phase_chart(&sec.rows)?);
        }
        if mode == Mode::Echo {
            out.extend(echo_chart(&sec.rows)?);
        }
        if mode.is_transfer() {
            out.push(cpu_chart(mode, &sec.rows)?);
        }
        if mode.varies_cipher() {
            out.push(heat_chart(mode, &sec.rows)?);
        }
    }
    Ok(out)
}

fn figure_chart(sec: &ModeSection) -> Result<Chart> {
    let mode = sec.mode;
    let bars: Vec<Bar> = sec
        .rows
        .iter()
        .filter_map(|r| {
            Some(Bar {
                label: graded_label(r),
                value: display_value(mode, r.mean?),
                ci: r.ci95.map_or(0.0, |c| display_value(mode, c)),
                group: match mode {
                    Mode::Connect => r.suite.kex.clone().unwrap_or_default(),
                    _ => r.suite.cipher.clone().unwrap_or_default(),
                },
            })
        })
        .collect();
    let (title, name) = match mode {
        Mode::Connect => (
            "Connect time per key exchange × host key (lower is better)".into(),
            "connect",
        ),
        Mode::Send => ("Send throughput per cipher × MAC".into(), "send"),
        Mode::Receive => ("Receive throughput per cipher × MAC".into(), "receive"),
        Mode::Echo => (
            "Keystroke echo round trip per cipher × MAC (median per session; lower is better)"
                .into(),
            "echo",
        ),
        Mode::Typing => (
            "Keystroke echo in a terminal per ObscureKeystrokeTiming (median per session; lower \
             is better)"
                .into(),
            "typing",
        ),
        m => (workload_title(m), m.as_str()),
    };
    Ok(Chart {
        svg: charts::bar_chart(&title, unit(mode), &bars)?,
        title,
        name: name.into(),
    })
}

/// A workload chart's title: what the tool moved, per cipher × MAC.
fn workload_title(mode: Mode) -> String {
    let Some(w) = mode.workload() else {
        return format!("{mode} per cipher × MAC");
    };
    let tool = w.tool.label();
    let way = if w.put { "upload" } else { "download" };
    let what = match w.shape {
        Shape::File => "one large file",
        Shape::Tree => "many small files",
    };
    format!("{tool} {way} of {what} per cipher × MAC")
}

fn phase_chart(rows: &[SuiteRow]) -> Result<Option<Chart>> {
    let phased: Vec<(&SuiteRow, Phases)> =
        rows.iter().filter_map(|r| Some((r, r.phases?))).collect();
    if phased.is_empty() {
        return Ok(None);
    }
    let labels: Vec<String> = phased.iter().map(|(r, _)| graded_label(r)).collect();
    let values: Vec<Vec<f64>> = phased
        .iter()
        .map(|(_, p)| {
            [p.tcp, p.version, p.kex, p.auth, p.session]
                .iter()
                .map(|v| v * 1e3)
                .collect()
        })
        .collect();
    let title = "Where connect time goes (median per phase)".to_string();
    Ok(Some(Chart {
        svg: charts::stacked_bar_chart(
            &title,
            "ms",
            &labels,
            &["TCP", "version", "key exchange", "auth", "session"],
            &values,
        )?,
        title,
        name: "connect-phases".into(),
    }))
}

fn echo_chart(rows: &[SuiteRow]) -> Result<Option<Chart>> {
    let tails: Vec<(&SuiteRow, Percentiles)> =
        rows.iter().filter_map(|r| Some((r, r.echo?))).collect();
    if tails.is_empty() {
        return Ok(None);
    }
    let labels: Vec<String> = tails.iter().map(|(r, _)| graded_label(r)).collect();
    let values: Vec<Vec<f64>> = tails
        .iter()
        .map(|(_, e)| {
            [e.p50, e.p90 - e.p50, e.p99 - e.p90]
                .iter()
                .map(|v| display_value(Mode::Echo, *v))
                .collect()
        })
        .collect();
    let title = "Keystroke echo round trip percentiles (all keystrokes)".to_string();
    Ok(Some(Chart {
        svg: charts::stacked_bar_chart(
            &title,
            unit(Mode::Echo),
            &labels,
            &["p50", "p50 → p90", "p90 → p99"],
            &values,
        )?,
        title,
        name: "echo-percentiles".into(),
    }))
}

fn cpu_chart(mode: Mode, rows: &[SuiteRow]) -> Result<Chart> {
    let cpu: Vec<Bar> = rows
        .iter()
        .filter_map(|r| {
            Some(Bar {
                label: graded_label(r),
                value: r.client_cpu?,
                ci: 0.0,
                group: r.suite.cipher.clone().unwrap_or_default(),
            })
        })
        .collect();
    // The figure is over each sample's measured window (`analysis::suites`), as its rate.
    let title = format!("Client CPU seconds per GB, {mode} (median over the measured windows)");
    Ok(Chart {
        svg: charts::bar_chart(&title, "CPU s/GB", &cpu)?,
        title,
        name: format!("{mode}-cpu"),
    })
}

fn heat_chart(mode: Mode, rows: &[SuiteRow]) -> Result<Chart> {
    let mac = |r: &SuiteRow| {
        r.suite
            .mac
            .clone()
            .unwrap_or_else(|| crate::views::scope::BUILT_IN_MAC.into())
    };
    let mut ciphers: Vec<String> = Vec::new();
    let mut macs: Vec<String> = Vec::new();
    for r in rows {
        let c = r.suite.cipher.clone().unwrap_or_default();
        if !ciphers.contains(&c) {
            ciphers.push(c);
        }
        if !macs.contains(&mac(r)) {
            macs.push(mac(r));
        }
    }
    let cell = |i: usize, j: usize| {
        rows.iter()
            .find(|r| r.suite.cipher.as_deref() == Some(ciphers[i].as_str()) && mac(r) == macs[j])
            .and_then(|r| r.mean)
            .map(|m| display_value(mode, m))
    };
    let title = format!("{mode}: cipher × MAC ({})", unit(mode));
    Ok(Chart {
        svg: charts::heat_map(&title, &ciphers, &macs, &cell)?,
        title,
        name: format!("{mode}-heatmap"),
    })
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

const HEADERS: [&str; 13] = [
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

fn table_row(r: &SuiteRow) -> Vec<CellOut> {
    let mode = r.mode;
    let or_dash = |v: &Option<String>| text(v.clone().unwrap_or_else(|| "-".into()));
    let implicit = if mode == Mode::Connect {
        "-"
    } else {
        crate::views::scope::BUILT_IN_MAC
    };
    vec![
        text(mode.as_str()),
        or_dash(&r.suite.kex),
        or_dash(&r.suite.hostkey),
        or_dash(&r.suite.cipher),
        text(r.suite.mac.clone().unwrap_or_else(|| implicit.into())),
        num(r.mean.map(|m| display_value(mode, m)), 1),
        num(r.ci95.map(|c| display_value(mode, c)), 1),
        num(r.echo.map(|e| display_value(mode, e.p99)), 1),
        text(unit(mode)),
        num(Some(r.n as f64), 0),
        num(Some(r.failed as f64), 0),
        num(r.client_cpu, 3),
        CellOut {
            text: r.grade.to_string(),
            num: false,
            v: 0.0,
            grade: true,
        },
    ]
}

fn machine_line(r: &RunRecord) -> String {
    let m = &r.machine;
    let yes_no = |b: Option<bool>| b.map_or("unknown", |b| if b { "yes" } else { "no" });
    format!(
        "{} ({} cores; AES instructions: {}; SHA instructions: {}); {} {}",
        m.cpu_model.as_deref().unwrap_or("unknown CPU"),
        m.cores.map_or("?".into(), |c| c.to_string()),
        yes_no(m.aes),
        yes_no(m.sha),
        m.os,
        m.kernel.as_deref().unwrap_or("")
    )
}

fn run_values(runs: &[RunRecord]) -> Vec<Value> {
    let time = |t: &str| t.chars().take(19).collect::<String>().replace('T', " ");
    runs.iter()
        .map(|r| {
            context! {
                id => r.id,
                started => time(&r.started_at),
                finished => r.finished_at.as_deref().map_or_else(|| "unfinished".into(), time),
                status => r.status,
            }
        })
        .collect()
}

/// What the page says beside its tables: the recommendation block, why each mode's
/// best is as fast as it is (`summary`'s sentences), and the warnings.
pub struct Said<'a> {
    pub recommendation: &'a str,
    pub why: &'a [String],
    pub warnings: &'a [Warning],
}

/// The whole page: `view` is `show`'s view of every mode and suite.
pub fn render(scope: &Scope, view: &ShowView, said: &Said, charts: &[Chart]) -> Result<String> {
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)
        .context("loading the report template")?;
    let tmpl = env.get_template("report.html")?;
    let rows: Vec<Vec<CellOut>> = view.suites.iter().map(table_row).collect();
    let last = scope.runs.last();
    let samples = scope.measured_samples();
    let chart_values: Vec<Value> = charts
        .iter()
        .map(|c| context! { title => c.title, svg => Value::from_safe_string(c.svg.clone()) })
        .collect();
    let warnings: Vec<String> = said.warnings.iter().map(Warning::to_string).collect();
    let html = tmpl.render(context! {
        destination => scope.destination,
        runs => run_values(scope.runs),
        client => last.map(|r| r.client_version.clone()).unwrap_or_default(),
        server => last.and_then(|r| r.server_version.clone()).unwrap_or_else(|| "unknown".into()),
        machine => last.map(machine_line).unwrap_or_default(),
        samples => samples,
        notes => view.notes,
        recommendation => said.recommendation,
        why => said.why,
        warnings => warnings,
        charts => chart_values,
        headers => HEADERS,
        rows => rows,
        version => env!("CARGO_PKG_VERSION"),
    })?;
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload's chart names its own tool, direction and data.
    #[test]
    fn workload_titles_name_the_tool_the_way_and_the_data() {
        let titles: Vec<String> = (Mode::ALL.into_iter())
            .filter(|m| m.workload().is_some())
            .map(workload_title)
            .collect();
        assert_eq!(titles[0], "sftp upload of one large file per cipher × MAC");
        assert_eq!(
            titles[7],
            "rsync download of many small files per cipher × MAC"
        );
        assert_eq!(
            titles[9],
            "scp -O upload of many small files per cipher × MAC"
        );
        let mut unique = titles.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), titles.len(), "{titles:?}");
    }
}
