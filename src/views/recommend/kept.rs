//! Names the client's own list has, of a better grade than any measured, that the run's
//! filter left out (`--kex curve25519-sha256` leaves out sntrup761x25519-sha512): a line
//! of the measured names alone would take away a protection ssh has by default (a
//! post-quantum key exchange), so they stay in it, unmeasured, placed by their grade.

use super::Line;
use super::rank::{Order, Policy, RankedName};
use crate::model::{AlgoKind, FilterSpec};
use crate::offer::catalogue;
use crate::plan::filter;

impl Line {
    /// The names to write: the measured ones and the kept ones in their place, first by
    /// grade, last with `--order speed`.
    pub fn listed(&self, order: Order) -> Vec<String> {
        let (a, b) = match order {
            Order::Grade => (&self.kept, &self.names),
            Order::Speed => (&self.names, &self.kept),
        };
        a.iter().chain(b).cloned().collect()
    }
}

/// A block for every server (`Host *`) leaves HostKeyAlgorithms as a comment: given a
/// list, ssh no longer prefers the key types known_hosts holds for each server (it does
/// only with none, or `+`/`-` lists), so a server known by another type would be refused.
pub(super) fn hold_host_keys(lines: &mut [Line]) {
    for l in lines.iter_mut().filter(|l| l.kind == AlgoKind::HostKey) {
        l.held = Some(HELD.to_string());
    }
}

/// Why a HostKeyAlgorithms line is a comment.
pub const HELD: &str = "left as a comment: with a list, ssh stops preferring the key type \
     known_hosts holds for each server, and refuses (or asks about) one known by another; set \
     it only for servers whose known_hosts entry has the first type";

/// Before a held line (indented by `indent`): its reason as a comment, and the `# `
/// that makes it one.
pub fn hold_mark(out: &mut String, indent: &str, held: Option<&str>) -> &'static str {
    match held {
        Some(why) => {
            out.push_str(&format!("{indent}# {why}\n"));
            "# "
        }
        None => "",
    }
}

/// The names to keep, in the client's order (every spelling it lists: a server may know
/// only one of an alias's names).
pub(super) fn kept(
    kind: AlgoKind,
    prefs: &[String],
    spec: Option<&FilterSpec>,
    ranked: &[RankedName],
    policy: Policy,
) -> Vec<String> {
    // Host keys are bounded by known_hosts, not by grade: a type kept first that
    // known_hosts lacks would be refused.
    if kind == AlgoKind::HostKey {
        return Vec::new();
    }
    let (Some(spec), Some(best)) = (
        spec,
        ranked.iter().filter_map(|r| policy.grade(kind, &r.0)).min(),
    ) else {
        return Vec::new();
    };
    let canonical = |n: &str| catalogue::canonical(kind, n).to_string();
    let measured = |n: &str| ranked.iter().any(|r| canonical(&r.0) == canonical(n));
    let mut out: Vec<String> = Vec::new();
    for n in prefs.iter().filter(|n| !n.contains("-cert-v0")) {
        let better = policy.grade(kind, n).is_some_and(|g| g < best);
        if better && !filter::keeps(spec, n) && !measured(n) && !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

/// The line's comment on the names kept, if any.
pub(super) fn comment(kind: AlgoKind, kept: &[String], policy: Policy) -> Option<String> {
    if kept.is_empty() {
        return None;
    }
    let grade = (kept.first())
        .and_then(|n| policy.grade(kind, n))
        .map_or("better", |g| g.as_str());
    let mut algorithms: Vec<&str> = kept.iter().map(|n| catalogue::canonical(kind, n)).collect();
    algorithms.dedup();
    let (it, its) = match algorithms.len() {
        1 => ("it", "its"),
        _ => ("them", "their"),
    };
    let place = match policy.order {
        Order::Grade => "first",
        Order::Speed => "last",
    };
    Some(format!(
        "{}: not measured ({} left {it} out), kept {place} for {its} grade ({grade}): your \
         client uses {it} unforced, and speed is no reason to give {it} up",
        kept.join(", "),
        filter::option(kind)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::offer::catalogue::Grade;
    use crate::offer::grade::Grader;
    use crate::views::recommend::{Order, ServerSoftware};

    fn policy(max: Grade) -> Policy {
        Policy {
            max,
            grader: Grader::new(Some(true)),
            order: Order::Grade,
            server: ServerSoftware::Sshd,
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_better_grade_the_filter_left_out_is_kept_with_every_spelling() {
        let prefs = names(&[
            "sntrup761x25519-sha512",
            "sntrup761x25519-sha512@openssh.com",
            "curve25519-sha256",
            "curve25519-sha256@libssh.org",
            "ecdh-sha2-nistp256",
            "diffie-hellman-group14-sha1",
        ]);
        let ranked: Vec<RankedName> = ["ecdh-sha2-nistp256", "curve25519-sha256"]
            .map(|n| (n.to_string(), 1.0, Vec::new()))
            .to_vec();
        let only = FilterSpec::Only(names(&["curve25519-sha256", "ecdh-sha2-nistp256"]));
        let kex = AlgoKind::Kex;
        let p = policy(Grade::Acceptable);
        let kept = kept(kex, &prefs, Some(&only), &ranked, p);
        // Not the measured name's alias, nor a worse grade the filter also left out.
        assert_eq!(kept, prefs[..2]);
        let said = comment(kex, &kept, p).unwrap();
        assert!(said.starts_with("sntrup761x25519-sha512, sntrup761x25519-sha512@openssh.com: not measured (--kex left it out), kept first for its grade (recommended)"), "{said}");
        // A filter that lets it be measured: the server did not offer it; none kept.
        let remove = FilterSpec::Remove(names(&["diffie-hellman-*"]));
        assert!(super::kept(kex, &prefs, Some(&remove), &ranked, p).is_empty());
        assert!(super::kept(kex, &prefs, None, &ranked, p).is_empty());
        // Never a host key type: known_hosts, not its grade, says which ssh may take.
        let hk = names(&["ssh-ed25519", "rsa-sha2-256"]);
        let rsa = [("rsa-sha2-256".to_string(), 1.0, Vec::new())];
        let only_rsa = FilterSpec::Only(names(&["rsa-sha2-256"]));
        assert!(super::kept(AlgoKind::HostKey, &hk, Some(&only_rsa), &rsa, p).is_empty());
        // Measured at the best grade already: nothing better to keep.
        let pq = [(
            "sntrup761x25519-sha512@openssh.com".to_string(),
            1.0,
            Vec::new(),
        )];
        assert!(super::kept(kex, &prefs, Some(&only), &pq, p).is_empty());
    }
}
