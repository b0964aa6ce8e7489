//! What coordinating workers costs: 1,000 hosts shared by 8 workers through a real
//! PostgreSQL (a throwaway cluster, as the tests start; as root it runs as `nobody`).
//!
//! Run with `cargo bench --bench fleet_workers`. Two parts:
//!
//! 1. The store's calls alone, as `run --fleet` makes them: 8 threads, each a worker
//!    with connections of its own, claim hosts until none is left; per host one claim,
//!    `RENEWALS` lease renewals (a 4-minute host renews every 20 s of a 60 s lease: 12)
//!    and the release. Each call is timed; per host their sum is its coordination cost.
//!    Every claim is counted by host: a host claimed twice is a failure.
//! 2. The whole thing: 8 `sshbench run --fleet` processes with the mock transport on the
//!    same 1,000 hosts (one connect suite, one round: a host's run is mostly its
//!    coordination and its rows); every host must end complete in exactly one run.
//!
//! Not a test: timings on a shared machine are for reading, not asserting; the
//! exactly-once checks do fail it.

#[allow(dead_code)]
#[path = "../tests/common/pg.rs"]
mod pg;

use sshbench::model::{HostStatus, RunOptions, WorkerClient, WorkerPlace};
use sshbench::store::{NewFleet, Store};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const HOSTS: usize = 1000;
const WORKERS: usize = 8;
const RENEWALS: usize = 12;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Part 1: the store's calls, timed per host.
fn store_calls(url: &str) {
    let hosts: Vec<String> = (0..HOSTS).map(|i| format!("host{i:04}")).collect();
    let store = Store::connect(url).unwrap();
    let client = WorkerClient::default();
    let fleet = store
        .create_fleet(&NewFleet {
            hosts: &hosts,
            options: &RunOptions::default(),
            ssh: &[],
            jobs: 1,
            name: Some("bench"),
            lease_s: 60,
            client: &client,
            full: sshbench::model::fleet::FleetFull::All,
        })
        .unwrap();
    let claimed = Mutex::new(vec![0u32; HOSTS]);
    let costs = Mutex::new(Vec::with_capacity(HOSTS));
    let started = Instant::now();
    std::thread::scope(|s| {
        for k in 0..WORKERS {
            let (claimed, costs, client) = (&claimed, &costs, &client);
            s.spawn(move || {
                let store = Store::connect(url).unwrap();
                let keeper = Store::connect(url).unwrap();
                let place = WorkerPlace {
                    machine: format!("bench{k}"),
                    boot: None,
                    pid: k as u32 + 1,
                };
                let w = store.register_worker(fleet, &place, client, 1).unwrap();
                loop {
                    let t = Instant::now();
                    let Some(c) = store.claim_host(fleet, w, 60).unwrap() else {
                        break;
                    };
                    let mut cost = t.elapsed();
                    claimed.lock().unwrap()[c.host.position] += 1;
                    for _ in 0..RENEWALS {
                        let t = Instant::now();
                        assert!(keeper.renew_lease(fleet, c.host.position, w, 60).unwrap());
                        cost += t.elapsed();
                    }
                    let mut h = c.host;
                    h.status = HostStatus::Complete;
                    let t = Instant::now();
                    assert!(store.set_claimed_host(fleet, w, &h).unwrap());
                    cost += t.elapsed();
                    costs.lock().unwrap().push(cost.as_secs_f64() * 1e3);
                }
                store.end_worker(w).unwrap();
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let claimed = claimed.into_inner().unwrap();
    let twice = claimed.iter().filter(|&&n| n != 1).count();
    assert_eq!(twice, 0, "{twice} hosts not claimed exactly once");
    let clock = store.fleet_clock(fleet).unwrap();
    assert!(
        clock
            .hosts
            .iter()
            .all(|h| h.claims == 1 && h.worker.is_none())
    );
    let mut costs = costs.into_inner().unwrap();
    costs.sort_by(f64::total_cmp);
    println!(
        "store calls, {HOSTS} hosts × {WORKERS} workers (claim + {RENEWALS} renewals + \
         release per host): per host median {:.2} ms, p95 {:.2} ms, max {:.2} ms; \
         {:.1} s in all; every host claimed exactly once",
        percentile(&costs, 0.5),
        percentile(&costs, 0.95),
        costs[costs.len() - 1],
        wall,
    );
}

/// Part 2: eight worker processes with the mock transport.
fn processes(url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    let names: Vec<String> = (0..HOSTS).map(|i| format!("m{i:04}.test")).collect();
    std::fs::write(&hosts, names.join("\n")).unwrap();
    let worker = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_sshbench"))
            .args(["run", "--mock-transport", "--fleet", "mock", "-q"])
            .args([
                "--mode",
                "connect",
                "--rounds",
                "1",
                "--kex",
                "curve25519-sha256",
            ])
            .args(["--hostkeys", "ssh-ed25519", "--db", url])
            .arg("--hosts")
            .arg(&hosts)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let started = Instant::now();
    let first = worker();
    // The first creates the fleet; the others join it.
    std::thread::sleep(Duration::from_millis(300));
    let mut all = vec![first];
    all.extend((1..WORKERS).map(|_| worker()));
    for w in all {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let wall = started.elapsed().as_secs_f64();
    let store = Store::connect_to_read(url).unwrap();
    let fleet = store.fleet_named("mock").unwrap().unwrap();
    let f = store.fleet(fleet).unwrap().unwrap();
    assert!(f.hosts.iter().all(|h| h.status == HostStatus::Complete));
    let runs = store.runs().unwrap();
    let mut by_host: Vec<&str> = runs.iter().map(|r| r.destination.as_str()).collect();
    by_host.sort();
    let before = by_host.len();
    by_host.dedup();
    assert_eq!(
        (before, by_host.len()),
        (HOSTS, HOSTS),
        "a host measured twice"
    );
    // A host's time from its claim to its end, by its place in the fleet: the last
    // hundred took 160 times the first hundred's while each host pooled every full host
    // of its kind before it.
    let clock = store.fleet_clock(fleet).unwrap();
    let mut took: Vec<(usize, f64)> = (clock.hosts.iter())
        .filter_map(|h| Some((h.position, h.finished_s? - h.claimed_s?)))
        .collect();
    took.sort_by_key(|(p, _)| *p);
    let median_ms = |part: &[(usize, f64)]| {
        let mut t: Vec<f64> = part.iter().map(|(_, s)| s * 1e3).collect();
        t.sort_by(f64::total_cmp);
        percentile(&t, 0.5)
    };
    println!(
        "{WORKERS} sshbench processes, mock transport, {HOSTS} hosts: {wall:.1} s \
         ({:.1} ms of wall time per host, all workers together); every host complete in \
         exactly one run; a host's claim to its end: median {:.0} ms over the first 100, \
         {:.0} ms over the last 100",
        wall * 1e3 / HOSTS as f64,
        median_ms(&took[..100]),
        median_ms(&took[took.len() - 100..]),
    );
}

fn main() {
    let cluster = pg::Cluster::start();
    store_calls(&cluster.database("claims"));
    processes(&cluster.database("workers"));
}
