//! What can be negotiated: the client's algorithms, the server's, and their intersection.

pub mod catalogue;
pub mod client;
pub mod grade;
pub mod server;

use crate::model::{AlgoKind, AlgoLists};
use serde::Serialize;

/// Names worth trying to enable on a server we configure ourselves: the client's lists
/// first, then every catalogue name the client did not list.
pub fn candidates(client: &client::ClientOffer) -> AlgoLists {
    let mut out = AlgoLists::new();
    for kind in AlgoKind::ALL {
        let mut names: Vec<String> = client.lists.get(kind).unwrap_or_default().to_vec();
        for n in catalogue::names(kind) {
            if !names.iter().any(|m| m == n) {
                names.push(n.to_string());
            }
        }
        out.set(kind, names);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_client_s_own_implementation_is_negotiable_as_its_name_and_shares_its_risks() {
        let mut client = AlgoLists::new();
        client.set(AlgoKind::Cipher, v(&["chacha20-poly1305-mt@hpnssh.org"]));
        let mut server = AlgoLists::new();
        server.set(AlgoKind::Cipher, v(&["chacha20-poly1305@openssh.com"]));
        let rows = compare(&client, Some(&server), Some(false));
        let mt = rows
            .iter()
            .find(|r| r.name == "chacha20-poly1305-mt@hpnssh.org")
            .unwrap();
        assert!(mt.negotiable && mt.terrapin && mt.aead, "{mt:?}");
        assert!(
            !candidates(&client::ClientOffer::default())
                .get(AlgoKind::Cipher)
                .unwrap()
                .iter()
                .any(|n| n.contains("hpnssh.org"))
        );
    }

    #[test]
    fn intersect_keeps_left_order_and_unknown_kinds() {
        let mut client = AlgoLists::new();
        client.set(AlgoKind::Cipher, v(&["a", "b", "c"]));
        client.set(AlgoKind::Mac, v(&["m1"]));
        let mut server = AlgoLists::new();
        server.set(AlgoKind::Cipher, v(&["c", "a", "z"]));
        let both = client.intersect(&server);
        assert_eq!(both.get(AlgoKind::Cipher).unwrap(), v(&["a", "c"]));
        assert_eq!(both.get(AlgoKind::Mac).unwrap(), v(&["m1"]));
        assert_eq!(both.get(AlgoKind::Kex), None);
        assert!(both.contains(AlgoKind::Cipher, "c"));
        assert!(!both.contains(AlgoKind::Cipher, "z"));
    }
}

/// One algorithm name as both sides see it, with what the catalogue knows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AlgoRow {
    pub kind: AlgoKind,
    pub name: String,
    pub client: Option<bool>,
    pub server: Option<bool>,
    pub negotiable: bool,
    /// `None`: not in the catalogue (shown as unknown, never dropped).
    pub grade: Option<catalogue::Grade>,
    pub reason: String,
    pub aead: bool,
    pub alias_of: Option<String>,
    /// Vulnerable to the Terrapin prefix truncation attack (CVE-2023-48795) with this
    /// server, which does not offer strict KEX.
    pub terrapin: bool,
}

/// Terrapin (CVE-2023-48795) affects chacha20-poly1305 and CBC ciphers used with
/// encrypt-then-MAC, unless both sides use strict KEX.
pub fn terrapin_exposed(kind: AlgoKind, name: &str) -> bool {
    match kind {
        AlgoKind::Cipher => catalogue::on_wire(kind, name) == "chacha20-poly1305@openssh.com",
        AlgoKind::Mac => name.contains("-etm@"),
        _ => false,
    }
}

/// A CBC-mode cipher (`aes128-cbc`, `rijndael-cbc@lysator.liu.se`, ...): open to
/// Terrapin together with an encrypt-then-MAC MAC.
pub fn is_cbc(cipher: &str) -> bool {
    cipher.ends_with("-cbc") || cipher.contains("-cbc@")
}

/// Every name either side knows, per kind, client order first.
pub fn compare(
    client: &AlgoLists,
    server: Option<&AlgoLists>,
    strict_kex: Option<bool>,
) -> Vec<AlgoRow> {
    let grader = grade::Grader::new(strict_kex);
    let mut rows = Vec::new();
    for kind in AlgoKind::ALL {
        let c = client.get(kind);
        let s = server.and_then(|s| s.get(kind));
        let mut names: Vec<&String> = c.into_iter().flatten().collect();
        for n in s.into_iter().flatten() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        // EtM MACs are exposed only together with a negotiable CBC cipher.
        let has_cbc = kind == AlgoKind::Mac
            && client.get(AlgoKind::Cipher).is_some_and(|cs| {
                cs.iter().any(|c| {
                    is_cbc(c)
                        && server
                            .and_then(|s| s.get(AlgoKind::Cipher))
                            .is_none_or(|sc| sc.contains(c))
                })
            });
        for name in names {
            let entry = catalogue::lookup(kind, name);
            let in_client = c.map(|l| l.contains(name));
            let wire = catalogue::on_wire(kind, name);
            let in_server = s.map(|l| l.iter().any(|n| n == wire));
            let negotiable = in_client.unwrap_or(true) && in_server.unwrap_or(true);
            let exposed = terrapin_exposed(kind, name) && (kind == AlgoKind::Cipher || has_cbc);
            rows.push(AlgoRow {
                kind,
                name: name.clone(),
                client: in_client,
                server: in_server,
                negotiable,
                grade: grader.algo(kind, name),
                reason: match entry {
                    None => "not in sshbench's catalogue".to_string(),
                    Some(e) if grader.demoted(kind, name) => {
                        format!(
                            "{}; legacy here: open to Terrapin without strict KEX",
                            e.reason
                        )
                    }
                    Some(e) => e.reason.to_string(),
                },
                aead: kind == AlgoKind::Cipher && catalogue::is_aead(name),
                alias_of: entry.and_then(|e| e.alias_of).map(str::to_string),
                terrapin: exposed && negotiable && strict_kex == Some(false),
            });
        }
    }
    rows
}
