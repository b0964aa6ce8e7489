//! Workers sharing a fleet in one SQLite file (`run --fleet NAME`): every host measured
//! once, a worker killed mid-host and its host finished by another from its stored
//! samples; joining with other hosts, options or client refused. A fleet's kinds
//! (`--fleet-full`): later hosts of a kind measure its contenders, with the same block.

mod common;

use common::workers::{self, share_and_kill_one};
use common::{sshbench, text};

#[test]
fn two_workers_share_a_sqlite_fleet_and_one_takes_over_the_others_host() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fleet.sqlite");
    share_and_kill_one(db.to_str().unwrap(), 2);
}

#[test]
fn a_worker_with_other_hosts_options_or_client_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fleet.sqlite");
    let db = db.to_str().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "a.test\nb.test\n").unwrap();
    let out = workers::worker(db, &hosts).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let join = |extra: &[&str], hosts: &std::path::Path| {
        let out = workers::worker(db, hosts).args(extra).output().unwrap();
        (out.status.code(), common::words(&text(&out.stderr)))
    };
    // The same fleet again: nothing left to measure, and nothing measured twice.
    let (code, _) = join(&[], &hosts);
    assert_eq!(code, Some(0));
    let other = dir.path().join("other");
    std::fs::write(&other, "a.test\nc.test\n").unwrap();
    let (code, said) = join(&[], &other);
    assert_eq!(code, Some(1));
    assert!(said.contains("fleet team measures other hosts"), "{said}");
    let (code, said) = join(&["--kex", "curve25519-sha256"], &hosts);
    assert_eq!(code, Some(1));
    assert!(said.contains("created with other options"), "{said}");
    // Another client: the fleet's is made a CPU this machine does not have.
    let conn = rusqlite::Connection::open(db).unwrap();
    let sql = "UPDATE fleets SET client_json = json_set(client_json, '$.cpu_model', 'Z80')";
    assert_eq!(conn.execute(sql, []).unwrap(), 1);
    drop(conn);
    let (code, said) = join(&[], &hosts);
    assert_eq!(code, Some(1));
    assert!(
        said.contains("this client differs from fleet team's"),
        "{said}"
    );
    assert!(said.contains("Z80 in the fleet"), "{said}");
    let store = sshbench::store::Store::connect_to_read(db).unwrap();
    assert_eq!(store.runs().unwrap().len(), 2);
    let status = sshbench()
        .args(["fleet", "status", "nosuch", "--db", db])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    assert!(text(&status.stderr).contains("no fleet nosuch"));
}

/// Six hosts of one kind (the mock's): the first two measured in full, the other four by
/// the contenders, fewer samples each; `recommend --fleet` writes the block measuring
/// every host in full writes, and says how each host was measured; `fleet status`
/// counts the kind's hosts.
#[test]
fn later_hosts_of_a_kind_measure_its_contenders_and_the_block_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    let names: Vec<String> = (1..=6).map(|i| format!("k{i}.test")).collect();
    std::fs::write(&hosts, names.join("\n")).unwrap();
    let run = |full: &str, db: &str| {
        let out = sshbench()
            .args([
                "run",
                "--mock-transport",
                "--mode",
                "connect,send",
                "--rounds",
                "3",
            ])
            .args(["--seed", "5", "--fleet-full", full, "--db", db, "--hosts"])
            .arg(&hosts)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let (grouped, all) = (dir.path().join("g.sqlite"), dir.path().join("a.sqlite"));
    let (grouped, all) = (grouped.to_str().unwrap(), all.to_str().unwrap());
    let table = run("2", grouped);
    run("all", all);
    let rows: Vec<&str> = table.lines().filter(|l| l.contains(".test")).collect();
    assert_eq!(rows.len(), 6, "{table}");
    assert!(
        rows[..2]
            .iter()
            .all(|r| r.contains("in full (first of its kind)")),
        "{table}"
    );
    assert!(
        rows[2..].iter().all(|r| r.contains("contenders (")),
        "{table}"
    );
    let store = sshbench::store::Store::connect_to_read(grouped).unwrap();
    let runs = store.runs().unwrap();
    let samples = |i: usize| store.samples(&[runs[i].id]).unwrap().len();
    assert!(
        samples(5) * 2 < samples(0),
        "{} of {}",
        samples(5),
        samples(0)
    );
    let recommend = |db: &str| {
        let out = sshbench()
            .args(["recommend", "--fleet", "--db", db])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let block = |text: &str| -> String {
        let start = text.find("# ~/.ssh/config").unwrap();
        text[start..]
            .split("\n\n")
            .next()
            .unwrap()
            .lines()
            .take_while(|l| !l.starts_with("How the hosts"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (g, a) = (recommend(grouped), recommend(all));
    assert_eq!(block(&g), block(&a));
    let said = common::words(&g);
    assert!(said.contains("How the hosts were measured: in full: k1.test, k2.test; by the suites that could still win on their kind"), "{g}");
    let status = sshbench()
        .args(["fleet", "status", "--format", "json", "--db", grouped])
        .output()
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let kinds = status["kinds"].as_array().unwrap();
    assert_eq!(kinds.len(), 1, "{status:#}");
    assert_eq!(
        (kinds[0]["full"].as_u64(), kinds[0]["contenders"].as_u64()),
        (Some(2), Some(4))
    );
}

/// Fleet options that cannot work are refused before anything is measured.
#[test]
fn bad_fleet_options_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("f.sqlite");
    for (args, said) in [
        (
            &["a", "b", "--fleet", "a b"][..],
            "--fleet \"a b\": give 1-64 letters",
        ),
        (
            &["a", "b", "--fleet", "x", "--fleet-lease", "1"],
            "--fleet-lease 1: give 5 to 3600 seconds",
        ),
        (
            &["a", "b", "--fleet-lease", "60"],
            "--fleet-lease applies to a shared fleet",
        ),
        (&["a", "--fleet", "x"], "--fleet applies to a fleet run"),
        (
            &["a", "b", "--fleet-full", "0"],
            "--fleet-full \"0\": give a number of hosts",
        ),
        (
            &["a", "--fleet-full", "2"],
            "--fleet-full applies to a fleet run",
        ),
    ] {
        let out = sshbench()
            .args(["run", "--mock-transport", "--db"])
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(said),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    assert!(!db.exists(), "a refused command stored something");
}
