//! How fast `sshbench show --fleet` answers over a fleet of 1,000 hosts × 500 samples,
//! from SQLite and from PostgreSQL.
//!
//! Run with `cargo bench --bench fleet_1000` (needs PostgreSQL's binaries, as the tests
//! do; as root it runs the throwaway cluster as `nobody`). Builds a SQLite database (one
//! run per host: 10 connect, 20 send and 20 receive suites × 10 rounds), copies it into
//! a fresh PostgreSQL database with `sshbench db copy`, then times the whole command
//! (process start to exit) 5 times on each and prints the medians and ranges (for
//! PostgreSQL right after the copy, and after `VACUUM ANALYZE`: the steady state). Not a test: timings
//! on a shared machine are for reading, not asserting.

#[allow(dead_code)]
#[path = "../tests/common/pg.rs"]
mod pg;

use sshbench::model::RunStatus;
use sshbench::model::{AlgoLists, Mode, Outcome, Sample, Suite, Window};
use sshbench::plan::PlanItem;
use sshbench::store::{NewRun, Store};
use sshbench::sys::machine::Machine;
use std::path::Path;
use std::time::{Duration, Instant};

const HOSTS: usize = 1000;
const ROUNDS: u32 = 10;

fn plan() -> Vec<PlanItem> {
    let mut items = Vec::new();
    for k in 0..5 {
        for h in 0..2 {
            items.push(PlanItem {
                mode: Mode::Connect,
                suite: Suite {
                    kex: Some(format!("kex{k}")),
                    hostkey: Some(format!("hostkey{h}")),
                    ..Suite::default()
                },
            });
        }
    }
    for mode in [Mode::Send, Mode::Receive] {
        for c in 0..5 {
            for m in 0..4 {
                items.push(PlanItem {
                    mode,
                    suite: Suite {
                        cipher: Some(format!("cipher{c}")),
                        mac: Some(format!("mac{m}")),
                        ..Suite::default()
                    },
                });
            }
        }
    }
    items
}

/// One sample of host `h`, item `i`, round `r`: each host has its own speed and its own
/// best suite.
fn sample(item: &PlanItem, h: usize, i: usize, r: u32) -> Sample {
    let noise = ((h * 31 + i * 7919 + r as usize * 104_729) % 1000) as f64 / 1e4;
    let speed = 1.0 + ((h * 13 + i * 17) % 50) as f64 / 100.0 + noise;
    let t = Duration::from_secs_f64(0.1 / speed);
    Sample {
        wall: t + Duration::from_millis(150),
        transfer: Some(t * 2),
        bytes: 100_000_000,
        window: item.mode.is_transfer().then_some(Window {
            bytes: 50_000_000,
            time: t,
        }),
        ..Sample::new(item.suite.clone(), item.mode, Outcome::Success)
    }
}

fn build(db: &Path) -> usize {
    let store = Store::open(db).unwrap();
    let items = plan();
    let machine = Machine::default();
    let defaults = AlgoLists::new();
    let mut total = 0;
    store.begin_bulk().unwrap();
    for h in 0..HOSTS {
        let destination = format!("host{h:04}.fleet");
        let id = store
            .create_run(&NewRun {
                destination: &destination,
                target: &sshbench::destination::Target::parse("pi@nas").unwrap(),
                resolved: None,
                client_version: "OpenSSH_9.2p1",
                server_version: None,
                server_strict_kex: Some(true),
                machine: &machine,
                options: &sshbench::model::RunOptions::default(),
                plan: &items,
                seed: h as u64,
                client_defaults: &defaults,
            })
            .unwrap();
        for r in 1..=ROUNDS {
            for (i, item) in items.iter().enumerate() {
                store.add_sample(id, i, r, &sample(item, h, i, r)).unwrap();
                total += 1;
            }
        }
        store.set_status(id, RunStatus::Complete).unwrap();
    }
    store.end_bulk().unwrap();
    total
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The whole `show --fleet` command over `db`, 5 times: "median (min-max) ms".
fn time_show(db: &str) -> String {
    let bin = env!("CARGO_BIN_EXE_sshbench");
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let out = std::process::Command::new(bin)
            .args(["show", "--fleet", "--top", "all", "--db", db])
            .output()
            .unwrap();
        times.push(t.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("Fleet of {HOSTS} hosts")));
    }
    let (lo, hi) = (times.iter().min().unwrap(), times.iter().max().unwrap());
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    format!(
        "{:.0} ms ({:.0}-{:.0})",
        ms(&median(times.clone())),
        ms(lo),
        ms(hi)
    )
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    // FLEET_BENCH_DB=PATH keeps the SQLite database there (reused if it exists), to
    // profile against.
    let file = std::env::var_os("FLEET_BENCH_DB")
        .map_or_else(|| dir.path().join("fleet.sqlite"), std::path::PathBuf::from);
    let started = Instant::now();
    let total = if file.exists() {
        HOSTS * plan().len() * ROUNDS as usize
    } else {
        build(&file)
    };
    println!(
        "{HOSTS} hosts, {total} samples ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let sqlite = time_show(file.to_str().unwrap());
    let cluster = pg::Cluster::start();
    let url = cluster.database("fleet");
    let started = Instant::now();
    let copy = std::process::Command::new(env!("CARGO_BIN_EXE_sshbench"))
        .args(["db", "copy", file.to_str().unwrap(), &url])
        .output()
        .unwrap();
    assert!(
        copy.status.success(),
        "{}",
        String::from_utf8_lossy(&copy.stderr)
    );
    println!(
        "db copy into PostgreSQL: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let fresh = time_show(&url);
    // Autovacuum gets to a freshly loaded table within minutes and competes with the
    // first reports for CPU meanwhile; a team's database is read in the steady state.
    cluster.batch("fleet", "VACUUM ANALYZE");
    let postgres = time_show(&url);
    drop(cluster);
    println!(
        "sshbench show --fleet over {HOSTS} hosts × {} samples, median (range) of 5 whole commands: SQLite {sqlite}, PostgreSQL {postgres} (right after the copy: {fresh})",
        total / HOSTS,
    );
}
