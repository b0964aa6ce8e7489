//! `sshbench algos`: what each side supports, what is negotiable, and how safe it is.

use super::export::{Document, Grid};
use crate::model::AlgoKind;
use crate::offer::AlgoRow;
use crate::offer::client::{self, SoftwareVersion};
use crate::offer::server::ServerOffer;
use serde::Serialize;

/// Everything the view shows.
#[derive(Debug, Serialize)]
pub struct AlgosReport<'a> {
    pub destination: &'a str,
    pub client: &'a SoftwareVersion,
    pub server: Option<&'a ServerOffer>,
    /// Why the server's offer is unknown, when it is.
    pub server_error: Option<String>,
    pub algorithms: &'a [AlgoRow],
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

/// The report as a document: who offers what, then one table per kind.
pub fn document(r: &AlgosReport) -> Document {
    let mut doc = Document::default();
    let server = match (r.server, &r.server_error) {
        (Some(s), _) => format!(
            "server: {} ({}; strict KEX: {}){}",
            s.banner,
            s.method,
            if s.kexinit.strict_kex() { "yes" } else { "no" },
            hpn_words(client::is_hpn(s.banner.trim_start_matches("SSH-2.0-")))
        ),
        (None, Some(e)) => format!("server: unknown ({e})"),
        (None, None) => "server: unknown".into(),
    };
    doc.text(format!(
        "destination: {}\nclient: {}{}\n{server}",
        r.destination,
        r.client.raw,
        hpn_words(r.client.is_hpn())
    ));
    for kind in AlgoKind::ALL {
        let rows: Vec<&AlgoRow> = r.algorithms.iter().filter(|a| a.kind == kind).collect();
        if !rows.is_empty() {
            doc.grid(kind_table(kind, &rows));
        }
    }
    doc
}

/// What a side's being HPN-SSH means for what sshbench measures.
fn hpn_words(hpn: bool) -> &'static str {
    if hpn {
        "\n  HPN-SSH: its receive window follows its TCP buffer (at most 15 MiB towards a stock OpenSSH sender)"
    } else {
        ""
    }
}

/// The whole terminal form (piped, or `--wide`).
pub fn render_table(r: &AlgosReport) -> String {
    use super::export::{Format, render};
    render(&document(r), &(), Format::Table, Default::default())
}

/// One kind's names: who offers each, its grade and why.
fn kind_table(kind: AlgoKind, rows: &[&AlgoRow]) -> Grid {
    let mut header = vec!["Name", "Client", "Server", "Negotiable", "Grade"];
    if kind == AlgoKind::Cipher {
        header.push("AEAD");
    }
    header.push("Why");
    let why = header.len() - 1;
    let title = format!("{} ({})", kind.label(), kind.config_keyword());
    let mut g = Grid::new(title, &header)
        .names(&[0])
        .grade(4)
        .droppable(&[why]);
    for a in rows {
        let mut why = a.reason.clone();
        if let Some(of) = &a.alias_of {
            why.push_str(&format!("; alias of {of}"));
        }
        if a.terrapin {
            why.push_str("; Terrapin (CVE-2023-48795): server lacks strict KEX");
        }
        let mut row = vec![
            a.name.clone(),
            yes_no(a.client).into(),
            yes_no(a.server).into(),
            if a.negotiable { "yes" } else { "no" }.into(),
            a.grade.map_or("unknown".into(), |g| g.to_string()),
        ];
        if kind == AlgoKind::Cipher {
            row.push(if a.aead { "yes" } else { "no" }.into());
        }
        row.push(why);
        g.row(row);
    }
    g
}

/// Machine-readable form.
pub fn render_json(r: &AlgosReport) -> String {
    serde_json::to_string_pretty(r).expect("serializable") + "\n"
}
