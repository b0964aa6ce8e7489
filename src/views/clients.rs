//! Which client is fastest: a run of several clients (`--ssh`) compared mode by mode,
//! each client by its best suite of an allowed grade (the one its own answer names).

use super::export::Document;
use super::headline::{self, overlaps};
use super::scope::{Scope, figure_text, suite_label, unit};
use super::show::SuiteRow;
use crate::analysis;
use crate::model::Mode;
use crate::store::clients::client_software;
use serde::Serialize;

/// One client's best in one mode.
#[derive(Clone, Debug, Serialize)]
pub struct ClientBest {
    /// The client's software (`OpenSSH_10.0p2`), as its results' destination names it.
    pub client: String,
    pub destination: String,
    pub best: SuiteRow,
}

/// One mode across the clients, fastest first.
#[derive(Clone, Debug, Serialize)]
pub struct ClientRace {
    pub mode: Mode,
    pub clients: Vec<ClientBest>,
    /// The fastest cannot be told apart from the next (their intervals overlap).
    pub tied: bool,
    /// How much better the fastest is than the slowest: a share (0.3 = 30% faster or
    /// quicker).
    pub gain: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClientsView {
    pub modes: Vec<ClientRace>,
}

/// The clients' answers (one scope per client) compared mode by mode; a mode only
/// one client has a figure for is left out.
pub fn view(scopes: &[Scope]) -> ClientsView {
    let lines: Vec<(String, String, headline::HeadlineView)> = (scopes.iter())
        .map(|s| {
            let version = s.runs.last().map_or("", |r| r.client_version.as_str());
            (
                client_software(version).to_string(),
                s.destination.clone(),
                headline::view(s),
            )
        })
        .collect();
    let mut modes: Vec<Mode> = lines
        .iter()
        .flat_map(|(_, _, h)| h.modes.iter().map(|l| l.mode))
        .collect();
    modes.sort();
    modes.dedup();
    let races = modes.into_iter().filter_map(|mode| {
        let mut clients: Vec<ClientBest> = (lines.iter())
            .filter_map(|(client, destination, h)| {
                let line = h.modes.iter().find(|l| l.mode == mode)?;
                line.best.mean?;
                Some(ClientBest {
                    client: client.clone(),
                    destination: destination.clone(),
                    best: line.best.clone(),
                })
            })
            .collect();
        if clients.len() < 2 {
            return None;
        }
        let higher = analysis::higher_is_better(mode);
        let mean = |c: &ClientBest| c.best.mean.unwrap_or(f64::NAN);
        clients.sort_by(|a, b| {
            let o = mean(a).total_cmp(&mean(b));
            if higher { o.reverse() } else { o }
        });
        let (first, last) = (mean(&clients[0]), mean(clients.last().expect("two")));
        let gain = if higher {
            first / last - 1.0
        } else {
            last / first - 1.0
        };
        Some(ClientRace {
            mode,
            tied: overlaps(&clients[0].best, &clients[1].best),
            gain,
            clients,
        })
    });
    ClientsView {
        modes: races.collect(),
    }
}

/// One mode's sentence: which client is fastest and by how much, or that the clients
/// cannot be told apart; each client's best suite and figure after it.
pub fn sentence(r: &ClientRace) -> String {
    let fastest = &r.clients[0];
    let slowest = r.clients.last().expect("two clients");
    let said = if r.tied {
        "the clients are too close to call (within the noise)".to_string()
    } else if analysis::higher_is_better(r.mode) {
        format!(
            "{} is fastest, {:.2}× as fast as {}",
            fastest.client,
            1.0 + r.gain,
            slowest.client
        )
    } else {
        format!(
            "{} is quickest; {} takes {:.0}% longer",
            fastest.client,
            slowest.client,
            r.gain * 100.0
        )
    };
    let each: Vec<String> = (r.clients.iter())
        .map(|c| {
            let figure = c.best.mean.map_or("?".into(), |m| figure_text(r.mode, m));
            format!(
                "{} {figure} {} with {}",
                c.client,
                unit(r.mode),
                suite_label(r.mode, &c.best.suite)
            )
        })
        .collect();
    format!("{:<8} {said} ({})", r.mode.as_str(), each.join("; "))
}

/// The comparison as a document (nothing when no mode has two clients' figures).
pub fn render(v: &ClientsView) -> Document {
    let mut doc = Document::default();
    if v.modes.is_empty() {
        return doc;
    }
    doc.text("Which client is fastest (each by its best suite of an allowed grade):");
    for r in &v.modes {
        doc.para(sentence(r), "         ");
    }
    doc
}
