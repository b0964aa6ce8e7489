//! The PostgreSQL store against a real, throwaway PostgreSQL cluster: every field of a
//! sample round-trips, concurrent migrations and writers, `sshbench run` processes
//! writing into one database at once, every view reading the same from it as from a
//! SQLite copy (`db copy`), `kill -9` then `--resume` losing nothing, TLS, and servers
//! that never answer or vanish mid-run given up on in bounded time.

use crate::common;

use crate::common::pg::Cluster;
use crate::common::{SampleBuilder, assert_success, sshbench, text};
use sshbench::model::RunStatus;
use sshbench::model::{CpuWindow, Mode, Negotiated, Outcome, Phases, Stream, Suite};
use sshbench::plan::PlanItem;
use sshbench::store::{NewRun, Store};
use sshbench::sys::machine::Machine;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn full_sample() -> sshbench::model::Sample {
    let suite = Suite {
        kex: Some("curve25519-sha256".into()),
        hostkey: Some("ssh-ed25519".into()),
        cipher: Some("aes128-ctr".into()),
        mac: Some("hmac-sha2-256".into()),
        compression: Some("zlib@openssh.com".into()),
        tool: Some("-R 256".into()),
        data: None,
        // A run's second client: the column round-trips as the others do.
        client: 1,
        keystrokes: Some(sshbench::model::KeystrokeTiming::Interval(40)),
        exec: Some(sshbench::model::ExecVia::Master),
    };
    let mut s = SampleBuilder::new(Mode::Send, &suite)
        .wall(Duration::from_millis(300))
        .transfer(1 << 20, 1 << 19, Duration::from_millis(40))
        .files(3)
        .client_cpu(Duration::from_millis(50), Duration::from_millis(20))
        .rekey(1 << 30, 0.085)
        .echoes(vec![0.5, 0.25, 0.125])
        .build();
    s.rtt = Some(Duration::from_micros(150));
    s.compression_factor = Some(0.5);
    s.stream = Some(Stream {
        of: 4,
        start: 0.5,
        end: 1.25,
    });
    s.client_window_cpu = Some(CpuWindow {
        feeder: Some(0.01),
        cores: Some(1.0),
        waited: Some(0.002),
        ..CpuWindow::of(0.03, Duration::from_millis(40), 1 << 19)
    });
    s.server_cpu = Some(CpuWindow {
        seconds: 0.04,
        peak: 0.035,
        limit: Some(0.25),
        throttled: Some(0.5),
        waited: Some(0.001),
        cores: Some(2.0),
        feeder: None,
        interval: Duration::from_millis(45),
        bytes: 1 << 19,
    });
    s.phases = Some(Phases {
        tcp: 0.01,
        version: 0.02,
        kex: 0.03,
        auth: 0.04,
        session: 0.05,
    });
    s.negotiated = Some(Box::new(Negotiated {
        cipher_cs: Some("aes128-ctr".into()),
        ..Negotiated::default()
    }));
    let span = |seconds, packets| sshbench::model::WireSpan {
        seconds,
        bytes_out: packets * 36,
        packets_out: packets,
        bytes_in: packets * 40,
        packets_in: packets + 1,
    };
    s.typing = Some(Box::new(sshbench::model::Typing {
        keys: vec![sshbench::model::TypedKey {
            idle_s: Some(0.8125),
            position: 0,
            echo_s: 0.0105,
        }],
        wire: Some(sshbench::model::TypingWire {
            typing: span(1.75, 90),
            idle: span(3.5, 116),
        }),
    }));
    s
}

fn new_run<'a>(
    machine: &'a Machine,
    plan: &'a [PlanItem],
    defaults: &'a sshbench::model::AlgoLists,
) -> NewRun<'a> {
    NewRun {
        destination: "pi@nas",
        target: &common::TARGET,
        resolved: Some(("127.0.0.1", 2222, "pi")),
        client_version: "OpenSSH_9.2p1",
        server_version: Some("SSH-2.0-OpenSSH_9.2p1"),
        server_strict_kex: Some(true),
        machine,
        options: &common::OPTIONS,
        plan,
        seed: 7,
        client_defaults: defaults,
    }
}

/// A new run of one planned send item.
fn create_run(store: &Store) -> i64 {
    let (machine, defaults) = (Machine::default(), Default::default());
    let plan = [PlanItem {
        mode: Mode::Send,
        suite: Suite::default(),
    }];
    store
        .create_run(&new_run(&machine, &plan, &defaults))
        .unwrap()
}

/// Every field of runs and samples, replacement of a slot, deletion with its samples,
/// and the schema version, as with SQLite.
#[test]
fn runs_and_samples_round_trip_through_postgres() {
    let pg = Cluster::start();
    let url = pg.database("roundtrip");
    let store = Store::connect(&url).unwrap();
    let id = create_run(&store);
    let full = full_sample();
    store.add_sample(id, 0, 1, &full).unwrap();
    let json = |s: &sshbench::model::Sample| serde_json::to_value(s).unwrap();
    let back = store.samples(&[id]).unwrap();
    assert_eq!(json(&back[0].sample), json(&full));
    assert_eq!((back[0].run_id, back[0].item, back[0].round), (id, 0, 1));

    // A failed slot measured again replaces the first attempt.
    let failed = SampleBuilder::new(Mode::Send, &Suite::default())
        .outcome(Outcome::Failed {
            kind: sshbench::model::FailureKind::Timeout,
            problem: sshbench::model::Problem::quote("it's \"slow\"; DROP TABLE runs; --"),
        })
        .build();
    store.add_sample(id, 0, 2, &failed).unwrap();
    assert_eq!(
        json(&store.samples(&[id]).unwrap()[1].sample),
        json(&failed)
    );
    store.add_sample(id, 0, 2, &full).unwrap();
    assert_eq!(store.samples(&[id]).unwrap().len(), 2);
    assert_eq!(store.done_slots(id).unwrap().len(), 2);

    store.set_server_window(id, 2 << 20).unwrap();
    store.set_tcp_rate(id, 1.5e9).unwrap();
    store.set_status(id, RunStatus::Complete).unwrap();
    let run = store.run(id).unwrap().unwrap();
    assert_eq!(
        (run.status.as_str(), run.samples, run.seed),
        ("complete", 2, 7)
    );
    assert_eq!(
        (run.server_window, run.tcp_rate),
        (Some(2 << 20), Some(1.5e9))
    );
    assert_eq!(run.server_strict_kex, Some(true));
    let finished = run.finished_at.unwrap();
    assert!(
        finished.ends_with('Z') && finished >= run.started_at,
        "{finished}"
    );
    assert_eq!(store.latest_unfinished().unwrap(), None);
    drop(store);

    // Opening again migrates nothing; the version is the SQLite schema's.
    let store = Store::connect(&url).unwrap();
    let v: i64 = pg.sql("roundtrip", "SELECT version FROM sshbench_schema")[0].get(0);
    assert_eq!(v, sshbench::store::SCHEMA_VERSION);
    assert!(store.delete_run(id).unwrap());
    assert!(store.samples(&[]).unwrap().is_empty());
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

/// Several processes' stores open (and migrate) a new database at once and write
/// into it at once; nothing is lost and every run keeps its own samples.
#[test]
fn concurrent_writers_share_one_database() {
    let pg = Cluster::start();
    let url = pg.database("shared");
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let url = url.clone();
            std::thread::spawn(move || {
                let store = Store::connect(&url).unwrap();
                let id = create_run(&store);
                for round in 1..=25 {
                    let mut s = full_sample();
                    s.bytes = w * 1000 + round as u64;
                    store.add_sample(id, 0, round, &s).unwrap();
                }
                id
            })
        })
        .collect();
    let ids: Vec<i64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let store = Store::connect(&url).unwrap();
    for (w, id) in ids.iter().enumerate() {
        let samples = store.samples(&[*id]).unwrap();
        assert_eq!(samples.len(), 25, "writer {w}");
        assert!(samples.iter().all(|s| s.sample.bytes / 1000 == w as u64));
    }
    let versions = pg.sql("shared", "SELECT count(*) FROM sshbench_schema");
    assert_eq!(
        versions[0].get::<_, i64>(0),
        1,
        "one migration, one version row"
    );
}

/// A small real sweep of the sandbox.
const SWEEP: &[&str] = &[
    "-q",
    "--mode",
    "connect,send",
    "--rounds",
    "2",
    "--kex",
    "curve25519-sha256",
    "--hostkeys",
    "ssh-ed25519",
    "--ciphers",
    "aes128-ctr,aes128-gcm@openssh.com",
    "--macs",
    "hmac-sha2-256-etm@openssh.com",
    "--size",
    "8M",
];

/// Two `sshbench run` processes write into one PostgreSQL database at once; then every
/// view reads the same from it as from a SQLite file the runs are copied into.
#[test]
fn two_runs_write_into_postgres_at_once_and_every_view_reads_as_from_sqlite() {
    let pg = Cluster::start();
    let url = pg.database("team");
    let runs: Vec<_> = (0..2)
        .map(|i| {
            sshbench()
                .args(["run", "--db", &url, "--seed", &(i + 1).to_string()])
                .args(SWEEP)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for r in runs {
        let out = r.wait_with_output().unwrap();
        assert_success(&out, "run");
    }
    let store = Store::connect(&url).unwrap();
    let stored = store.runs().unwrap();
    assert_eq!(stored.len(), 2);
    assert!(
        stored
            .iter()
            .all(|r| r.status == RunStatus::Complete && r.samples > 0)
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("copy.sqlite");
    let file = file.to_str().unwrap();
    let copy = sshbench()
        .args(["db", "copy", &url, file])
        .output()
        .unwrap();
    assert_success(&copy, "db copy");
    assert!(
        text(&copy.stderr).contains("2 runs and"),
        "{}",
        text(&copy.stderr)
    );
    // Copying again finds both there.
    let again = sshbench()
        .args(["db", "copy", &url, file])
        .output()
        .unwrap();
    assert!(
        text(&again.stderr).contains("0 runs and 0 samples"),
        "{}",
        text(&again.stderr)
    );

    let views: &[&[&str]] = &[
        &["runs"],
        &["show", "--top", "all"],
        &["show", "--format", "json"],
        &["summary"],
        &["summary", "--format", "json"],
        &["recommend"],
        &["compare", "run:1", "run:2"],
        &["show", "--fleet", "local*", "--format", "json"],
        &["summary", "--fleet", "local*"],
        &["recommend", "--fleet", "local*"],
    ];
    for v in views {
        let of = |db: &str| {
            let out = sshbench().args(*v).args(["--db", db]).output().unwrap();
            assert_success(&out, v);
            text(&out.stdout)
        };
        let (from_pg, from_sqlite) = (of(&url), of(file));
        assert!(!from_pg.trim().is_empty(), "{v:?}");
        assert_eq!(from_pg, from_sqlite, "{v:?}");
    }
    let report = |db: &str, name: &str| {
        let path = dir.path().join(name);
        let out = sshbench()
            .args(["report", "--db", db, "--output"])
            .arg(&path)
            .output()
            .unwrap();
        assert_success(&out, "report");
        std::fs::read_to_string(path).unwrap()
    };
    assert_eq!(report(&url, "pg.html"), report(file, "sqlite.html"));
}

fn stored_samples(url: &str) -> i64 {
    Store::connect(url)
        .ok()
        .and_then(|s| s.runs().ok())
        .and_then(|r| r.first().map(|r| r.samples))
        .unwrap_or(0)
}

/// `kill -9` of a run writing into PostgreSQL keeps every sample it committed, and
/// `--resume` finishes the plan without touching them.
#[test]
fn kill_9_then_resume_loses_nothing_in_postgres() {
    let pg = Cluster::start();
    let url = pg.database("killed");
    let mut child = sshbench()
        .args(["run", "--db", &url, "--seed", "3"])
        .args(SWEEP)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    while stored_samples(&url) < 5 {
        assert!(
            Instant::now() < deadline,
            "fewer than 5 samples within 90 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let store = Store::connect(&url).unwrap();
    let run = &store.runs().unwrap()[0];
    assert_eq!(
        run.status,
        RunStatus::Running,
        "killed runs look unfinished"
    );
    let before = store.samples(&[run.id]).unwrap();
    let out = sshbench()
        .args(["run", "--resume", "-q", "--db", &url])
        .output()
        .unwrap();
    assert_success(&out, "resume");
    let run = store.run(run.id).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    let after = store.samples(&[run.id]).unwrap();
    assert!(after.len() > before.len(), "the resume measured the rest");
    let json = |s: &sshbench::store::StoredSample| serde_json::to_value(&s.sample).unwrap();
    for b in &before {
        let a = after
            .iter()
            .find(|a| (a.item, a.round) == (b.item, b.round))
            .expect("a sample stored before the kill is still there");
        assert_eq!(json(a), json(b));
    }
    let slots: std::collections::HashSet<_> = after.iter().map(|s| (s.item, s.round)).collect();
    assert_eq!(slots.len(), after.len(), "every slot once");
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

/// A large selection (20,500 samples of one run) reads the same from PostgreSQL and its
/// SQLite copy, every sample once, whether the run is complete or not.
#[test]
fn a_large_selection_reads_the_same_from_both_stores() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.sqlite");
    let file = file.to_str().unwrap();
    let store = Store::open(std::path::Path::new(file)).unwrap();
    let run = create_run(&store);
    const SAMPLES: u32 = 20_500;
    store.begin_bulk().unwrap();
    let suite = Suite {
        cipher: Some("aes128-ctr".into()),
        mac: Some("hmac-sha2-256".into()),
        ..Suite::default()
    };
    for round in 1..=SAMPLES {
        let time = Duration::from_micros(1000 + u64::from(round % 89));
        let s = SampleBuilder::new(Mode::Send, &suite)
            .transfer(2 << 20, 1 << 20, time)
            .build();
        store.add_sample(run, 0, round, &s).unwrap();
    }
    store.end_bulk().unwrap();
    drop(store);
    let pg = Cluster::start();
    let url = pg.database("big");
    let copy = sshbench()
        .args(["db", "copy", file, &url])
        .output()
        .unwrap();
    assert_success(&copy, "db copy");
    let show = |db: &str| {
        let out = sshbench()
            .args(["show", "--format", "json", "--db", db])
            .output()
            .unwrap();
        assert_success(&out, "show");
        text(&out.stdout)
    };
    let (from_pg, from_sqlite) = (show(&url), show(file));
    assert_eq!(from_pg, from_sqlite);
    assert!(from_pg.contains(&format!("\"n\": {SAMPLES}")), "{from_pg}");
    // Completed, the run reads as before, and the rows stay the record: an edit beneath
    // the store shows in the report.
    for db in [url.as_str(), file] {
        let store = Store::connect(db).unwrap();
        let id = store.runs().unwrap()[0].id;
        store.set_status(id, RunStatus::Complete).unwrap();
    }
    assert_eq!(
        (show(&url), show(file)),
        (from_pg.clone(), from_sqlite.clone())
    );
    pg.sql("big", "UPDATE samples SET window_s = window_s * 2");
    let edited = show(&url);
    assert_ne!(edited, from_pg, "the report reads the rows");
    assert!(edited.contains(&format!("\"n\": {SAMPLES}")), "{edited}");
}

/// TLS as libpq does it. The TLS cluster takes no plain TCP at all, so that a command
/// that works against it went over TLS: unset (`prefer`) and `require` encrypt,
/// `verify-ca` takes only a certificate its CA signed, `verify-full` only one for the
/// name connected to; the password appears in no error.
#[test]
fn the_store_speaks_tls_where_offered_and_checks_the_server_when_asked() {
    let pg = Cluster::start_tls();
    let url = pg.database("secure");
    let runs_with = |url: &str, env: &[(&str, &Path)]| {
        let mut cmd = sshbench();
        cmd.envs(env.iter().copied());
        cmd.args(["runs", "--db", url]).output().unwrap()
    };
    let runs = |url: &str, home: Option<&Path>| match home {
        Some(h) => runs_with(url, &[("HOME", h)]),
        None => runs_with(url, &[]),
    };
    let refused_with = |url: &str, env: &[(&str, &Path)], why: &str| {
        let out = runs_with(url, env);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{url}: {err}");
        assert!(err.contains(why), "{url}: {why:?} in {err}");
        assert!(!err.contains("Secret-4-tls"), "{err}");
        if why.contains("certificate verify failed") {
            assert!(
                err.contains("is the CA that signed it in sslrootcert"),
                "{err}"
            );
        }
    };
    let refused = |url: &str, home: Option<&Path>, why: &str| match home {
        Some(h) => refused_with(url, &[("HOME", h)], why),
        None => refused_with(url, &[], why),
    };
    refused(&format!("{url}?sslmode=disable"), None, "no encryption");
    // Written with the mode unset, read back under each mode that checks nothing.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.sqlite");
    create_run(&Store::open(&file).unwrap());
    let copy = sshbench()
        .args(["db", "copy", file.to_str().unwrap(), &url])
        .output()
        .unwrap();
    assert_success(&copy, "db copy over TLS");
    for q in ["", "?sslmode=prefer", "?sslmode=require"] {
        let out = runs(&format!("{url}{q}"), None);
        assert_success(&out, q);
        assert!(
            text(&out.stdout).contains("pi@nas"),
            "{q}: {}",
            text(&out.stdout)
        );
    }
    let with = |url: &str, mode: &str, ca: &Path| {
        format!("{url}?sslmode={mode}&sslrootcert={}", ca.display())
    };
    let by_name = url.replace("127.0.0.1", "localhost");
    assert_success(&runs(&with(&url, "verify-ca", &pg.ca()), None), "verify-ca");
    assert_success(
        &runs(&with(&by_name, "verify-full", &pg.ca()), None),
        "full",
    );
    // `require` given a CA checks it, as libpq does.
    let other = pg.other_ca();
    refused(
        &with(&url, "require", &other),
        None,
        "certificate verify failed",
    );
    refused(
        &with(&url, "verify-ca", &other),
        None,
        "certificate verify failed",
    );
    // The certificate names localhost, not 127.0.0.1.
    refused(&with(&url, "verify-full", &pg.ca()), None, "mismatch");
    let empty = tempfile::tempdir().unwrap();
    let verify = format!("{by_name}?sslmode=verify-full");
    refused(&verify, Some(empty.path()), "sslrootcert=PATH");
    // Without sslrootcert, libpq's default file.
    std::fs::create_dir(empty.path().join(".postgresql")).unwrap();
    std::fs::copy(pg.ca(), empty.path().join(".postgresql/root.crt")).unwrap();
    assert_success(&runs(&verify, Some(empty.path())), "root.crt");
    // libpq's variables where the URL is silent, and the URL where it is not.
    let (disable, full) = (Path::new("disable"), Path::new("verify-full"));
    refused_with(&url, &[("PGSSLMODE", disable)], "no encryption");
    let env = [("PGSSLMODE", full), ("PGSSLROOTCERT", other.as_path())];
    refused_with(&by_name, &env, "certificate verify failed");
    let ok = runs_with(&with(&by_name, "verify-full", &pg.ca()), &env);
    assert_success(&ok, "the URL over PGSSLMODE and PGSSLROOTCERT");
}

/// An old server whose TLS no client takes today: `prefer` asks again without TLS, as
/// libpq does (and as sshbench did before it spoke TLS); `require` does not.
#[test]
fn prefer_falls_back_to_plain_from_a_server_whose_tls_fails() {
    let pg = Cluster::start_outdated_tls();
    let url = pg.database("old");
    let runs = |url: &str| sshbench().args(["runs", "--db", url]).output().unwrap();
    assert_success(&runs(&url), "prefer");
    let out = runs(&format!("{url}?sslmode=require"));
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("error performing TLS handshake"), "{err}");
}

/// `require` against a server without TLS is refused, not quietly sent in the clear.
#[test]
fn require_is_refused_by_a_server_without_tls() {
    let pg = Cluster::start();
    let url = pg.database("plain");
    let out = sshbench()
        .args(["runs", "--db", &format!("{url}?sslmode=require")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("TLS"), "{}", text(&out.stderr));
}

/// A server that takes the connection and never answers (here a bare TCP listener) costs
/// `connect_timeout`, not forever: the bound covers TLS and authentication too.
#[test]
fn a_server_that_never_answers_is_given_up_on_after_connect_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
    let url = format!("postgres://me@127.0.0.1:{port}/db?connect_timeout=1");
    let started = Instant::now();
    let mut child = sshbench()
        .args(["runs", "--db", &url])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "still waiting");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no answer within 1 s"),
        "{}",
        text(&out.stderr)
    );
    drop(held);
}

/// Forward every connection to `listen` (an address of this machine) on to `to`; the
/// port it listens on. (`sandbox::relay` listens on 127.0.0.1 only, which a network
/// namespace cannot reach.)
fn relay(listen: &str, to: u16) -> u16 {
    let l = std::net::TcpListener::bind((listen, 0)).unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in l.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", to)) else {
                continue;
            };
            for (mut a, mut b) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || std::io::copy(&mut a, &mut b));
            }
        }
    });
    port
}

/// A database server that vanishes mid-run (here: the run's network goes down, so
/// nothing answers and nothing is refused either) is given up on within about a minute,
/// by default, with an error that names the database; what was stored before stays.
/// (TCP alone would retransmit for some 15 minutes.) The run is in a network namespace
/// of its own, its database reached through a relay on this side of the namespace's link.
#[test]
fn a_server_that_vanishes_mid_run_is_given_up_on_within_a_minute() {
    let pg = Cluster::start();
    let url = pg.database("vanish");
    let ns = sshbench::sandbox::lab::Netns::create(None).expect("a network namespace (root)");
    let port = relay(&ns.host_ip, pg.port);
    let far = url.replace(
        &format!("127.0.0.1:{}", pg.port),
        &format!("{}:{port}", ns.host_ip),
    );
    let mut child = ns
        .command(Path::new(env!("CARGO_BIN_EXE_sshbench")))
        .args(["run", "localhost", "--mock-transport", "-q"])
        .args(["--rounds", "2000", "--max-rounds", "2000", "--db", &far])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while stored_samples(&url) < 100 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no samples stored"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The namespace's end of the link goes down: its packets go nowhere.
    let links = std::process::Command::new("ip")
        .args(["netns", "exec", &ns.name, "ip", "-o", "link", "show"])
        .output()
        .unwrap();
    let links = text(&links.stdout);
    let dev = (links.lines())
        .filter_map(|l| l.split(": ").nth(1))
        .map(|d| d.split('@').next().unwrap())
        .find(|d| *d != "lo")
        .unwrap_or_else(|| panic!("no link in {links}"));
    let down = std::process::Command::new("ip")
        .args(["netns", "exec", &ns.name, "ip", "link", "set", dev, "down"])
        .status()
        .unwrap();
    assert!(down.success());
    let (cut, before) = (Instant::now(), stored_samples(&url));
    while child.try_wait().unwrap().is_none() && cut.elapsed() < Duration::from_secs(150) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let waited = cut.elapsed();
    let stderr = text(&out.stderr);
    assert!(
        waited < Duration::from_secs(100),
        "still waiting after {waited:?}"
    );
    assert!(!out.status.success(), "{stderr}");
    for said in [
        "storing a sample: run 1 in postgres://",
        "/vanish",
        "run --resume",
    ] {
        assert!(stderr.contains(said), "{said:?} missing: {stderr}");
    }
    assert!(stored_samples(&url) >= before);
}

/// A database server restarted mid-run (an administrator's restart, a failover), the
/// run's connections ended as soon as they are made for a while, or the run's own
/// server process killed (the connection cut without a word, the server ending every
/// other and in recovery for a moment) costs the run nothing: the connection is made
/// again as often as it is lost, the sample that met the loss is stored, and the run
/// ends complete, with every slot that a run the same on SQLite fills, and a note.
#[test]
fn a_server_restarted_mid_run_costs_the_run_nothing() {
    let mut pg = Cluster::start();
    let url = pg.database("restarted");
    let run = ["run", "localhost", "--mock-transport", "--seed", "5"];
    let rounds = ["--rounds", "100", "--max-rounds", "100"];
    // Its progress goes to a file: a pipe left unread until the end would fill and stop
    // the run (about 800 samples' lines).
    let log = tempfile::NamedTempFile::new().unwrap();
    let child = sshbench()
        .args(run)
        .args(rounds)
        .args(["--db", &url])
        .stdout(Stdio::null())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let wait_for = |n: i64| {
        while stored_samples(&url) < n {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "not {n} samples"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(200);
    pg.restart();
    wait_for(stored_samples(&url) + 200);
    // For a second and a half the run's connections are ended as soon as they are made:
    // a connection made again meets the loss again before its statement is through.
    let others = "AND pid <> pg_backend_pid()";
    let mut killer = pg.admin("restarted").unwrap();
    let end_them = format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = 'restarted' {others}"
    );
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        killer.simple_query(&end_them).unwrap();
    }
    drop(killer);
    wait_for(stored_samples(&url) + 200);
    let pid = format!("SELECT pid FROM pg_stat_activity WHERE datname = 'restarted' {others}");
    let pids = pg.sql("restarted", &pid);
    assert_eq!(pids.len(), 1, "the run's one connection");
    let pid = nix::unistd::Pid::from_raw(pids[0].get(0));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = std::fs::read_to_string(log.path()).unwrap();
    assert!(out.status.success(), "the run: {stderr}");
    let lost = stderr
        .split("the connection to the database was lost ")
        .nth(1)
        .and_then(|rest| rest.split(" times and made again").next())
        .and_then(|n| n.parse::<u32>().ok());
    assert!(lost.is_some_and(|n| n >= 3), "{lost:?}: {stderr}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("same.sqlite");
    let file = file.to_str().unwrap();
    let out = sshbench()
        .args(run)
        .args(rounds)
        .args(["-q", "--db", file])
        .output()
        .unwrap();
    assert_success(&out, "the run on SQLite");
    let store = Store::connect(&url).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Complete);
    let same = Store::connect(file).unwrap().runs().unwrap();
    assert_eq!(runs[0].samples, same[0].samples, "every slot stored");
    assert!(stored_samples(&url) > 200, "the run went on");
}

/// A URL without its password takes it where libpq would: `PGPASSWORD`, else the
/// password file (`PGPASSFILE`), which is not read while others may read it.
#[test]
fn a_password_comes_from_pgpassword_or_a_private_password_file() {
    let pg = Cluster::start_tls();
    let with_password = pg.database("team");
    let url = with_password.replace(":Secret-4-tls@", "@");
    assert_ne!(url, with_password);
    let home = tempfile::tempdir().unwrap();
    let runs = |env: &[(&str, &str)]| {
        let mut cmd = sshbench();
        cmd.env("HOME", home.path()).env_remove("PGPASSWORD");
        cmd.envs(env.iter().copied());
        cmd.args(["runs", "--db", &url]).output().unwrap()
    };
    let refused = runs(&[]);
    assert!(!refused.status.success(), "no password anywhere");
    assert_success(&runs(&[("PGPASSWORD", "Secret-4-tls")]), "PGPASSWORD");
    let file = home.path().join("team.pgpass");
    let line = format!("127.0.0.1:{}:team:sshbench:Secret-4-tls\n", pg.port);
    std::fs::write(&file, format!("127.0.0.1:*:other:sshbench:wrong\n{line}")).unwrap();
    let set = |mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    set(0o600);
    let passfile = file.to_str().unwrap();
    assert_success(&runs(&[("PGPASSFILE", passfile)]), "PGPASSFILE");
    set(0o644);
    let open = runs(&[("PGPASSFILE", passfile)]);
    let err = text(&open.stderr);
    assert!(!open.status.success(), "{err}");
    assert!(err.contains("chmod 600"), "{err}");
    assert!(!err.contains("Secret-4-tls"), "{err}");
}
