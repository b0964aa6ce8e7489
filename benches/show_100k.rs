//! How fast `sshbench show` answers over a database of 100,000 samples.
//!
//! Run with `cargo bench --bench show_100k`. Builds a throwaway database (1 run of 440
//! suites in four modes × 224 rounds + 1 more run; 100,320 samples, the echo ones with
//! 100 round trips each), then times the whole command
//! (process start to exit) and the in-process pipeline, 7 times each, and prints the
//! medians. Not a test: timings on a shared machine are for reading, not asserting.
//! `SHOW_100K_KEEP=PATH` keeps a copy of the database there (to profile `show` on it).

use sshbench::model::AlgoLists;
use sshbench::model::RunStatus;
use sshbench::model::{CpuTimes, Outcome, Sample, Window};
use sshbench::model::{Mode, Suite};
use sshbench::plan::PlanItem;
use sshbench::store::{NewRun, Selection, Store};
use sshbench::sys::machine::Machine;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("big.sqlite");
    let store = Store::open(&db).unwrap();
    let mut items = Vec::new();
    for c in 0..11 {
        for m in 0..10 {
            for mode in Mode::CLASSIC {
                items.push(PlanItem {
                    mode,
                    suite: Suite {
                        cipher: Some(format!("cipher{c}")),
                        mac: Some(format!("mac{m}")),
                        kex: (mode == Mode::Connect).then(|| format!("kex{c}")),
                        ..Suite::default()
                    },
                });
            }
        }
    }
    let started = Instant::now();
    let mut total = 0;
    // 440 suites × 228 rounds = 100,320 samples, a quarter of them echo sessions.
    for (run, rounds) in [(0, 224u32), (1, 4)] {
        let id = store
            .create_run(&NewRun {
                destination: "bench",
                target: &sshbench::destination::Target::parse("pi@nas").unwrap(),
                resolved: None,
                client_version: "OpenSSH_9.2p1",
                server_version: None,
                server_strict_kex: None,
                machine: &Machine::default(),
                options: &sshbench::model::RunOptions::default(),
                plan: &items,
                seed: run,
                client_defaults: &AlgoLists::new(),
            })
            .unwrap();
        store.begin_bulk().unwrap();
        for round in 0..rounds {
            for (i, item) in items.iter().enumerate() {
                let t = Duration::from_micros(
                    100_000 + ((i as u64 * 7919 + round as u64 * 104729) % 20_000),
                );
                let s = Sample {
                    wall: t + Duration::from_millis(200),
                    transfer: Some(t * 2),
                    bytes: 200_000_000,
                    window: Some(Window {
                        bytes: 100_000_000,
                        time: t,
                    }),
                    client_cpu: Some(CpuTimes {
                        user: t,
                        system: t / 4,
                    }),
                    echoes: if item.mode == Mode::Echo {
                        (0..100)
                            .map(|k| t.as_secs_f64() / 1000.0 * (1.0 + k as f64 / 100.0))
                            .collect()
                    } else {
                        Vec::new()
                    },
                    ..Sample::new(item.suite.clone(), item.mode, Outcome::Success)
                };
                store.add_sample(id, i, round, &s).unwrap();
                total += 1;
            }
        }
        store.end_bulk().unwrap();
        // Finished, as a run that ran to its end is (which packs it for reports).
        store.set_status(id, RunStatus::Complete).unwrap();
    }
    println!(
        "built {total} samples in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    drop(store);
    // For profiling: keep a copy of the database where the caller asks.
    if let Some(keep) = std::env::var_os("SHOW_100K_KEEP") {
        std::fs::copy(&db, keep).unwrap();
    }

    let bin = env!("CARGO_BIN_EXE_sshbench");
    let mut whole = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        let out = std::process::Command::new(bin)
            .args(["show", "bench", "--top", "all", "--db"])
            .arg(&db)
            .output()
            .unwrap();
        whole.push(t.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut inproc = Vec::new();
    let store = Store::open(&db).unwrap();
    for _ in 0..7 {
        let t = Instant::now();
        let (runs, samples) = store
            .select(&Selection {
                destination: Some("bench".into()),
                ..Selection::default()
            })
            .unwrap();
        let scope = sshbench::views::scope::Scope::build(&runs, &samples);
        let (doc, json) = sshbench::views::show::show(
            &scope,
            &sshbench::views::show::ShowOptions {
                chart: None,
                modes: Mode::ALL.to_vec(),
                top: None,
                worst: false,
                sort: sshbench::views::show::SortKey::Speed,
                all_grades: false,
            },
        );
        let text = sshbench::views::export::render(
            &doc,
            &json,
            sshbench::views::export::Format::Table,
            Default::default(),
        );
        assert!(text.len() > 1000);
        inproc.push(t.elapsed());
    }
    println!(
        "sshbench show over {total} samples: median {:.0} ms (whole command, 7 runs); in-process pipeline median {:.0} ms",
        median(whole).as_secs_f64() * 1e3,
        median(inproc).as_secs_f64() * 1e3
    );
}
