//! `sshbench algos`: what each side supports, what is negotiable, and how safe it is.

use crate::model::AlgoKind;
use crate::offer::AlgoRow;
use crate::offer::client::SoftwareVersion;
use crate::offer::server::ServerOffer;
use comfy_table::{Table, presets};
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

/// Terminal tables, one per kind.
pub fn render_table(r: &AlgosReport) -> String {
    let mut out = format!("destination: {}\nclient: {}\n", r.destination, r.client.raw);
    match (r.server, &r.server_error) {
        (Some(s), _) => {
            let method = &s.method;
            out.push_str(&format!(
                "server: {} ({method}; strict KEX: {})\n",
                s.banner,
                if s.kexinit.strict_kex() { "yes" } else { "no" }
            ));
        }
        (None, Some(e)) => out.push_str(&format!("server: unknown ({e})\n")),
        (None, None) => out.push_str("server: unknown\n"),
    }
    for kind in AlgoKind::ALL {
        let rows: Vec<&AlgoRow> = r.algorithms.iter().filter(|a| a.kind == kind).collect();
        if rows.is_empty() {
            continue;
        }
        let mut t = Table::new();
        t.load_preset(presets::UTF8_FULL_CONDENSED);
        let mut header = vec!["Name", "Client", "Server", "Negotiable", "Grade"];
        if kind == AlgoKind::Cipher {
            header.push("AEAD");
        }
        header.push("Why");
        t.set_header(header);
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
            t.add_row(row);
        }
        out.push_str(&format!(
            "\n{} ({})\n{t}\n",
            kind.label(),
            kind.config_keyword()
        ));
    }
    out
}

/// Machine-readable form.
pub fn render_json(r: &AlgosReport) -> String {
    serde_json::to_string_pretty(r).expect("serializable") + "\n"
}
