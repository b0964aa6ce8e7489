//! What `recommend` says when a server leaves no acceptable choice for a kind: which
//! names were measured, what each is exposed to, and what would fix it.

use super::rank::Policy;
use crate::analysis::SuiteStats;
use crate::model::{AlgoKind, AlgoLists, Mode};
use crate::offer::catalogue::{self, Grade};

/// The names of `kind` measured in `modes`, in the order first seen.
fn measured(stats: &[SuiteStats], kind: AlgoKind, modes: &[Mode]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for n in stats
        .iter()
        .filter(|s| modes.contains(&s.mode) && s.figure.is_some())
        .filter_map(|s| s.suite.get(kind))
    {
        if !names.iter().any(|x| x == n) {
            names.push(n.to_string());
        }
    }
    names
}

/// Whether any name of `kind` was measured in `modes` (so that none being allowed is a
/// dead end, not a gap in the run).
pub(super) fn measured_any(stats: &[SuiteStats], kind: AlgoKind, modes: &[Mode]) -> bool {
    !measured(stats, kind, modes).is_empty()
}

/// One name, its grade here, and why.
fn describe(policy: Policy, kind: AlgoKind, name: &str) -> String {
    let Some(entry) = catalogue::lookup(kind, name) else {
        return format!("{name} (not in sshbench's catalogue)");
    };
    let grade = policy.grade(kind, name).unwrap_or(entry.grade);
    if policy.demoted(kind, name) {
        format!(
            "{name} ({grade} here: open to the Terrapin attack, CVE-2023-48795, because the server does not offer strict KEX)"
        )
    } else {
        format!("{name} ({grade}: {})", entry.reason)
    }
}

/// Names of a kind that are recommended on this server, for an sshd_config line: those
/// of the client's own preference list (`ssh -G`), names its OpenSSH knows, since the
/// catalogue also holds other implementations' (RFC 5647's `aes128-gcm`, which would
/// stop an OpenSSH sshd from starting); the catalogue's only where the run did not
/// record that list.
fn recommended(policy: Policy, kind: AlgoKind, client: &AlgoLists) -> Vec<String> {
    let good = |n: &&str| policy.grade(kind, n) == Some(Grade::Recommended);
    let names: Vec<&str> = match client.get(kind) {
        Some(list) if !list.is_empty() => list.iter().map(String::as_str).collect(),
        _ => (catalogue::names(kind))
            .filter(|n| catalogue::lookup(kind, n).is_some_and(|e| e.alias_of.is_none()))
            .collect(),
    };
    names
        .into_iter()
        .filter(good)
        .take(3)
        .map(String::from)
        .collect()
}

/// The note for a kind with nothing acceptable measured.
pub(super) fn note(
    stats: &[SuiteStats],
    keyword: super::Keyword,
    policy: Policy,
    client: &AlgoLists,
) -> String {
    let super::Keyword { kind, modes } = keyword;
    let keyword = kind.config_keyword();
    let mode_list: Vec<&str> = modes.iter().map(|m| m.as_str()).collect();
    let names = measured(stats, kind, modes);
    if names.is_empty() && mode_list.is_empty() {
        return format!("{keyword}: no send or receive was measured; left to ssh's defaults");
    }
    if names.is_empty() {
        return format!(
            "{keyword}: nothing was measured ({} mode); left to ssh's defaults",
            mode_list.join("/")
        );
    }
    let described: Vec<String> = names.iter().map(|n| describe(policy, kind, n)).collect();
    let mut fixes = Vec::new();
    if names.iter().any(|n| policy.demoted(kind, n)) {
        fixes.push(policy.server.strict_kex_fix().to_string());
    }
    let better = recommended(policy, kind, client);
    if !better.is_empty() {
        fixes.push(policy.server.offer_fix(keyword, &better.join(",")));
    }
    format!(
        "{keyword}: no {} choice was measured ({} mode), only {}; {}; `--allow legacy` lists them anyway. Left to ssh's defaults",
        match policy.max {
            Grade::Recommended => "recommended",
            _ => "acceptable",
        },
        mode_list.join("/"),
        described.join(", "),
        fixes.join("; or ")
    )
}
