//! Fleet views: how a fleet run's hosts ended, and (`--fleet`) every suite across the
//! hosts of a selection, each host against its own best.

pub mod heat;
pub mod recommend;
pub mod table;

use crate::store::{FleetRecord, RunRecord};
use crate::views::export::{Document, Grid};
use serde::Serialize;

/// One host of a fleet run, as its end lists it.
#[derive(Clone, Debug, Serialize)]
pub struct HostLine {
    pub destination: String,
    pub status: String,
    pub run: Option<i64>,
    pub samples: i64,
    pub error: Option<String>,
}

/// How a fleet run's hosts ended.
#[derive(Clone, Debug, Serialize)]
pub struct FleetRunView {
    pub fleet: i64,
    pub hosts: Vec<HostLine>,
    pub complete: usize,
    pub failed: usize,
}

/// The table a fleet run ends with: every host, its state, its run and why it failed.
pub fn fleet_run(fleet: &FleetRecord, runs: &[RunRecord]) -> (Document, FleetRunView) {
    let hosts: Vec<HostLine> = fleet
        .hosts
        .iter()
        .map(|h| HostLine {
            destination: h.destination.clone(),
            status: h.status.clone(),
            run: h.run_id,
            samples: h
                .run_id
                .and_then(|id| runs.iter().find(|r| r.id == id))
                .map_or(0, |r| r.samples),
            error: h.error.clone(),
        })
        .collect();
    let count = |s: &str| hosts.iter().filter(|h| h.status == s).count();
    let view = FleetRunView {
        fleet: fleet.id,
        complete: count("complete"),
        failed: count("failed"),
        hosts,
    };
    let mut doc = Document::default();
    let mut g = Grid::new(
        format!(
            "fleet run {}: {} of {} hosts measured",
            fleet.id,
            view.complete,
            view.hosts.len()
        ),
        &["Host", "Status", "Run", "Samples", "Why"],
    )
    .right(&[2, 3]);
    for h in &view.hosts {
        g.row(vec![
            h.destination.clone(),
            h.status.clone(),
            h.run.map_or("-".into(), |r| r.to_string()),
            h.samples.to_string(),
            h.error.as_deref().map(first_line).unwrap_or_default(),
        ]);
    }
    doc.grid(g);
    (doc, view)
}

/// An error's first line, cut to a table cell's width.
fn first_line(e: &str) -> String {
    let line = e.lines().next().unwrap_or_default();
    match line.char_indices().nth(100) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}
