//! The catalogue's grades against ssh-audit's own verdicts on a real sshd (the sandbox,
//! every algorithm it supports switched on): nothing ssh-audit warns about or fails is
//! allowed by default (recommended or acceptable) unless the catalogue says why
//! (`LOOSER_THAN_SSH_AUDIT`), and no such reason is stale.

use super::common;
use sshbench::model::AlgoKind;
use sshbench::offer::catalogue::{self, Grade, LOOSER_THAN_SSH_AUDIT};
use std::path::PathBuf;

/// ssh-audit: `$SSH_AUDIT`, else on PATH (`pip install ssh-audit`; `.ci/run` puts it in
/// a virtual environment).
fn ssh_audit() -> PathBuf {
    if let Some(p) = std::env::var_os("SSH_AUDIT") {
        return PathBuf::from(p);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ssh-audit"))
            .find(|p| p.is_file())
    });
    on_path.expect("ssh-audit is not installed: pip install ssh-audit (PyPI), or set SSH_AUDIT")
}

#[test]
fn no_grade_is_looser_than_ssh_audit_s_without_a_reason() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    let out = std::process::Command::new(ssh_audit())
        .args(["-j", "-p", &sb.port().to_string(), sb.host()])
        .output()
        .expect("running ssh-audit");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("ssh-audit's JSON: {e}: {}", common::text(&out.stderr)));
    let mut looser = Vec::new();
    for (section, kind) in [
        ("kex", AlgoKind::Kex),
        ("key", AlgoKind::HostKey),
        ("enc", AlgoKind::Cipher),
        ("mac", AlgoKind::Mac),
    ] {
        for e in json[section].as_array().expect("a section of algorithms") {
            let name = e["algorithm"].as_str().unwrap();
            let notes = &e["notes"];
            let flagged = ["warn", "fail"]
                .iter()
                .any(|k| notes[k].as_array().is_some_and(|v| !v.is_empty()));
            let allowed = matches!(
                catalogue::grade(kind, name),
                Some(Grade::Recommended | Grade::Acceptable)
            );
            if flagged && allowed {
                looser.push(name.to_string());
            }
        }
    }
    assert!(looser.len() > 3, "ssh-audit saw too little: {json}");
    let reasons: Vec<&str> = LOOSER_THAN_SSH_AUDIT.iter().map(|(n, _)| *n).collect();
    let unexplained: Vec<&String> = looser
        .iter()
        .filter(|n| !reasons.contains(&n.as_str()))
        .collect();
    assert!(
        unexplained.is_empty(),
        "allowed, flagged by ssh-audit, no reason: {unexplained:?}"
    );
    let stale: Vec<&&str> = reasons
        .iter()
        .filter(|n| !looser.iter().any(|l| l == *n))
        .collect();
    assert!(
        stale.is_empty(),
        "reasons for what ssh-audit no longer flags: {stale:?}"
    );
}
