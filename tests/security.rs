//! SECURITY.md's promises, each tried as an attacker would: numbers that do not fit,
//! secrets in the environment, a hostile server's words, rows planted in a database.

mod common;

use common::{sshbench, text};

/// A number that does not fit is a usage error (exit 2), never a panic.
#[test]
fn an_out_of_range_timeout_is_a_usage_error() {
    for args in [
        &["run", "--timeout", "18446744073709551615"][..],
        &["run", "--timeout", "0"],
        &["algos", "--timeout", "99999999"],
    ] {
        let out = sshbench().args(args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--timeout"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A login whose session prints escape sequences (setting the terminal's title, clearing
/// it) after words that look like ssh's: the words choose no failure class (only ssh's
/// own status 255 does), and no escape byte reaches stdout or stderr, in the run or in
/// the reports of what it stored.
#[test]
fn a_hostile_login_s_escape_sequences_never_reach_the_terminal() {
    let sb = common::sandbox(sshbench::model::AlgoLists::new());
    common::force_command(
        &sb,
        "printf 'Permission denied (publickey).\\033]0;pwned\\007\\033[2J\\342\\200\\256gpj.exe\\n' >&2; exit 1",
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hostile.sqlite");
    let out = sshbench()
        .args(["run", "-F"])
        .arg(sb.ssh_config())
        .arg(sshbench::sandbox::ALIAS)
        .arg("--db")
        .arg(&db)
        .args(["--mode", "send", "--rounds", "1", "--verbose"])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519"])
        .args([
            "--ciphers",
            "aes128-ctr",
            "--macs",
            "hmac-sha2-256-etm@openssh.com",
        ])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_no_escapes(&out.stdout, &out.stderr);
    assert!(stderr.contains("\\u{1b}]0;pwned"), "{stderr}");
    // Not an authentication failure: the session said so, not ssh.
    assert!(
        !stderr.contains("hint: sshbench needs key-based login"),
        "{stderr}"
    );
    for view in [
        &["show"][..],
        &["show", "--format", "json"],
        &["summary"],
        &["runs"],
    ] {
        let out = sshbench().args(view).arg("--db").arg(&db).output().unwrap();
        assert_no_escapes(&out.stdout, &out.stderr);
    }
}

/// Neither ESC, BEL nor a right-to-left override in either stream.
fn assert_no_escapes(stdout: &[u8], stderr: &[u8]) {
    for (name, bytes) in [("stdout", stdout), ("stderr", stderr)] {
        let t = text(bytes);
        assert!(
            !t.contains(['\u{1b}', '\u{7}', '\u{202e}']),
            "{name} holds a raw escape: {t:?}"
        );
    }
}
