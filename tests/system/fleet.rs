//! Fleet runs end to end against real servers on loopback: two sandbox sshds (one with
//! a narrower offer), a Dropbear server, and a Dropbear server that refuses the login;
//! the fleet views over what they stored; `kill -9` of a fleet run and `--resume`, with
//! SQLite and with PostgreSQL. Dropbear logs in through a mount namespace: root (CI).

use crate::common;

use crate::common::dropbear::{self, DropbearOptions};
use crate::common::pg::Cluster;
use crate::common::{assert_success, sshbench, text};
use sshbench::model::RunStatus;
use sshbench::model::{AlgoKind, AlgoLists};
use sshbench::sandbox::{ALIAS, Sandbox};
use sshbench::store::Store;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// An ssh_config block of a server's own config, under another `Host` name.
fn renamed(config: &Path, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(config).unwrap();
    text.replace(&format!("Host {from}\n"), &format!("Host {to}\n"))
}

/// The servers of a fleet, their one ssh_config, and a hosts file naming them.
struct Servers {
    _a: Sandbox,
    _b: Sandbox,
    _c: dropbear::Dropbear,
    _d: Option<dropbear::Dropbear>,
    config: PathBuf,
    hosts: PathBuf,
    _dir: tempfile::TempDir,
}

fn servers(refusing: bool) -> Servers {
    let a = common::sandbox(AlgoLists::default());
    let mut narrow = AlgoLists::new();
    let ciphers = vec!["aes128-ctr".into(), "aes256-gcm@openssh.com".into()];
    narrow.set(AlgoKind::Cipher, ciphers);
    let b = common::sandbox(narrow);
    let c = dropbear::start(DropbearOptions {
        login: true,
        ..Default::default()
    });
    // No key of the test's is authorized there: the login is refused.
    let d = refusing.then(|| dropbear::start(DropbearOptions::default()));
    let dir = tempfile::tempdir().unwrap();
    let mut config = renamed(a.ssh_config(), ALIAS, "fleet-a");
    config += &renamed(b.ssh_config(), ALIAS, "fleet-b");
    config += &renamed(&c.ssh_config(), "dropbear-test", "fleet-c");
    let mut hosts = "# a test fleet\nfleet-a\nfleet-b   # narrower\nfleet-c\n".to_string();
    if let Some(d) = &d {
        config += &renamed(&d.ssh_config(), "dropbear-test", "fleet-d");
        hosts += "fleet-d\n";
    }
    let (cfg, list) = (dir.path().join("ssh_config"), dir.path().join("hosts"));
    std::fs::write(&cfg, config).unwrap();
    std::fs::write(&list, hosts).unwrap();
    Servers {
        _a: a,
        _b: b,
        _c: c,
        _d: d,
        config: cfg,
        hosts: list,
        _dir: dir,
    }
}

/// A small sweep each host can do: connect and send with two ciphers.
const SWEEP: &[&str] = &[
    "--mode",
    "connect,send",
    "--rounds",
    "2",
    "--kex",
    "curve25519-sha256",
    "--hostkeys",
    "ssh-ed25519",
    "--ciphers",
    "aes128-ctr,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com",
    "--macs",
    "hmac-sha2-256",
    "--size",
    "8M",
];

fn fleet_run(s: &Servers, db: &str, jobs: &str) -> std::process::Command {
    let mut c = sshbench();
    c.args(["run", "--db", db, "--jobs", jobs, "-F"])
        .arg(&s.config)
        .arg("--hosts")
        .arg(&s.hosts)
        .args(SWEEP);
    c
}

/// Two names of one server (here an alias of fleet-a's) would be measured side by side,
/// each slowing the other: refused before anything is measured, unless one at a time.
#[test]
fn two_names_of_one_server_are_not_measured_side_by_side() {
    let s = servers(false);
    let again = renamed(&s.config, "fleet-a", "fleet-a-again");
    let block = again
        .split("Host ")
        .find(|b| b.starts_with("fleet-a-again"))
        .unwrap();
    let mut config = std::fs::read_to_string(&s.config).unwrap();
    config += &format!("Host {block}");
    std::fs::write(&s.config, config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("twice.sqlite");
    let out = sshbench()
        .args(["run", "--db"])
        .arg(&db)
        .args(["--jobs", "2", "-F"])
        .arg(&s.config)
        .args(["fleet-a", "fleet-b", "fleet-a-again"])
        .args(SWEEP)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let said = "fleet-a and fleet-a-again reach the same server (127.0.0.1 port ";
    assert!(stderr.contains(said), "{stderr}");
    assert!(!db.exists() || Store::open(&db).unwrap().runs().unwrap().is_empty());
}

#[test]
fn a_fleet_run_measures_every_host_reports_the_refusing_one_and_recommends_one_block() {
    let s = servers(true);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fleet.sqlite");
    let db = db.to_str().unwrap();
    let out = fleet_run(&s, db, "2").output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(
        out.status.code(),
        Some(3),
        "a host failed: {stdout}\n{stderr}"
    );
    for h in ["fleet-a", "fleet-b", "fleet-c"] {
        let line = stdout.lines().find(|l| l.contains(h)).unwrap_or_default();
        assert!(line.contains("complete"), "{h}: {stdout}");
    }
    let refused = stdout.lines().find(|l| l.contains("fleet-d")).unwrap();
    assert!(
        refused.contains("failed") && refused.contains("Permission denied"),
        "{stdout}"
    );
    assert!(
        stderr.contains("hosts: 3 done, 0 running, 1 failed, 0 waiting"),
        "{stderr}"
    );
    assert!(stderr.contains("2 at once (client CPUs 0 / 1)"), "{stderr}");

    let store = Store::connect(db).unwrap();
    let runs = store.runs().unwrap();
    let complete: Vec<&str> = (runs.iter().filter(|r| r.status == RunStatus::Complete))
        .map(|r| r.destination.as_str())
        .collect();
    assert_eq!(complete.len(), 3, "{complete:?}");
    // The refused login stopped before fleet-d's run was stored.
    assert!(runs.iter().all(|r| r.destination != "fleet-d"), "{runs:?}");
    // The narrow server never offered chacha20-poly1305: not measured there.
    let b = runs.iter().find(|r| r.destination == "fleet-b").unwrap();
    let ciphers: Vec<_> = (store.samples(&[b.id]).unwrap().into_iter())
        .filter_map(|x| x.sample.suite.cipher)
        .collect();
    assert!(!ciphers.is_empty() && !ciphers.iter().any(|c| c.starts_with("chacha")));

    let hosts = s.hosts.to_str().unwrap();
    let view = |args: &[&str]| {
        let out = sshbench().args(args).args(["--db", db]).output().unwrap();
        assert_success(&out, args);
        text(&out.stdout)
    };
    let rec = view(&["recommend", "--hosts", hosts]);
    assert_eq!(
        rec.matches("Host fleet-a fleet-b fleet-c\n").count(),
        1,
        "{rec}"
    );
    let ciphers = rec
        .lines()
        .find(|l| l.trim_start().starts_with("Ciphers "))
        .unwrap();
    // Dropbear's MACs are all legacy (encrypt-and-MAC): the AEAD cipher every host has.
    assert!(
        ciphers.contains("chacha20-poly1305@openssh.com"),
        "every host can negotiate a cipher: {rec}"
    );
    // A host's own block tells its server's admin what that server takes: sshd_config
    // lines for OpenSSH's sshd, none for Dropbear (its lists are built in).
    let sshd = view(&["recommend", "fleet-a"]);
    assert!(sshd.contains("# /etc/ssh/sshd_config"), "{sshd}");
    let dropbear = view(&["recommend", "fleet-c"]);
    assert!(dropbear.contains("# The server is Dropbear"), "{dropbear}");
    assert!(!dropbear.contains("sshd_config"), "{dropbear}");
    let show = view(&["show", "--fleet", "fleet-*", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&show).unwrap();
    assert_eq!(
        json["hosts"].as_array().unwrap().len(),
        3,
        "the refusing host has no samples"
    );
    let send = json["modes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == "send")
        .unwrap();
    let first = &send["suites"][0];
    assert_eq!(first["hosts"], 3, "measured on every host first: {first}");
    let share = first["worst_of_best"].as_f64().unwrap();
    assert!(share > 0.0 && share <= 1.0, "{first}");
    let summary = view(&["summary", "--fleet", "--top", "1"]);
    assert!(summary.contains("Fleet of 3 hosts"), "{summary}");
    let page = dir.path().join("fleet.html");
    view(&["report", "--hosts", hosts, "-o", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("fleet-c") && html.contains("hsl("),
        "a heat map"
    );
}

/// `kill -9` in the middle of a fleet run, then `--resume`: the fleet finishes and
/// every sample stored before the kill is still there, unchanged. With `one_first`, the
/// killed host's run is finished on its own first (`run --resume ID`), and the fleet's
/// resume keeps it rather than measuring that host again.
fn kill_9_and_resume(db: &str, one_first: bool) {
    let s = servers(false);
    let mut child = fleet_run(&s, db, "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    // Into the second host: the first is finished, the second half measured.
    while Store::connect(db)
        .ok()
        .and_then(|st| st.runs().ok())
        .is_none_or(|r| r.len() < 2 || r[1].samples < 3)
    {
        assert!(
            Instant::now() < deadline,
            "the fleet did not reach its second host"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let store = Store::connect(db).unwrap();
    let before = store.samples(&[]).unwrap();
    assert_eq!(
        store.runs().unwrap()[1].status,
        RunStatus::Running,
        "killed while measuring"
    );
    let json = |s: &sshbench::store::StoredSample| {
        (
            s.run_id,
            s.item,
            s.round,
            serde_json::to_value(&s.sample).unwrap(),
        )
    };
    if one_first {
        let id = store.runs().unwrap()[1].id.to_string();
        let out = sshbench()
            .args(["run", "--resume", &id, "-q", "--db", db])
            .output()
            .unwrap();
        assert_success(&out, "resume one host's run");
    }
    let out = sshbench()
        .args(["run", "--resume", "--db", db])
        .output()
        .unwrap();
    assert_success(&out, "resume");
    assert!(
        text(&out.stderr).contains("resuming fleet run 1"),
        "{}",
        text(&out.stderr)
    );
    let runs: Vec<(String, RunStatus)> = (store.runs().unwrap().into_iter())
        .map(|r| (r.destination, r.status))
        .collect();
    assert_eq!(
        runs.len(),
        3,
        "one run per host, the killed one resumed: {runs:?}"
    );
    assert!(runs.iter().all(|r| r.1 == RunStatus::Complete), "{runs:?}");
    let after: Vec<_> = store.samples(&[]).unwrap().iter().map(json).collect();
    for b in &before {
        assert!(after.contains(&json(b)), "lost or changed: {:?}", json(b));
    }
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn kill_9_of_a_fleet_run_then_resume_loses_nothing_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    kill_9_and_resume(dir.path().join("f.sqlite").to_str().unwrap(), true);
}

#[test]
fn kill_9_of_a_fleet_run_then_resume_loses_nothing_in_postgres() {
    let pg = Cluster::start();
    kill_9_and_resume(&pg.database("fleet"), false);
}

/// Three worker processes on one fleet in PostgreSQL (rows claimed with `FOR UPDATE
/// SKIP LOCKED`): every host measured once; the first killed mid-host and its host
/// finished by another from its stored samples.
#[test]
fn three_workers_share_a_postgres_fleet_and_one_takes_over_the_others_host() {
    let pg = Cluster::start();
    common::workers::share_and_kill_one(&pg.database("workers"), 3);
}

/// A fleet's kinds on real servers: four sandboxes of one kind, the fourth's sshd
/// limited to a quarter of a core (root: a cgroup; a tenth made the test 50 s longer).
/// The first two are measured in full; the third by the kind's contenders; the fourth,
/// whose figures are far below its kind's, is measured in full after its contenders,
/// and the fleet's end says why.
#[test]
fn a_host_of_a_kind_whose_figures_disagree_is_measured_in_full() {
    use sshbench::model::LabOptions;
    use sshbench::sandbox::SandboxOptions;
    let start = |cpu: Option<f64>| {
        Sandbox::start(&SandboxOptions {
            candidates: sshbench::offer::candidates(&common::client()),
            lab: LabOptions {
                cpu,
                ..LabOptions::default()
            },
            ..SandboxOptions::default()
        })
        .expect("the sandbox sshd starts")
    };
    let boxes = [start(None), start(None), start(None), start(Some(0.25))];
    let dir = tempfile::tempdir().unwrap();
    let mut config = String::new();
    for (i, b) in boxes.iter().enumerate() {
        config += &renamed(b.ssh_config(), ALIAS, &format!("kind-{i}"));
    }
    let (cfg, hosts) = (dir.path().join("ssh_config"), dir.path().join("hosts"));
    std::fs::write(&cfg, config).unwrap();
    std::fs::write(&hosts, "kind-0\nkind-1\nkind-2\nkind-3\n").unwrap();
    let db = dir.path().join("kinds.sqlite");
    let out = sshbench()
        .args(["run", "-F"])
        .arg(&cfg)
        .arg("--hosts")
        .arg(&hosts)
        .args([
            "--jobs",
            "1",
            "--fleet-full",
            "2",
            "--mode",
            "send",
            "--rounds",
            "4",
        ])
        // AES-GCM well ahead of three CBC ciphers: the kind's contenders are two of
        // the four (the best, and CBC's best as its family's sentinel).
        .args([
            "--ciphers",
            "aes128-gcm@openssh.com,aes128-cbc,aes192-cbc,aes256-cbc",
        ])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com"])
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
    let (table, said) = (text(&out.stdout), text(&out.stderr));
    assert_success(&out, &said);
    let row = |h: &str| {
        table
            .lines()
            .find(|l| l.contains(h))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        row("kind-0").contains("in full (first of its kind)"),
        "{table}"
    );
    assert!(
        row("kind-1").contains("in full (first of its kind)"),
        "{table}"
    );
    assert!(row("kind-2").contains("contenders ("), "{table}");
    assert!(
        row("kind-3").contains("in full after contenders disagreed"),
        "{table}"
    );
    let words = common::words(&table);
    assert!(
        words.contains(
            "kind-3 was measured in full after its contenders: in send, its best figure is"
        ),
        "{table}"
    );
    drop(boxes);
}

/// Fleet input that cannot work is refused before any host is contacted, with what to
/// do instead.
#[test]
fn bad_fleet_input_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.sqlite");
    let (empty, dup) = (dir.path().join("empty"), dir.path().join("dup"));
    std::fs::write(&empty, "# nothing yet\n\n").unwrap();
    std::fs::write(&dup, "a\nb # the same b\nb\n").unwrap();
    let fails = |args: &[&str], says: &str| {
        let out = sshbench()
            .args(["run", "--mock-transport", "--db"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    };
    fails(&["a", "b", "--jobs", "0"], "--jobs must be at least 1");
    fails(&["a", "b", "c", "--jobs", "999"], "more than the");
    fails(&["a", "--jobs", "2"], "--jobs applies to a fleet run");
    fails(
        &["--hosts", empty.to_str().unwrap()],
        "lists no destinations",
    );
    fails(&["--hosts", dup.to_str().unwrap()], "b is listed twice");
    fails(&["--hosts", "/nonexistent/hosts"], "reading the hosts file");
    assert!(!db.exists(), "nothing was stored");
}
