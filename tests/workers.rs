//! Workers sharing a fleet in one SQLite file (`run --fleet NAME`): every host measured
//! once, a worker killed mid-host and its host finished by another from its stored
//! samples; joining with other hosts, options or client refused.

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
