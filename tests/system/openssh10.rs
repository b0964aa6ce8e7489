//! OpenSSH 10 as the sandbox's server (`--sshd`), on a machine whose system OpenSSH is
//! older: its helpers (`sshd-session`, `sshd-auth`) taken from beside it, its offer
//! read (no DSA: the key it cannot load is never offered), and its runs kept apart from
//! the usual sandbox's; and as a client (`--ssh`) beside the system's. `OPENSSH10` names
//! the directory OpenSSH 10's Debian packages were unpacked into (`.ci/run` makes one
//! from bookworm-backports with `dpkg-deb -x`).

use crate::common;
use std::path::PathBuf;

fn openssh10() -> PathBuf {
    root().join("usr/sbin/sshd")
}

fn ssh10() -> PathBuf {
    let ssh = root().join("usr/bin/ssh");
    assert!(ssh.is_file(), "no {}", ssh.display());
    ssh
}

fn root() -> PathBuf {
    let root = std::env::var_os("OPENSSH10").map(PathBuf::from).expect(
        "OPENSSH10 must name OpenSSH 10 unpacked into a directory: `apt-get download` \
         openssh-server openssh-client from bookworm-backports, then `dpkg-deb -x` each \
         into it (.ci/run does)",
    );
    let sshd = root.join("usr/sbin/sshd");
    assert!(sshd.is_file(), "no {}", sshd.display());
    root
}

fn sshbench(home: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = common::sshbench()
        .env("HOME", home)
        .args(args)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn algos_reads_openssh_10_s_offer_from_its_own_sandbox() {
    let sshd = openssh10();
    let home = tempfile::tempdir().unwrap();
    let json = [
        "algos",
        "--sshd",
        sshd.to_str().unwrap(),
        "--format",
        "json",
    ];
    let (ok, out, err) = sshbench(home.path(), &json);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let banner = v["server"]["banner"].as_str().unwrap();
    assert!(banner.starts_with("SSH-2.0-OpenSSH_10."), "{banner}");
    let offered = |name: &str| {
        (v["algorithms"].as_array().unwrap().iter())
            .any(|a| a["name"] == name && a["server"] == true)
    };
    // OpenSSH 10's default key exchange; no DSA, which it cannot load.
    assert!(offered("mlkem768x25519-sha256"), "{out}");
    assert!(!offered("ssh-dss"), "{out}");
    assert!(offered("ssh-ed25519"), "{out}");
}

#[test]
fn a_run_against_openssh_10_s_sshd_is_a_destination_of_its_own() {
    let sshd = openssh10();
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("runs.sqlite");
    let db = db.to_str().unwrap();
    let run = [
        "run",
        "--sshd",
        sshd.to_str().unwrap(),
        "--mode",
        "connect,send",
        "--kex",
        "curve25519-sha256,sntrup761x25519-sha512",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--rounds",
        "1",
        "-q",
        "--db",
        db,
    ];
    let (ok, out, err) = sshbench(home.path(), &run);
    assert!(ok, "{err}\n{out}");
    assert!(out.contains("send     aes128-gcm@openssh.com: "), "{out}");
    let (ok, runs, err) = sshbench(home.path(), &["runs", "--db", db]);
    assert!(ok, "{err}");
    assert!(runs.contains("local sandbox (sshd OpenSSH_10."), "{runs}");
    // Its figures are found under that name, and not under the usual sandbox's.
    let label = runs
        .lines()
        .find_map(|l| l.split('┆').find(|c| c.contains("sshd OpenSSH_10.")))
        .unwrap()
        .trim()
        .to_string();
    let (ok, shown, err) = sshbench(home.path(), &["show", &label, "--db", db]);
    assert!(
        ok && shown.contains("sntrup761x25519-sha512"),
        "{err}\n{shown}"
    );
    let (_, usual, _) = sshbench(home.path(), &["show", "sandbox", "--db", db]);
    assert!(!usual.contains("sntrup761x25519-sha512"), "{usual}");
}

#[test]
fn sshd_must_name_an_executable() {
    let home = tempfile::tempdir().unwrap();
    let (ok, _, err) = sshbench(home.path(), &["algos", "--sshd", "/nonexistent/sshd"]);
    assert!(!ok && err.contains("--sshd /nonexistent/sshd"), "{err}");
}

/// The system's ssh and OpenSSH 10's measured in one run against OpenSSH 10's sshd:
/// every suite through each, stored per client; each client's answer and block its own,
/// OpenSSH 10's leading with the key exchange only it has; which client is fastest.
#[test]
fn two_clients_are_measured_in_one_run_each_with_its_own_answer() {
    let (sshd, ssh10) = (openssh10(), ssh10());
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("runs.sqlite");
    let db = db.to_str().unwrap();
    let clients = format!("ssh,{}", ssh10.display());
    let run = [
        "run",
        "--sshd",
        sshd.to_str().unwrap(),
        "--ssh",
        &clients,
        "--mode",
        "connect,send",
        "--kex",
        "mlkem768x25519-sha256,sntrup761x25519-sha512,curve25519-sha256",
        "--ciphers",
        "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com",
        "--rounds",
        "2",
        "-q",
        "--db",
        db,
    ];
    let (ok, out, err) = sshbench(home.path(), &run);
    assert!(ok, "{err}\n{out}");
    // An answer per client, then the comparison.
    assert_eq!(
        out.matches("destination: local sandbox (sshd OpenSSH_10.")
            .count(),
        2,
        "{out}"
    );
    assert!(out.contains(", ssh OpenSSH_9."), "{out}");
    assert!(out.contains(", ssh OpenSSH_10."), "{out}");
    assert!(out.contains("Which client is fastest"), "{out}");
    // The system's client has no ML-KEM: it was never planned for it.
    let (ok, json, err) = sshbench(home.path(), &["show", "--format", "json", "--db", db]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let each = v["each"].as_array().expect("a view per client");
    assert_eq!(each.len(), 2, "{json}");
    let kexes = |view: &serde_json::Value| -> Vec<String> {
        (view["suites"].as_array().unwrap().iter())
            .filter(|r| r["mode"] == "connect")
            .filter_map(|r| r["kex"].as_str().map(String::from))
            .collect()
    };
    let (old, new) = (kexes(&each[0]), kexes(&each[1]));
    assert!(!old.iter().any(|k| k.starts_with("mlkem")), "{old:?}");
    assert!(new.iter().any(|k| k == "mlkem768x25519-sha256"), "{new:?}");
    assert!(old.iter().any(|k| k == "sntrup761x25519-sha512"), "{old:?}");
    // OpenSSH 10's block leads with ML-KEM, recommended and the quicker post-quantum one.
    let run_id = v["each"][1]["runs"][0].as_i64().unwrap().to_string();
    let (ok, rec, err) = sshbench(home.path(), &["recommend", "--run", &run_id, "--db", db]);
    assert!(ok, "{err}");
    let blocks: Vec<&str> = rec
        .split("# sshbench recommendation for ")
        .skip(1)
        .collect();
    assert_eq!(blocks.len(), 2, "{rec}");
    let kex_line = |b: &str| {
        b.lines()
            .find(|l| l.trim_start().starts_with("KexAlgorithms "))
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    assert!(blocks[1].contains("ssh OpenSSH_10."), "{rec}");
    assert!(
        kex_line(blocks[1]).starts_with("KexAlgorithms mlkem768x25519-sha256"),
        "{rec}"
    );
    assert!(!kex_line(blocks[0]).contains("mlkem"), "{rec}");
    // Two clients of one run are compared one with the other.
    let (a, b) = (format!("run:{run_id}/1"), format!("run:{run_id}/2"));
    let (ok, cmp, err) = sshbench(home.path(), &["compare", &a, &b, "--db", db]);
    assert!(ok && cmp.contains("aes128-gcm@openssh.com"), "{err}\n{cmp}");
}

/// OpenSSH 10 as the client against its own server, in the modes that go through its
/// other parts: echo over a session, and a workload with its own sftp (beside its ssh).
#[test]
fn openssh_10_as_the_client_echoes_and_runs_its_own_sftp() {
    let (sshd, ssh10) = (openssh10(), ssh10());
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("runs.sqlite");
    let db = db.to_str().unwrap();
    let run = [
        "run",
        "--sshd",
        sshd.to_str().unwrap(),
        "--ssh",
        ssh10.to_str().unwrap(),
        "--mode",
        "echo,sftp-get",
        "--ciphers",
        "aes128-gcm@openssh.com",
        "--rounds",
        "1",
        "--db",
        db,
    ];
    let (ok, out, err) = sshbench(home.path(), &run);
    assert!(ok, "{err}\n{out}");
    assert!(err.contains("client 1: OpenSSH_10."), "{err}");
    assert!(out.contains("(sshd OpenSSH_10."), "{out}");
    assert!(out.contains("echo     aes128-gcm@openssh.com: "), "{out}");
    let modes = [
        "--mode",
        "echo,sftp-get-file",
        "--format",
        "json",
        "--db",
        db,
    ];
    let (ok, json, err) = sshbench(home.path(), &[&["show"][..], &modes].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let measured = |mode: &str| {
        (v["suites"].as_array().unwrap().iter())
            .any(|r| r["mode"] == mode && r["n"].as_u64().unwrap_or(0) > 0)
    };
    assert!(measured("echo") && measured("sftp-get-file"), "{json}");
}

/// Typing in a terminal through OpenSSH 10's ssh to its sshd (which answers pings, so
/// the client sends chaff): with ObscureKeystrokeTiming on, keys in a burst wait for its
/// clock and the client keeps sending packets in the pause after typing; with it off,
/// neither. Counted from the client's socket, not timed against a threshold of ours.
#[test]
fn typing_measures_the_keystroke_clock_on_and_off() {
    let (sshd, ssh) = (openssh10(), ssh10());
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("runs.sqlite");
    let db = db.to_str().unwrap();
    let run = [
        "run",
        "--sshd",
        sshd.to_str().unwrap(),
        "--ssh",
        ssh.to_str().unwrap(),
        "--mode",
        "typing",
        "--rounds",
        "2",
        "-q",
        "--db",
        db,
    ];
    let (ok, out, err) = sshbench(home.path(), &run);
    assert!(ok, "{err}\n{out}");
    assert!(
        out.contains("ObscureKeystrokeTiming no gives back"),
        "{out}"
    );
    let json = [
        "recommend",
        "--for",
        "interactive",
        "--format",
        "json",
        "--db",
        db,
    ];
    let (ok, out, err) = sshbench(home.path(), &json);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let variant = |k: &str| {
        let all = v["typing"]["variants"].as_array().expect("typing figures");
        all.iter().find(|x| x["keystrokes"] == k).unwrap().clone()
    };
    let (on, off) = (variant("yes"), variant("no"));
    let idle = |x: &serde_json::Value| x["stats"]["idle_wire"]["packets_per_s"].as_f64().unwrap();
    // Chaff every 20 ms for 1-3 s of a 3.5 s pause: tens of packets a second; none without.
    assert!(idle(&on) > 10.0, "{out}");
    assert!(idle(&off) < 2.0, "{out}");
    let in_burst = |x: &serde_json::Value| {
        let places = x["stats"]["places"].as_array().unwrap();
        let p = places.iter().find(|p| p["place"] == "in-burst").unwrap();
        p["echo"]["p50"].as_f64().unwrap()
    };
    assert!(in_burst(&on) > in_burst(&off), "{out}");
}
