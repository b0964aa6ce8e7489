//! `sshbench run` against a real tinysshd: a server with one cipher, one host key type
//! and one session per connection (it ends a connection when its first session ends), as
//! on small routers and appliances. Runs as root (a mount namespace for its login; CI).

use crate::common;

use rusqlite::Connection;

/// The default run (all four modes) works: sshbench finds that the server will not
/// carry a suite's send, receive and echo over one connection, says so, and gives every
/// sample a connection of its own; no counted sample fails, and each mode has its answer.
#[test]
fn a_server_with_one_session_per_connection_gets_a_connection_per_sample() {
    let server = common::tinyssh::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let out = common::sshbench()
        .args(["run", "-F"])
        .arg(server.ssh_config())
        .args(["tinyssh-test", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    common::assert_success(&out, "run against tinysshd");
    let (stdout, stderr) = (common::text(&out.stdout), common::text(&out.stderr));
    let answer = common::words(&stdout);
    assert!(
        answer.contains("note: the server ends a connection after its first session"),
        "{stdout}"
    );
    for mode in ["connect ", "send ", "receive ", "echo "] {
        let line = (stdout.lines().find(|l| l.starts_with(mode)))
            .unwrap_or_else(|| panic!("no {mode}line: {stdout}"));
        assert!(!line.contains("no figure"), "{stdout}");
    }
    // Its one cipher is legacy there (no strict KEX): the block says why it has no
    // Ciphers line.
    assert!(
        stdout.contains(
            "# Ciphers: nothing measured is of an allowed grade; `sshbench recommend` says why"
        ),
        "{stdout}"
    );
    // One cipher: nothing to race for send, receive and echo; two key exchanges for
    // connect (how a race went is `show`'s).
    let show = common::sshbench()
        .args(["show", "tinyssh-test", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let show = common::text(&show.stdout);
    assert_eq!(show.matches("How the race went").count(), 1, "{show}");
    let c = Connection::open(&db).unwrap();
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    let failed = "SELECT count(*) FROM samples WHERE round > 0 AND outcome != 'ok'";
    assert_eq!(count(failed), 0, "{stderr}");
    for mode in ["send", "receive", "echo"] {
        let ok = format!(
            "SELECT count(*) FROM samples WHERE round > 0 AND outcome = 'ok' AND mode = '{mode}' \
             AND negotiated_json LIKE '%chacha20-poly1305@openssh.com%'"
        );
        assert!(count(&ok) >= 3, "{mode}: {stderr}");
    }
}

/// A workload runs several sessions over one connection (a directory made, the tool,
/// the directory removed), which such a server cannot carry: the run says why it was not
/// measured instead of passing on the tool's "Connection closed", and the rest of the
/// run goes on.
#[test]
fn a_workload_on_a_server_with_one_session_per_connection_says_why_it_is_not_measured() {
    let server = common::tinyssh::start();
    let dir = tempfile::tempdir().unwrap();
    let out = common::sshbench()
        .args(["run", "-F"])
        .arg(server.ssh_config())
        .args([
            "tinyssh-test",
            "--mode",
            "sftp-put-file",
            "--rounds",
            "2",
            "--db",
        ])
        .arg(dir.path().join("db.sqlite"))
        .output()
        .unwrap();
    common::assert_success(&out, "a workload against tinysshd");
    let stdout = common::text(&out.stdout);
    let words = common::words(&stdout);
    assert!(
        words.contains(
            "sftp-put-file not measured: the server ends a connection after its first session"
        ),
        "{stdout}"
    );
    // The workload's raw stream, beside it, is measured.
    let send = stdout.lines().find(|l| l.starts_with("send "));
    assert!(send.is_some_and(|l| l.contains("MB/s")), "{stdout}");
    // The private directory the first session made is gone with that session's
    // connection, and removed over a connection of its own.
    assert_eq!(server.left_in_tmp(), Vec::<String>::new());
}
