//! `report --fleet`: a self-contained HTML page with one hosts × suites heat map per
//! mode (each cell a host's share of its own best) and the fleet's recommendation. The
//! template auto-escapes, so host and algorithm names are shown as text.

use super::HostFigures;
use super::table::FleetView;
use crate::model::Mode;
use crate::views::scope::{display_value, suite_label, unit};
use anyhow::{Context, Result};
use minijinja::{Environment, context};
use serde::Serialize;

const TEMPLATE: &str = include_str!("../templates/fleet.html");

/// Columns per mode: beyond this the map stops being readable.
pub const MAX_SUITES: usize = 40;

#[derive(Serialize)]
struct Column {
    label: String,
    grade: String,
}

#[derive(Serialize)]
struct Cell {
    share: Option<f64>,
    percent: String,
    /// 0 (red) to 120 (green).
    hue: f64,
    figure: String,
}

#[derive(Serialize)]
struct Row {
    host: String,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct Map {
    mode: Mode,
    suites: Vec<Column>,
    rows: Vec<Row>,
    cut: bool,
    total: usize,
}

fn cell(mode: Mode, found: Option<(f64, f64)>) -> Cell {
    match found {
        Some((mean, share)) => Cell {
            share: Some(share),
            percent: format!("{:.0}%", share * 100.0),
            // Full green at the host's best, red at half of it or less.
            hue: ((share - 0.5) / 0.5).clamp(0.0, 1.0) * 120.0,
            figure: format!("{:.1} {}", display_value(mode, mean), unit(mode)),
        },
        None => Cell {
            share: None,
            percent: String::new(),
            hue: 0.0,
            figure: String::new(),
        },
    }
}

fn maps(view: &FleetView, hosts: &[HostFigures]) -> Vec<Map> {
    let rel: Vec<(&String, &Vec<_>)> = hosts
        .iter()
        .map(|h| (&h.destination, &h.relative))
        .collect();
    let mut out = Vec::new();
    for m in &view.modes {
        let suites: Vec<_> = m.suites.iter().take(MAX_SUITES).collect();
        let rows = rel
            .iter()
            .map(|(host, figures)| Row {
                host: host.to_string(),
                cells: suites
                    .iter()
                    .map(|s| {
                        let f = figures.iter().find(|f| f.0 == m.mode && f.1 == s.suite);
                        cell(m.mode, f.map(|f| (f.2, f.3)))
                    })
                    .collect(),
            })
            .collect();
        out.push(Map {
            mode: m.mode,
            suites: suites
                .iter()
                .map(|s| Column {
                    label: suite_label(m.mode, &s.suite),
                    grade: s.grade.clone(),
                })
                .collect(),
            rows,
            cut: m.suites.len() > MAX_SUITES,
            total: m.suites.len(),
        });
    }
    out
}

/// The page.
pub fn render(view: &FleetView, hosts: &[HostFigures], recommendation: &str) -> Result<String> {
    let mut env = Environment::new();
    env.add_template("fleet.html", TEMPLATE)?;
    let page = env
        .get_template("fleet.html")?
        .render(context! {
            hosts => view.hosts,
            modes => maps(view, hosts),
            recommendation => recommendation,
        })
        .context("rendering the fleet report")?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Suite;
    use crate::offer::grade::Grader;

    fn host(name: &str, share: f64) -> HostFigures {
        let suite = Suite {
            cipher: Some("<img src=x onerror=alert(1)>".into()),
            ..Suite::default()
        };
        HostFigures {
            destination: name.into(),
            relative: vec![(Mode::Send, suite, 1e8 * share, share)],
            grader: Grader::new(Some(true)),
            measured: Vec::new(),
            recommend: None,
            way: None,
        }
    }

    /// Names come from servers and users: the page shows them as text.
    #[test]
    fn hostile_names_are_escaped_and_cells_coloured_by_share() {
        let hosts = [host("<script>alert(1)</script>", 1.0), host("b", 0.5)];
        let view = super::super::table::build(&hosts);
        let page = render(&view, &hosts, "Host <b>").unwrap();
        assert!(
            !page.contains("<script>alert") && !page.contains("<img src=x"),
            "{page}"
        );
        assert!(page.contains("&lt;script&gt;") && page.contains("Host &lt;b&gt;"));
        // 100%: green (hue 120); half the host's best: red (0).
        assert!(
            page.contains("hsl(120.0, 70%, 80%)") && page.contains("hsl(0.0, 70%, 80%)"),
            "{page}"
        );
    }
}
