//! Worker processes sharing one fleet (`run --fleet NAME`) with the mock transport paced
//! so that hosts take time: started side by side, one killed with SIGKILL while it holds
//! a host with samples stored, the others left to finish; then what the store and
//! `fleet status` say. Shared by the SQLite test (tier 1) and the PostgreSQL one (tier 2).

use super::{sshbench, text};
use sshbench::model::HostStatus;
use sshbench::store::Store;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const HOSTS: usize = 8;
/// Samples per host: 12 connect suites × 2 rounds, and one warm-up.
pub const SAMPLES: usize = 25;

/// A worker of fleet `team` over `hosts` in `db`.
pub fn worker(db: &str, hosts: &Path) -> Command {
    let mut c = sshbench();
    c.args([
        "run",
        "--mock-transport",
        "--mock-pace",
        "25",
        "--fleet",
        "team",
    ])
    .args(["--fleet-lease", "5", "--mode", "connect", "--rounds", "2"])
    // Every host measured in full: each must end with every slot of the design.
    .args(["--fleet-full", "all"])
    .arg("--hosts")
    .arg(hosts)
    .args(["--db", db])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

fn status(db: &str) -> Option<serde_json::Value> {
    let out = sshbench()
        .args(["fleet", "status", "team", "--format", "json", "--db", db])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// Wait for `what` of the fleet's status to hold.
fn wait_for(db: &str, what: &str, f: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(s) = status(db).filter(|s| f(s)) {
            return s;
        }
        assert!(Instant::now() < deadline, "waited a minute for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The run `victim` measures now, once it has samples stored: (host, run, samples).
fn holding(db: &str, store: &Store, victim: &Child) -> (String, i64, usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = wait_for(db, "the first worker to hold a host", |s| {
            s["measuring"].as_array().is_some_and(|m| !m.is_empty())
        });
        let id = (s["workers"].as_array().unwrap().iter())
            .find(|w| w["pid"] == victim.id())
            .map(|w| w["id"].as_i64().unwrap());
        let held = (s["measuring"].as_array().unwrap().iter())
            .find(|m| Some(m["worker"].as_i64().unwrap()) == id && m["run"].is_i64());
        if let Some(m) = held {
            let run = m["run"].as_i64().unwrap();
            let stored = store.samples(&[run]).unwrap().len();
            if (1..SAMPLES).contains(&stored) {
                return (m["destination"].as_str().unwrap().to_string(), run, stored);
            }
        }
        assert!(
            Instant::now() < deadline,
            "the first worker never held a host"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `workers` processes on one fleet in `db`; the first killed mid-host. Checks that
/// every host was measured once (one run each, every slot stored once), that the killed
/// worker's host went on from its stored samples in the same run, and that `fleet
/// status` shows the takeover.
pub fn share_and_kill_one(db: &str, workers: usize) {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    let names: Vec<String> = (1..=HOSTS).map(|i| format!("w{i}.test")).collect();
    std::fs::write(&hosts, names.join("\n")).unwrap();
    let mut first = worker(db, &hosts).spawn().unwrap();
    wait_for(db, "the fleet", |_| true);
    let others: Vec<Child> = (1..workers)
        .map(|_| worker(db, &hosts).spawn().unwrap())
        .collect();
    let store = Store::connect_to_read(db).unwrap();
    let (victim, run, stored) = holding(db, &store, &first);
    first.kill().unwrap();
    first.wait().unwrap();
    let mut said = String::new();
    for o in others {
        let out = o.wait_with_output().unwrap();
        said += &text(&out.stderr);
        assert!(out.status.success(), "a worker failed: {said}");
    }
    // Every host complete, each in one run that holds each of its slots once.
    let fleet = store.fleet(store.fleet_named("team").unwrap().unwrap());
    let fleet = fleet.unwrap().unwrap();
    assert!(fleet.hosts.iter().all(|h| h.status == HostStatus::Complete));
    let runs = store.runs().unwrap();
    for name in &names {
        let of: Vec<i64> = (runs.iter())
            .filter(|r| &r.destination == name)
            .map(|r| r.id)
            .collect();
        assert_eq!(of.len(), 1, "{name} was measured in runs {of:?}");
        assert_eq!(store.samples(&of).unwrap().len(), SAMPLES, "{name}");
    }
    // The killed worker's host: the same run, its samples kept, said by the taker.
    let host = fleet
        .hosts
        .iter()
        .find(|h| h.destination == victim)
        .unwrap();
    assert_eq!(host.run_id, Some(run));
    // It may have stored a sample or two more between the count and the kill.
    let resumed = format!("resuming run {run} of {victim} (");
    let kept: usize = (said.split(&resumed).nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{resumed:?} not in: {said}"));
    assert!(
        (stored..SAMPLES).contains(&kept),
        "{kept} kept, {stored} seen: {said}"
    );
    let s = status(db).unwrap();
    let gone = (s["workers"].as_array().unwrap().iter())
        .filter(|w| w["state"] == "gone" || w["state"] == "silent")
        .count();
    assert_eq!(gone, 1, "{s:#}");
    let reclaimed = s["reclaimed"].as_array().unwrap();
    assert_eq!(reclaimed.len(), 1, "{s:#}");
    assert_eq!(reclaimed[0]["destination"], victim.as_str());
    assert_eq!(reclaimed[0]["claims"], 2);
    assert_eq!(s["hosts"]["done"], HOSTS);
}
