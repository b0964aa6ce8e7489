//! Dropbear's client: refused where OpenSSH's is expected (`ssh` on PATH), measured as
//! a client of its own (`--ssh dbclient`) against the sandbox and a Dropbear server.

use crate::common::{self, sshbench, text};
use std::process::Command;

/// An `ssh` on PATH that is not OpenSSH's (Dropbear's `dbclient`, as a router's firmware
/// links it) takes none of the options that force a suite: refused before anything is
/// written, with what it is and what to install.
#[test]
fn an_ssh_that_is_not_openssh_is_refused_with_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let dbclient = sshbench::sandbox::find_on_path("dbclient")
        .expect("dbclient is needed for this test (apt-get install dropbear-bin)");
    std::os::unix::fs::symlink(dbclient, bin.join("ssh")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let db = dir.path().join("db.sqlite");
    let db_arg = db.to_str().unwrap();
    for command in [
        vec!["run", "--mode", "connect", "--db", db_arg],
        vec!["algos"],
    ] {
        let out = sshbench()
            .env("PATH", &path)
            .args(&command)
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command:?}: {stderr}");
        assert!(stderr.contains("is Dropbear v"), "{command:?}: {stderr}");
        assert!(stderr.contains("not OpenSSH"), "{command:?}: {stderr}");
        assert!(stderr.contains("with --ssh"), "{command:?}: {stderr}");
        assert!(
            stderr.contains("apt-get install openssh-client"),
            "{stderr}"
        );
        assert!(!db.exists(), "{command:?} created the database");
    }
}

fn dbclient() -> String {
    let path = sshbench::sandbox::find_on_path("dbclient")
        .expect("dbclient is needed for this test (apt-get install dropbear-bin)");
    path.display().to_string()
}

/// OpenSSH's ssh and dbclient in one run against the sandbox, every mode dbclient has:
/// dbclient's connections per cipher, its samples all good (it offered only the forced
/// names), its advice its own flags and not an ssh_config block.
#[test]
fn dbclient_is_measured_beside_openssh_against_the_sandbox() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("db.sqlite");
    let clients = format!("ssh,{}", dbclient());
    let out = sshbench()
        .env("HOME", home.path())
        .args([
            "run",
            "--ssh",
            &clients,
            "--mode",
            "connect,send,receive,echo",
        ])
        .args(["--ciphers", "aes128-ctr,chacha20-poly1305@openssh.com"])
        .args(["--macs", "hmac-sha2-256", "--rounds", "2", "-q"])
        // One key exchange and host key: OpenSSH's connect suites are not what this is
        // about (all of them made the test 16 s longer).
        .args([
            "--kex",
            "curve25519-sha256",
            "--hostkeys",
            "ssh-ed25519",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let (said, err) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{err}\n{said}");
    let dropbear = said
        .split("destination: ")
        .find(|s| s.contains("(ssh Dropbear v"))
        .unwrap_or_else(|| panic!("no answer for dbclient: {said}"));
    assert!(
        dropbear.contains("connect  ") && dropbear.contains(" (cipher): "),
        "{dropbear}"
    );
    for mode in ["send     ", "receive  ", "echo     "] {
        assert!(dropbear.contains(mode), "{mode}: {dropbear}");
    }
    assert!(
        dropbear.contains("dbclient chooses no key exchange"),
        "{dropbear}"
    );
    // What it negotiated is read from the sandbox sshd's log, which shows it compressing.
    assert!(
        dropbear.contains("checked against what the sandbox's sshd logged"),
        "{dropbear}"
    );
    assert!(
        dropbear.contains("dbclient compressed its connections (zlib@openssh.com)"),
        "{dropbear}"
    );
    assert!(
        dropbear.contains("Recommended dbclient options"),
        "{dropbear}"
    );
    assert!(dropbear.contains("\ndbclient -c "), "{dropbear}");
    assert!(!dropbear.contains("Host *"), "{dropbear}");
    let store = sshbench::store::Store::open(&db).unwrap();
    let (runs, samples) = store.select(&Default::default()).unwrap();
    assert_eq!(runs.len(), 2);
    let through = |c: u8| samples.iter().filter(move |s| s.client == c);
    assert!(
        through(1).count() >= runs[1].plan.len(),
        "{}",
        through(1).count()
    );
    assert!(through(1).all(|s| s.sample.outcome.is_success()), "{said}");
    // Each dbclient sample stored what the server's log says it negotiated: its cipher.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut rows = conn
        .prepare("SELECT cipher, negotiated_json FROM samples WHERE client = 1")
        .unwrap();
    let seen: Vec<(String, Option<String>)> = rows
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(seen.len(), through(1).count());
    for (cipher, negotiated) in seen {
        let n: sshbench::model::Negotiated =
            serde_json::from_str(&negotiated.expect("negotiated")).unwrap();
        assert_eq!(n.cipher_cs.as_deref(), Some(cipher.as_str()), "{n:?}");
        assert!(n.kex.is_some(), "{n:?}");
    }
    let connects: Vec<_> = runs[1]
        .plan
        .iter()
        .filter(|p| p.mode.as_str() == "connect")
        .collect();
    assert_eq!(connects.len(), 2, "one connect per cipher");
    assert!(
        connects
            .iter()
            .all(|p| p.suite.kex.is_none() && p.suite.cipher.is_some())
    );
}

/// dbclient against a real Dropbear server, as on a router, in every mode it has: its
/// own known_hosts (in its HOME) and key, never `-y`; a host key it does not know stops
/// the run at its first login, without asking anyone or adding the key.
#[test]
fn dbclient_reaches_a_dropbear_server_with_its_own_known_hosts_and_key() {
    let server = common::dropbear::start(common::dropbear::DropbearOptions {
        login: true,
        ..Default::default()
    });
    let config = server.ssh_config();
    let dir = config.parent().unwrap().to_path_buf();
    let home = tempfile::tempdir().unwrap();
    let ssh_dir = home.path().join(".ssh");
    std::fs::create_dir_all(&ssh_dir).unwrap();
    let converted = Command::new("dropbearconvert")
        .args(["openssh", "dropbear"])
        .arg(dir.join("client_key"))
        .arg(ssh_dir.join("id_dropbear"))
        .output()
        .unwrap();
    assert!(converted.status.success(), "{}", text(&converted.stderr));
    let run = |db: &str| {
        sshbench()
            .env("HOME", home.path())
            .args(["run", "-F"])
            .arg(&config)
            .args([
                "dropbear-test",
                "--ssh",
                &dbclient(),
                "--mode",
                "connect,send,receive,echo",
            ])
            .args([
                "--ciphers",
                "aes128-ctr",
                "--rounds",
                "1",
                "-q",
                "--timeout",
                "20",
            ])
            .args(["--db", db])
            .output()
            .unwrap()
    };
    // Unknown to dbclient: refused before a run is stored, nothing asked, nothing added.
    let db = home.path().join("db.sqlite");
    let unknown = run(db.to_str().unwrap());
    let err = text(&unknown.stderr);
    assert!(!unknown.status.success(), "{err}");
    assert!(
        err.contains("logging in with ") && err.contains("dbclient"),
        "{err}"
    );
    // dbclient makes the file to check it; no key was added to it.
    let kept = std::fs::read_to_string(ssh_dir.join("known_hosts")).unwrap_or_default();
    assert!(
        kept.trim().is_empty(),
        "dbclient was made to accept a key: {kept}"
    );
    // Known: measured.
    let key = Command::new("dropbearkey")
        .args(["-y", "-f"])
        .arg(dir.join("host_key"))
        .output()
        .unwrap();
    let public = text(&key.stdout);
    let line = public
        .lines()
        .find(|l| l.starts_with("ssh-ed25519 "))
        .unwrap();
    // As dbclient writes its lines: no comment after the key (it would read one as part
    // of the key, and refuse it as changed).
    let key: Vec<&str> = line.split_whitespace().take(2).collect();
    let known = format!("127.0.0.1 {}\n", key.join(" "));
    std::fs::write(ssh_dir.join("known_hosts"), known).unwrap();
    let db = home.path().join("db2.sqlite");
    let known = run(db.to_str().unwrap());
    let said = text(&known.stdout);
    assert!(known.status.success(), "{}\n{said}", text(&known.stderr));
    assert!(said.contains("connect  aes128-ctr (cipher): "), "{said}");
    assert!(said.contains("send     aes128-ctr"), "{said}");
    assert!(said.contains("receive  aes128-ctr"), "{said}");
    assert!(said.contains("echo     aes128-ctr"), "{said}");
    // Nothing can read what a real server negotiated: said as unverified.
    assert!(said.contains("that is unverified"), "{said}");
}

/// Over the delay lab's 20 ms, dbclient's 24 KiB receive window caps its downloads near
/// 1.2 MB/s: the verdict names the window, the round trip and `-W`.
#[test]
fn dbclient_s_small_window_bounds_its_downloads_over_a_far_link() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("db.sqlite");
    let out = sshbench()
        .env("HOME", home.path())
        .args(["run", "--ssh", &dbclient(), "--sandbox-delay", "20ms"])
        .args(["--mode", "send,receive", "--ciphers", "aes128-ctr"])
        .args(["--macs", "hmac-sha2-256", "--rounds", "2", "-q", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let (said, err) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{err}\n{said}");
    let verdict = said.replace("\n  ", " ");
    assert!(
        verdict.contains("receive is window-bound: this client's 24 KiB channel window per 2"),
        "{said}"
    );
    assert!(verdict.contains("dbclient -W 2097152"), "{said}");
}
