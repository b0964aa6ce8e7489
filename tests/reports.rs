//! Snapshot tests of every report view and format over a fixed database fixture, and the
//! end-to-end check that `recommend` never lists a broken algorithm.

mod common;

use common::SampleBuilder;
use sshbench::model::RunStatus;
use sshbench::model::{
    AlgoKind, AlgoLists, ExecVia, FailureKind, KeyPlace, KeystrokeTiming, Mode, Outcome, Phases,
    Problem, Sample, Stop, StopReason, Suite, TypedKey, Typing, TypingWire, WireSpan, WorkloadSpec,
};
use sshbench::plan::PlanItem;
use sshbench::store::{NewRun, Store};
use sshbench::sys::machine::Machine;
use sshbench::views::recommend::Goal;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

fn suite(kex: Option<&str>, hk: Option<&str>, cipher: Option<&str>, mac: Option<&str>) -> Suite {
    let s = |x: Option<&str>| x.map(str::to_string);
    Suite {
        kex: s(kex),
        hostkey: s(hk),
        cipher: s(cipher),
        mac: s(mac),
        compression: None,
        tool: None,
        data: None,
        client: 0,
        keystrokes: None,
        exec: None,
    }
}

/// (mode, suite, base figure): seconds for connect and echo, MB/s for transfers.
fn fixture_plan() -> Vec<(Mode, Suite, f64)> {
    vec![
        (
            Mode::Connect,
            suite(Some("curve25519-sha256"), Some("ssh-ed25519"), None, None),
            0.120,
        ),
        (
            Mode::Connect,
            suite(Some("ecdh-sha2-nistp256"), Some("ssh-ed25519"), None, None),
            0.125,
        ),
        (
            Mode::Connect,
            suite(
                Some("diffie-hellman-group1-sha1"),
                Some("ssh-ed25519"),
                None,
                None,
            ),
            0.118,
        ),
        (
            Mode::Connect,
            suite(Some("curve25519-sha256"), Some("rsa-sha2-512"), None, None),
            0.140,
        ),
        (
            Mode::Send,
            suite(None, None, Some("aes128-gcm@openssh.com"), None),
            900.0,
        ),
        (
            Mode::Send,
            suite(None, None, Some("chacha20-poly1305@openssh.com"), None),
            600.0,
        ),
        (
            Mode::Send,
            suite(
                None,
                None,
                Some("aes128-ctr"),
                Some("hmac-sha2-256-etm@openssh.com"),
            ),
            700.0,
        ),
        (
            Mode::Send,
            suite(None, None, Some("aes128-ctr"), Some("hmac-sha1")),
            720.0,
        ),
        (
            Mode::Send,
            suite(None, None, Some("aes128-ctr"), Some("hmac-md5")),
            650.0,
        ),
        (
            Mode::Send,
            suite(None, None, Some("arcfour256"), Some("hmac-md5")),
            950.0,
        ),
        (
            Mode::Send,
            suite(None, None, Some("3des-cbc"), Some("hmac-sha1")),
            28.0,
        ),
        (
            Mode::Receive,
            suite(None, None, Some("aes128-gcm@openssh.com"), None),
            500.0,
        ),
        (
            Mode::Receive,
            suite(None, None, Some("chacha20-poly1305@openssh.com"), None),
            380.0,
        ),
        (
            Mode::Receive,
            suite(
                None,
                None,
                Some("aes128-ctr"),
                Some("hmac-sha2-256-etm@openssh.com"),
            ),
            420.0,
        ),
        (
            Mode::Receive,
            suite(None, None, Some("aes128-ctr"), Some("hmac-sha1")),
            415.0,
        ),
        (
            Mode::Receive,
            suite(None, None, Some("3des-cbc"), Some("hmac-sha1")),
            27.0,
        ),
        (
            Mode::Echo,
            suite(None, None, Some("aes128-gcm@openssh.com"), None),
            0.000_110,
        ),
        (
            Mode::Echo,
            suite(
                None,
                None,
                Some("aes128-ctr"),
                Some("hmac-sha2-256-etm@openssh.com"),
            ),
            0.000_125,
        ),
        (
            Mode::Echo,
            suite(None, None, Some("3des-cbc"), Some("hmac-sha1")),
            0.000_180,
        ),
        // Appended last, so the other items keep their indices: a post-quantum hybrid,
        // slower to connect than the classical exchanges.
        (
            Mode::Connect,
            suite(
                Some("sntrup761x25519-sha512@openssh.com"),
                Some("ssh-ed25519"),
                None,
                None,
            ),
            0.180,
        ),
        // Echo's factorized cross: with aes128-ctr + hmac-sha1, 3des-cbc +
        // hmac-sha2-256-etm is a sum.
        (
            Mode::Echo,
            suite(None, None, Some("aes128-ctr"), Some("hmac-sha1")),
            0.000_130,
        ),
    ]
}

/// sftp uploads of both shapes, and an rsync download (MB/s), per cipher.
fn workload_plan() -> Vec<(Mode, Suite, f64)> {
    let gcm = suite(None, None, Some("aes128-gcm@openssh.com"), None);
    let ctr = suite(
        None,
        None,
        Some("aes128-ctr"),
        Some("hmac-sha2-256-etm@openssh.com"),
    );
    let ctr_r = Suite {
        tool: Some("-R 256".into()),
        ..ctr.clone()
    };
    vec![
        (Mode::SftpPutFile, gcm.clone(), 700.0),
        (Mode::SftpPutFile, ctr.clone(), 640.0),
        (Mode::SftpPutFile, ctr_r, 660.0),
        (Mode::SftpPutTree, gcm.clone(), 38.0),
        (Mode::SftpPutTree, ctr.clone(), 36.5),
        (Mode::RsyncGetFile, gcm, 300.0),
    ]
}

/// A fixed sample: figures vary by a fixed pattern per round.
fn sample(mode: Mode, s: &Suite, base: f64, round: u32, scale: f64) -> Sample {
    let wobble = [1.0, 1.02, 0.97, 1.01][round as usize % 4] * scale;
    let mut b = SampleBuilder::new(mode, s)
        .client_cpu(Duration::from_millis(80), Duration::from_millis(20));
    match mode {
        Mode::Connect => {
            // Fixed phases but the key exchange's, which carries the suite's own cost.
            let wall = base * wobble;
            let (tcp, version, auth, session) = (0.002, 0.004, 0.030, 0.040);
            b = b.wall(Duration::from_secs_f64(wall)).phases(Phases {
                tcp,
                version,
                kex: wall - tcp - version - auth - session,
                auth,
                session,
            });
        }
        Mode::Echo => {
            // 100 keystrokes: a spread of 0-45% above the base, and one slow one in 50.
            let echoes = (0..100)
                .map(|i| {
                    base * wobble
                        * (1.0 + (i % 10) as f64 * 0.05 + if i % 50 == 7 { 2.0 } else { 0.0 })
                })
                .collect();
            b = b.wall(Duration::from_millis(300)).bytes(100).echoes(echoes);
        }
        Mode::Exec => {
            // Ten commands of `base` seconds, those with output 10% longer; a master's
            // start in its phases.
            let each = (0..10).map(|i| base * wobble * [1.0, 1.1][i % 2]).collect();
            b = b.wall(Duration::from_secs(2)).bytes(10).echoes(each);
            if s.exec == Some(ExecVia::Master) {
                b = b.phases(Phases {
                    tcp: 0.001,
                    version: 0.002,
                    kex: 0.080,
                    auth: 0.020,
                    session: 0.040,
                });
            }
        }
        Mode::X11 => {
            // Five xdpyinfo runs of `base` (120 ms more with the clock on), an xwd of
            // 40 ms (twice that compressed: the CPU it costs on a fast link).
            let clock = s.keystrokes == Some(KeystrokeTiming::Yes);
            let each = base * wobble + if clock { 0.120 } else { 0.0 };
            let bulk = 0.040 * wobble * if s.compression.is_some() { 2.0 } else { 1.0 };
            b = b
                .wall(Duration::from_secs(1))
                .echoes(vec![each; 5])
                .transfer(3_148_907, 3_148_907, Duration::from_secs_f64(bulk));
        }
        Mode::Typing => {
            b = b.wall(Duration::from_secs(7)).bytes(24);
            let mut built = b.build();
            built.typing = Some(Box::new(typed(s.keystrokes, base * wobble)));
            built.echoes = built
                .typing
                .iter()
                .flat_map(|t| &t.keys)
                .map(|k| k.echo_s)
                .collect();
            return built;
        }
        m if m.workload().is_some() => {
            // 2000 files of 16 KiB, or one file of 32 MiB.
            let (bytes, files) = WorkloadSpec::default().size(m.workload().unwrap().shape);
            let time = Duration::from_secs_f64(bytes as f64 / (base * 1e6 * wobble));
            b = b
                .wall(time + Duration::from_millis(300))
                .transfer(bytes, bytes, time)
                .files(files);
        }
        _ => {
            let bytes = 100_000_000u64;
            let time = Duration::from_secs_f64(bytes as f64 / (base * 1e6 * wobble));
            b = b
                .wall(time * 2 + Duration::from_millis(200))
                .transfer(200_000_000, bytes, time);
            // chacha20-poly1305 rekeys every 1 GiB, 0.1 s each: its figures are the
            // sustained rate (600 MB/s between rekeys reads 568.2).
            if s.cipher.as_deref() == Some("chacha20-poly1305@openssh.com") {
                b = b.rekey(1 << 30, 0.1);
            }
        }
    }
    b.build()
}

/// A typing sample's 24 keys in the pattern's places, each `base` seconds; with the clock
/// on, 2-18 ms more for those within the chaff period, and chaff in the pause after.
fn typed(clock: Option<KeystrokeTiming>, base: f64) -> Typing {
    let on = clock.is_some_and(|k| !k.is_off());
    let mut keys = Vec::new();
    for (burst, pause) in [None, Some(0.8), Some(3.5)].into_iter().enumerate() {
        for position in 0..8u8 {
            let mut key = TypedKey {
                idle_s: if position == 0 { pause } else { Some(0.08) },
                position,
                echo_s: base * (1.0 + burst as f64 * 0.01),
            };
            if on && key.place() != KeyPlace::AfterLongPause {
                key.echo_s += f64::from(2 + 2 * position) * 1e-3;
            }
            keys.push(key);
        }
    }
    let span = |seconds: f64, packets: u64| WireSpan {
        seconds,
        bytes_out: packets * 36,
        packets_out: packets,
        bytes_in: packets * 36,
        packets_in: packets,
    };
    let (typing, idle) = if on { (90, 116) } else { (24, 0) };
    Typing {
        keys,
        wire: Some(TypingWire {
            typing: span(1.75, typing),
            idle: span(3.5, idle),
        }),
    }
}

/// Two runs of `pi@nas` and one of `pi@nas2` (5% faster), with one failure and one refusal.
pub fn fixture_db(path: &Path) {
    let store = Store::open(path).unwrap();
    let mut defaults = AlgoLists::new();
    defaults.set(
        AlgoKind::Kex,
        vec![
            "sntrup761x25519-sha512".into(),
            "sntrup761x25519-sha512@openssh.com".into(),
            "curve25519-sha256".into(),
            "ecdh-sha2-nistp256".into(),
        ],
    );
    defaults.set(
        AlgoKind::HostKey,
        vec![
            "ssh-ed25519-cert-v01@openssh.com".into(),
            "ssh-ed25519".into(),
            "rsa-sha2-512".into(),
        ],
    );
    defaults.set(
        AlgoKind::Cipher,
        vec![
            "chacha20-poly1305@openssh.com".into(),
            "aes128-gcm@openssh.com".into(),
        ],
    );
    defaults.set(
        AlgoKind::Mac,
        vec![
            "umac-64-etm@openssh.com".into(),
            "hmac-sha2-256-etm@openssh.com".into(),
        ],
    );
    let machine = Machine {
        os: "linux".into(),
        arch: "x86_64".into(),
        ..Machine::default()
    };
    // pi@nas2's server lacks strict KEX (Terrapin), pi@nas's has it.
    // pi@backup (the newest) also ran workloads.
    for (dest, runs, scale) in [
        ("pi@nas", 2, 1.0),
        ("pi@nas2", 1, 1.05),
        ("pi@backup", 1, 1.0),
    ] {
        let mut plan = fixture_plan();
        if dest == "pi@backup" {
            plan.extend(workload_plan());
        }
        let items: Vec<PlanItem> = plan
            .iter()
            .map(|(m, s, _)| PlanItem {
                mode: *m,
                suite: s.clone(),
            })
            .collect();
        for _ in 0..runs {
            let id = store
                .create_run(&NewRun {
                    destination: dest,
                    target: &common::TARGET,
                    resolved: None,
                    client_version: "OpenSSH_9.2p1",
                    server_version: Some("SSH-2.0-OpenSSH_9.2p1"),
                    server_strict_kex: Some(dest == "pi@nas"),
                    machine: &machine,
                    options: &common::OPTIONS,
                    plan: &items,
                    seed: 1,
                    client_defaults: &defaults,
                })
                .unwrap();
            for round in 0..4u32 {
                for (i, (mode, s, base)) in plan.iter().enumerate() {
                    let mut smp = sample(*mode, s, *base, round, scale);
                    if s.cipher.as_deref() == Some("arcfour256") && dest == "pi@nas2" {
                        smp.outcome = Outcome::refused("no matching cipher found".into());
                    }
                    if round == 2 && i == 3 {
                        let late = Problem::NoResult {
                            after_s: 120,
                            last: None,
                        };
                        smp.outcome = Outcome::failed(FailureKind::Timeout, late);
                    }
                    store.add_sample(id, i, round, &smp).unwrap();
                }
            }
            if dest == "pi@backup" {
                store.set_stops(id, &raced(&plan)).unwrap();
                let note = sshbench::model::Note::OneSessionPerConnection;
                store.add_notes(id, &[note.clone(), note]).unwrap();
            }
            store.set_status(id, RunStatus::Complete).unwrap();
        }
    }
}

/// A race's stops over the fixture's plan, as its figures make them: within 2% of the
/// mode's best equal to it, within 12% (tied, in the fixture's ±6.5% intervals) still
/// racing at the budget (connect's at `--max-rounds`), the best too if anything ties
/// with it (else separated), the others dropped.
fn raced(plan: &[(Mode, Suite, f64)]) -> Vec<(usize, Stop)> {
    let best = |mode: Mode| {
        let of_mode = plan.iter().filter(|p| p.0 == mode).map(|p| p.2);
        match mode {
            Mode::Connect | Mode::Echo => of_mode.fold(f64::INFINITY, f64::min),
            _ => of_mode.fold(0.0, f64::max),
        }
    };
    let gap = |p: &(Mode, Suite, f64)| (p.2 - best(p.0)).abs() / best(p.0);
    let close = |p: &(Mode, Suite, f64)| gap(p) < 0.12;
    (plan.iter().enumerate())
        .map(|(i, p)| {
            let tied = plan.iter().filter(|q| q.0 == p.0 && close(q)).count() > 1;
            let reason = match (p.2 == best(p.0), close(p)) {
                (true, _) if !tied => StopReason::Separated,
                (false, true) if gap(p) < 0.02 => StopReason::Equal,
                (_, true) if p.0 == Mode::Connect => StopReason::Rounds,
                (_, true) => StopReason::Budget,
                _ => StopReason::Dropped,
            };
            (i, Stop { reason, round: 3 })
        })
        .collect()
}

fn fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fixture.sqlite");
    fixture_db(&db);
    (dir, db)
}

fn sshbench(db: &Path, args: &[&str]) -> String {
    common::stdout_of(db, args)
}

/// A row with implausible figures (a hostile or broken database) never panics a view:
/// a wall time of 1e300 s makes its sample a failure said so, other figures unknown.
#[test]
fn implausible_stored_figures_read_as_unknown_not_a_panic() {
    let (_dir, db) = fixture();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let first = "(SELECT max(id) FROM samples WHERE round > 0 AND mode = 'send')";
    let corrupt = format!(
        "UPDATE samples SET wall_s = 1e300, window_s = -1, server_cpu_s = 1e300, \
         rtt_s = 1e300, bytes = -5, phases_json = '{{\"tcp\":1e300,\"version\":0,\"kex\":0,\"auth\":0,\"session\":0}}' \
         WHERE id = {first}"
    );
    conn.execute(&corrupt, []).unwrap();
    let every =
        "UPDATE samples SET client_window_cpu_s = 1e300, transfer_s = -3 WHERE mode = 'receive'";
    conn.execute(every, []).unwrap();
    drop(conn);
    for args in [
        &["show"][..],
        &["show", "--format", "json"],
        &["summary"],
        &["recommend"],
        &["compare", "aes128-ctr", "aes256-gcm@openssh.com"],
    ] {
        let out = common::sshbench()
            .args(args)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        let err = common::text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            out.status.success() || out.status.code() == Some(1),
            "{args:?}: {err}"
        );
    }
    let json = sshbench(&db, &["show", "--format", "json", "--mode", "send"]);
    assert!(json.contains("implausible wall_s"), "{json}");
}

/// One view in every format, each a snapshot of its own.
fn snapshot_view(name: &str, args: &[&str]) {
    let (_dir, db) = fixture();
    for format in ["table", "markdown", "csv", "json"] {
        let mut a = args.to_vec();
        a.extend(["--format", format]);
        let out = sshbench(&db, &a);
        if format == "json" {
            serde_json::from_str::<serde_json::Value>(&out).expect("valid JSON");
        }
        insta::assert_snapshot!(format!("{name}_{format}"), out);
    }
}

/// One test per view, so that a failure names the view.
macro_rules! view_tests {
    ($($test:ident: $name:literal => [$($arg:literal),*];)*) => {
        $(
            #[test]
            fn $test() {
                snapshot_view($name, &[$($arg),*]);
            }
        )*
    };
}

view_tests! {
    view_show: "show" => ["show", "pi@nas", "--top", "all"];
    view_show_worst: "show_worst" => ["show", "pi@nas", "--worst", "--top", "3", "--mode", "send"];
    view_show_terrapin: "show_terrapin" => ["show", "pi@nas2", "--mode", "send"];
    view_summary: "summary" => ["summary", "pi@nas"];
    view_summary_terrapin: "summary_terrapin" => ["summary", "pi@nas2", "--top", "3"];
    view_recommend: "recommend" => ["recommend", "pi@nas"];
    view_recommend_send_legacy: "recommend_send_legacy" => ["recommend", "pi@nas", "--for", "send", "--allow", "legacy"];
    view_recommend_interactive: "recommend_interactive" => ["recommend", "pi@nas", "--for", "interactive"];
    view_recommend_terrapin: "recommend_terrapin" => ["recommend", "pi@nas2"];
    view_recommend_by_speed: "recommend_by_speed" => ["recommend", "pi@nas", "--order", "speed"];
    view_recommend_sftp_put: "recommend_sftp_put" => ["recommend", "pi@backup", "--for", "sftp-put"];
    view_recommend_rsync_put: "recommend_rsync_put" => ["recommend", "pi@backup", "--for", "rsync-put"];
    view_show_echo_chart: "show_echo_chart" => ["show", "pi@nas", "--mode", "echo", "--chart"];
    view_compare: "compare" => ["compare", "pi@nas", "pi@nas2"];
    view_compare_notes: "compare_notes" => ["compare", "pi@nas", "pi@backup"];
    view_summary_workloads: "summary_workloads" => ["summary", "pi@backup", "--top", "2"];
    view_show_workloads: "show_workloads" => ["show", "pi@backup", "--mode", "send,receive,sftp-put,rsync-get", "--top", "all"];
    view_show_fleet: "show_fleet" => ["show", "--fleet", "--top", "all"];
    view_summary_fleet: "summary_fleet" => ["summary", "--fleet", "pi@nas*", "--top", "3"];
    view_recommend_fleet: "recommend_fleet" => ["recommend", "--fleet"];
}

/// A run of two clients (`--ssh`): every suite through each, the second's transfers a
/// third faster and its connections a little slower; each client's own summary and
/// block, then which client is fastest.
#[test]
fn view_clients() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("clients.sqlite");
    let store = Store::open(&db).unwrap();
    let plan = fixture_plan();
    let items: Vec<PlanItem> = (0..2u8)
        .flat_map(|client| {
            plan.iter().map(move |(m, s, _)| PlanItem {
                mode: *m,
                suite: Suite {
                    client,
                    ..s.clone()
                },
            })
        })
        .collect();
    let machine = Machine::default();
    let id = store
        .create_run(&NewRun {
            destination: "pi@nas",
            target: &common::TARGET,
            resolved: None,
            client_version: "OpenSSH_9.2p1 Debian-2+deb12u7, OpenSSL 3.0.17",
            server_version: Some("SSH-2.0-OpenSSH_10.0p2"),
            server_strict_kex: Some(true),
            machine: &machine,
            options: &common::OPTIONS,
            plan: &items,
            seed: 1,
            client_defaults: &AlgoLists::default(),
        })
        .unwrap();
    let side = |version: &str| sshbench::store::ClientSide {
        version: version.into(),
        ..Default::default()
    };
    let sides = [
        side("OpenSSH_9.2p1 Debian-2+deb12u7, OpenSSL 3.0.17"),
        side("OpenSSH_10.0p2"),
    ];
    store.set_clients(id, &sides).unwrap();
    for round in 0..4u32 {
        for (i, item) in items.iter().enumerate() {
            let base = plan[i % plan.len()].2;
            let scale = match (item.suite.client, item.mode) {
                (0, _) => 1.0,
                (_, Mode::Connect | Mode::Echo) => 1.04,
                _ => 1.3,
            };
            let smp = sample(item.mode, &item.suite, base, round, scale);
            store.add_sample(id, i, round, &smp).unwrap();
        }
    }
    store.set_status(id, RunStatus::Complete).unwrap();
    drop(store);
    for format in ["table", "json"] {
        let out = sshbench(&db, &["summary", "--format", format]);
        insta::assert_snapshot!(format!("clients_summary_{format}"), out);
    }
    let rec = sshbench(&db, &["recommend", "--for", "send"]);
    insta::assert_snapshot!("clients_recommend", rec);
}

/// The table a fleet run ends with: every host, its state, run and why it failed.
#[test]
fn view_fleet_run() {
    use sshbench::model::fleet::{Disagreement, HostWay};
    use sshbench::model::{Failure, HostProblem, HostStatus, RunOptions};
    use sshbench::store::{FleetHost, FleetRecord};
    use sshbench::views::export::{self, Format, Style};
    let (_dir, db) = fixture();
    let counts = Store::open(&db).unwrap().sample_counts().unwrap();
    let host =
        |position: usize, destination: &str, status: &str, run_id, error: Option<&str>| FleetHost {
            position,
            destination: destination.into(),
            status: HostStatus::parse(status).unwrap(),
            problem: error.map(|said| {
                HostProblem::Fatal(Failure {
                    kind: FailureKind::Auth,
                    problem: Problem::quote(said),
                })
            }),
            run_id,
            way: match position {
                0 => Some(HostWay::Full { first: true }),
                1 => Some(HostWay::FellBack {
                    why: Disagreement::OtherBest {
                        mode: sshbench::model::Mode::Send,
                        best: Box::new(sshbench::model::Suite {
                            cipher: Some("aes128-ctr".into()),
                            mac: Some("umac-64-etm@openssh.com".into()),
                            ..Default::default()
                        }),
                        kind_best: Box::new(sshbench::model::Suite {
                            cipher: Some("aes128-gcm@openssh.com".into()),
                            ..Default::default()
                        }),
                    },
                }),
                _ => None,
            },
        };
    let fleet = FleetRecord {
        id: 7,
        started_at: "2026-12-01T10:00:00Z".into(),
        status: RunStatus::Failed,
        options: RunOptions::default(),
        ssh: Vec::new(),
        jobs: 2,
        sealed: false,
        name: None,
        lease_s: 60,
        client: None,
        full: sshbench::model::fleet::FleetFull::All,
        hosts: vec![
            host(0, "pi@nas", "complete", Some(1), None),
            host(1, "pi@nas2", "complete", Some(3), None),
            host(
                2,
                "router",
                "failed",
                None,
                Some("Permission denied (publickey).\nmore"),
            ),
        ],
    };
    let (doc, view) = sshbench::views::fleet::fleet_run(&fleet, &counts);
    for (name, format) in [("table", Format::Table), ("json", Format::Json)] {
        let out = export::render(&doc, &view, format, Style::default());
        insta::assert_snapshot!(format!("fleet_run_{name}"), out);
    }
}

/// `fleet status`: three workers (one alive holding a host, one gone whose host was
/// taken over, one silent), the hosts held with their leases, a host claimed twice, and
/// the time left.
#[test]
fn view_fleet_status() {
    use sshbench::model::fleet::{Disagreement, HostWay};
    use sshbench::model::{HostStatus, RunOptions, WorkerClient};
    use sshbench::store::{FleetClock, FleetHost, FleetRecord, HostClaim, WorkerRecord};
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::fleet::status;
    let statuses = [
        HostStatus::Complete,
        HostStatus::Complete,
        HostStatus::Running,
        HostStatus::Running,
        HostStatus::Pending,
        HostStatus::Failed,
    ];
    let hosts = (statuses.iter().enumerate())
        .map(|(i, &status)| FleetHost {
            position: i,
            destination: format!("web{i}"),
            status,
            problem: None,
            run_id: (status != HostStatus::Pending).then_some(i as i64 + 1),
            way: match i {
                0 | 3 => Some(HostWay::Full { first: true }),
                1 => Some(HostWay::Contenders { items: 9, of: 41 }),
                2 => Some(HostWay::FellBack {
                    why: Disagreement::OtherLevel {
                        mode: sshbench::model::Mode::Send,
                        ratio: 0.48,
                    },
                }),
                _ => None,
            },
        })
        .collect();
    let client = WorkerClient {
        cpu_model: Some("AMD EPYC".into()),
        cores: Some(2),
        ssh: vec!["OpenSSH_9.2p1".into()],
    };
    let fleet = FleetRecord {
        id: 4,
        started_at: "2026-12-06T10:00:00Z".into(),
        status: RunStatus::Running,
        options: RunOptions::default(),
        ssh: Vec::new(),
        jobs: 1,
        sealed: true,
        name: Some("web".into()),
        lease_s: 60,
        client: Some(client.clone()),
        full: sshbench::model::fleet::FleetFull::First(3),
        hosts,
    };
    let now = 1_000_000.0;
    let worker = |id, machine: &str, pid, seen_ago, ended: Option<f64>, gone| WorkerRecord {
        id,
        machine: machine.into(),
        boot: None,
        pid,
        client: client.clone(),
        jobs: 1,
        started_s: now - 900.0,
        seen_s: now - seen_ago,
        ended_s: ended,
        gone,
    };
    let claim = |position, worker, lease_left: Option<f64>, claims, took: Option<f64>| HostClaim {
        position,
        worker,
        lease_until: lease_left.map(|l| now + l),
        claims,
        claimed_s: took.map(|t| now - 600.0 - t),
        finished_s: took.map(|_| now - 600.0),
    };
    let clock = FleetClock {
        now_s: now,
        workers: vec![
            worker(1, "client-a", 4100, 2.0, None, false),
            worker(2, "client-a", 4177, 300.0, Some(now - 300.0), true),
            worker(3, "client-b", 880, 190.0, None, false),
        ],
        hosts: vec![
            claim(0, None, None, 1, Some(240.0)),
            claim(1, None, None, 1, Some(300.0)),
            claim(2, Some(1), Some(41.5), 2, None),
            claim(3, Some(3), Some(-130.0), 1, None),
            claim(4, None, None, 0, None),
            claim(5, None, None, 1, None),
        ],
    };
    let kind = |server: &str| sshbench::model::fleet::HostKind {
        server_version: Some(server.into()),
        cpu: Some(sshbench::model::fleet::ServerCpu {
            model: Some("ARM Cortex-A72".into()),
            cpus: Some(4),
            aes: Some(false),
            sha: Some(false),
        }),
        ..Default::default()
    };
    let (pi, bsd) = (kind("SSH-2.0-OpenSSH_9.2p1"), kind("SSH-2.0-OpenSSH_9.9"));
    let kinds = [(0, pi.clone()), (1, pi.clone()), (2, pi), (3, bsd)];
    let view = status::view(&fleet, &clock, &kinds);
    let doc = status::document(&view);
    for (name, format) in [("table", Format::Table), ("json", Format::Json)] {
        let out = export::render(&doc, &view, format, Style::default());
        insta::assert_snapshot!(format!("fleet_status_{name}"), out);
    }
}

/// The headline `run` ends with, over the fixture's runs of one destination, as a
/// terminal table (every line within 100 columns), Markdown and JSON; and that of a
/// raced run (pi@backup's), which says how each mode's race ended.
#[test]
fn view_headline() {
    headline_of("pi@nas", "headline");
    headline_of("pi@backup", "headline_raced");
}

fn headline_of(destination: &str, snapshot: &str) {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::{headline, scope::Scope};
    let (_dir, db) = fixture();
    let store = Store::open(&db).unwrap();
    let (runs, samples) = store
        .select(&sshbench::store::Selection {
            destination: Some(destination.into()),
            ..Default::default()
        })
        .unwrap();
    let scope = Scope::build(&runs, &samples);
    let (doc, view) = headline::headline(&scope, headline::WIDTH);
    for (name, format) in [
        ("table", Format::Table),
        ("markdown", Format::Markdown),
        ("json", Format::Json),
    ] {
        let out = export::render(&doc, &view, format, Style::default());
        if name == "table" {
            for line in out.lines() {
                let width = line.chars().count();
                assert!(width <= headline::WIDTH, "{width} columns: {line}");
            }
        }
        insta::assert_snapshot!(format!("{snapshot}_{name}"), out);
    }
}

/// The headline of a run against a Dropbear router whose 24 KiB channel window over a
/// 0.2 ms round trip caps uploads, neither side's CPU full: it says the best send is
/// window-bound, what the window allows and what would help (a terminal table within
/// 100 columns, and JSON with its `bounds`).
#[test]
fn view_headline_window_bound() {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::{headline, scope::Scope};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let items: Vec<PlanItem> = (ctr_and_chacha().into_iter())
        .map(|suite| PlanItem {
            mode: Mode::Send,
            suite,
        })
        .collect();
    let id = router_run(&store, &items, "SSH-2.0-dropbear_2022.83");
    store.set_server_window(id, 24 * 1024).unwrap();
    for round in 1..4u32 {
        for (i, (item, rate)) in items.iter().zip([100e6, 98e6]).enumerate() {
            let wobble = [1.0, 1.01, 0.99][round as usize - 1];
            let time = Duration::from_secs_f64(1e8 / (rate * wobble));
            let s = SampleBuilder::new(Mode::Send, &item.suite)
                .wall(time * 2 + Duration::from_millis(200))
                .transfer(200_000_000, 100_000_000, time)
                .busy(0.4, 0.3)
                .rtt(Duration::from_micros(200))
                .build();
            store.add_sample(id, i, round, &s).unwrap();
        }
    }
    let (runs, samples) = store.select(&Default::default()).unwrap();
    let (doc, view) = headline::headline(&Scope::build(&runs, &samples), headline::WIDTH);
    let table = export::render(&doc, &view, Format::Table, Style::default());
    for line in table.lines() {
        let width = line.chars().count();
        assert!(width <= headline::WIDTH, "{width} columns: {line}");
    }
    insta::assert_snapshot!("headline_window_bound_table", table);
    let json = export::render(&doc, &view, Format::Json, Style::default());
    insta::assert_snapshot!("headline_window_bound_json", json);
}

/// An HPN-SSH server grows the window it takes uploads into: a send that moved what its
/// starting 2 MiB allows over 50 ms is said to be one whose buffer did not grow, and one
/// that moved four times that is not called window-bound at all.
#[test]
fn an_hpn_server_s_window_is_judged_as_one_that_grows() {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::{headline, scope::Scope};
    let said = |rate: f64| {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
        let item = PlanItem {
            mode: Mode::Send,
            suite: ctr_and_chacha()[0].clone(),
        };
        let id = router_run(
            &store,
            std::slice::from_ref(&item),
            "SSH-2.0-OpenSSH_10.2p1_hpn18.8.0",
        );
        store.set_server_window(id, 2 << 20).unwrap();
        for round in 1..4u32 {
            let time = Duration::from_secs_f64(1e8 / rate);
            let s = SampleBuilder::new(Mode::Send, &item.suite)
                .wall(time * 2 + Duration::from_millis(200))
                .transfer(200_000_000, 100_000_000, time)
                .busy(0.2, 0.2)
                .rtt(Duration::from_millis(50))
                .build();
            store.add_sample(id, 0, round, &s).unwrap();
        }
        let (runs, samples) = store.select(&Default::default()).unwrap();
        let (doc, view) = headline::headline(&Scope::build(&runs, &samples), headline::WIDTH);
        export::render(&doc, &view, Format::Table, Style::default()).replace('\n', " ")
    };
    let stuck = said(41e6);
    assert!(
        stuck.contains("the HPN-SSH server's channel window starts at 2 MiB"),
        "{stuck}"
    );
    let grown = said(170e6);
    assert!(!grown.contains("window-bound"), "{grown}");
    assert!(!grown.contains("network-bound"), "{grown}");
}

/// `show`, `summary` and `recommend` grade a suite the same way: chacha20-poly1305 is
/// recommended where the server has strict KEX and legacy where it has not.
#[test]
fn every_view_grades_terrapin_exposed_ciphers_alike() {
    let (dir, db) = fixture();
    let json = |args: &[&str]| -> serde_json::Value {
        let mut a = args.to_vec();
        a.extend(["--format", "json"]);
        serde_json::from_str(&sshbench(&db, &a)).unwrap()
    };
    let chacha = "chacha20-poly1305@openssh.com";
    for (dest, grade) in [("pi@nas", "recommended"), ("pi@nas2", "legacy")] {
        let show = json(&["show", dest, "--top", "all", "--mode", "send"]);
        let rows: Vec<&serde_json::Value> = show["suites"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["cipher"] == chacha)
            .collect();
        assert!(!rows.is_empty(), "{dest}: no chacha20 row");
        assert!(rows.iter().all(|r| r["grade"] == grade), "{dest}: {rows:?}");
        let summary = json(&["summary", dest, "--top", "50"]);
        let marginal = summary["marginals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == chacha && m["mode"] == "send")
            .expect("chacha20 marginal");
        assert_eq!(marginal["grade"], grade, "{dest}");
        let top = summary["top"].as_array().unwrap();
        assert!(
            top.iter()
                .filter(|s| s["cipher"] == chacha)
                .all(|s| s["grade"] == grade),
            "{dest}: {top:?}"
        );
        // The tables say the same.
        let table = sshbench(&db, &["show", dest, "--top", "all", "--mode", "send"]);
        let row = table.lines().find(|l| l.contains(chacha)).unwrap();
        assert!(row.contains(grade), "{dest}: {row}");
        // So does the HTML report's table.
        let page = dir.path().join(format!("{dest}.html"));
        let page_arg = page.display().to_string();
        sshbench(&db, &["report", dest, "-o", &page_arg]);
        let html = std::fs::read_to_string(&page).unwrap();
        let at = html
            .find(&format!("<td>{chacha}</td>"))
            .expect("chacha20 row");
        let row_end = html[at..].find("</tr>").unwrap();
        assert!(html[at..at + row_end].contains(grade), "{dest}: report row");
        // And recommend lists it by default only where it is recommended.
        let rec = sshbench(&db, &["recommend", dest, "--for", "send"]);
        let listed = rec
            .lines()
            .any(|l| l.contains("Ciphers ") && l.contains(chacha));
        assert_eq!(listed, grade == "recommended", "{dest}: {rec}");
    }
}

/// A run's notes on how it measured are on its report's page, and only on its own.
#[test]
fn the_report_says_how_the_runs_measured() {
    let (dir, db) = fixture();
    let page = |dest: &str| {
        let path = dir.path().join(format!("{dest}.html"));
        sshbench(&db, &["report", dest, "-o", path.to_str().unwrap()]);
        std::fs::read_to_string(&path).unwrap()
    };
    let said = "<dt>How the runs measured</dt><dd><ul id=\"notes\"><li>run #4: the server \
                ends a connection after its first session (as tinysshd does), so every sample \
                had a connection of its own (as with --connections sample)</li></ul></dd>";
    assert!(page("pi@backup").contains(said));
    assert!(!page("pi@nas").contains("How the runs measured"));
}

#[test]
fn selections_by_run_and_date() {
    let (_dir, db) = fixture();
    let one = sshbench(&db, &["show", "--run", "2", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["runs"], serde_json::json!([2]));
    // No destination: the newest run's.
    let newest = sshbench(&db, &["show", "--format", "json"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&newest).unwrap()["destination"],
        "pi@backup"
    );
    let later = common::sshbench()
        .args(["show", "pi@nas", "--since", "2999-01-01", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&later.stderr).contains("no stored runs match"));
    let bad = common::sshbench()
        .args(["show", "--since", "yesterday", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a date"));
    let compare_runs = sshbench(&db, &["compare", "run:1", "run:3", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&compare_runs).unwrap();
    let gcm = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["cipher"] == "aes128-gcm@openssh.com" && s["mode"] == "send")
        .unwrap();
    assert!(
        (gcm["ratio"].as_f64().unwrap() - 1.05).abs() < 1e-6,
        "{gcm}"
    );
    // 5% apart with 3 samples of ±2.6% each: not significant, and said so.
    assert_eq!(gcm["significant"], false);
}

#[test]
fn output_into_a_closed_pipe_does_not_panic() {
    let (_dir, db) = fixture();
    let mut child = common::sshbench()
        .args(["summary", "--db"])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // like `| head -0`
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn recommend_never_lists_broken_and_leads_with_the_best_grade_or_the_fastest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let out = common::sshbench()
        .arg("run")
        .arg("--db")
        .arg(&db)
        .args([
            "-q",
            "--mode",
            "send,connect",
            "--sample-time",
            "60ms",
            "--rounds",
            "3",
        ])
        .args([
            "--ciphers",
            "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,3des-cbc",
        ])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com,hmac-md5,hmac-sha1"])
        .args([
            "--kex",
            "curve25519-sha256,diffie-hellman-group1-sha1,ecdh-sha2-nistp256,sntrup761x25519-sha512",
        ])
        .args(["--hostkeys", "ssh-ed25519,ssh-dss,rsa-sha2-256"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The run recorded that the sandbox's sshd offers strict KEX, so nothing counts
    // as legacy for Terrapin.
    let runs = Store::open(&db).unwrap().runs().unwrap();
    assert_eq!(runs[0].server_strict_kex, Some(true));
    let rec: serde_json::Value = serde_json::from_str(&sshbench(
        &db,
        &["recommend", "--for", "send", "--format", "json"],
    ))
    .unwrap();
    assert!(!rec["notes"].to_string().contains("Terrapin"), "{rec}");
    let lines = rec["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 4, "{rec}");
    for l in lines {
        let kind = match l["keyword"].as_str().unwrap() {
            "KexAlgorithms" => AlgoKind::Kex,
            "HostKeyAlgorithms" => AlgoKind::HostKey,
            "Ciphers" => AlgoKind::Cipher,
            _ => AlgoKind::Mac,
        };
        for n in l["names"].as_array().unwrap() {
            let g = sshbench::offer::catalogue::grade(kind, n.as_str().unwrap());
            assert!(
                g.is_some_and(|g| g <= sshbench::offer::catalogue::Grade::Acceptable),
                "{n} listed: {rec}"
            );
        }
    }
    let first_of = |rec: &serde_json::Value, keyword: &str| -> String {
        let lines = rec["lines"].as_array().unwrap();
        let line = lines.iter().find(|l| l["keyword"] == keyword).unwrap();
        line["names"][0].as_str().unwrap().to_string()
    };
    let grade_of = |kind, name: &str| sshbench::offer::catalogue::grade(kind, name).unwrap();
    use sshbench::offer::catalogue::Grade;
    // By default the best grade leads: the post-quantum hybrid, though it connects
    // slower than the classical exchanges, and a recommended cipher.
    assert_eq!(first_of(&rec, "KexAlgorithms"), "sntrup761x25519-sha512");
    assert_eq!(
        grade_of(AlgoKind::Cipher, &first_of(&rec, "Ciphers")),
        Grade::Recommended
    );
    // By speed, the header says the order (the key exchanges: see the next test).
    let by_speed = |format: &str| {
        sshbench(
            &db,
            &[
                "recommend",
                "--for",
                "send",
                "--order",
                "speed",
                "--format",
                format,
            ],
        )
    };
    let rec: serde_json::Value = serde_json::from_str(&by_speed("json")).unwrap();
    assert!(by_speed("table").contains("fastest first across the allowed grades (--order speed)"));
    let lines = rec["lines"].as_array().unwrap();
    // The first cipher by speed belongs to the tie group of the fastest acceptable send
    // suite.
    let show: serde_json::Value = serde_json::from_str(&sshbench(
        &db,
        &["show", "--mode", "send", "--top", "all", "--format", "json"],
    ))
    .unwrap();
    let acceptable: Vec<&serde_json::Value> = show["suites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            matches!(s["grade"].as_str(), Some("recommended" | "acceptable"))
                && s["mean"].is_number()
        })
        .collect();
    let best = acceptable
        .iter()
        .max_by(|a, b| {
            a["mean"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["mean"].as_f64().unwrap())
        })
        .unwrap();
    let interval = |s: &serde_json::Value| {
        let (m, c) = (
            s["mean"].as_f64().unwrap(),
            s["ci95"].as_f64().unwrap_or(0.0),
        );
        (m - c, m + c)
    };
    let (lo, hi) = interval(best);
    let tie_ciphers: Vec<&str> = acceptable
        .iter()
        .filter(|s| {
            let (a, b) = interval(s);
            a <= hi && b >= lo
        })
        .map(|s| s["cipher"].as_str().unwrap())
        .collect();
    let first = lines.iter().find(|l| l["keyword"] == "Ciphers").unwrap()["names"][0]
        .as_str()
        .unwrap();
    assert!(
        tie_ciphers.contains(&first),
        "{first} not in {tie_ciphers:?}"
    );
}

/// On the sandbox, the post-quantum hybrid leads `KexAlgorithms` by default although
/// it connects slower, and curve25519 leads with `--order speed` (eight rounds, so that
/// the ~0.1 s between them is beyond the intervals).
#[test]
fn recommend_puts_post_quantum_first_unless_asked_for_speed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.sqlite");
    let out = common::sshbench()
        .args(["run", "-q", "--mode", "connect", "--rounds", "8"])
        .args(["--kex", "curve25519-sha256,sntrup761x25519-sha512"])
        .args(["--hostkeys", "ssh-ed25519", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    common::assert_success(&out, "run");
    let first_kex = |extra: &[&str]| -> String {
        let mut args = vec!["recommend", "--for", "connect", "--format", "json"];
        args.extend(extra);
        let rec: serde_json::Value = serde_json::from_str(&sshbench(&db, &args)).unwrap();
        let lines = rec["lines"].as_array().unwrap();
        let kex = lines
            .iter()
            .find(|l| l["keyword"] == "KexAlgorithms")
            .unwrap();
        kex["names"][0].as_str().unwrap().to_string()
    };
    assert_eq!(first_kex(&[]), "sntrup761x25519-sha512");
    assert_eq!(first_kex(&["--order", "speed"]), "curve25519-sha256");
}

#[test]
fn recommend_treats_terrapin_exposed_ciphers_as_legacy_without_strict_kex() {
    let (_dir, db) = fixture();
    let ciphers = |dest: &str, extra: &[&str]| -> (Vec<String>, String) {
        let mut args = vec!["recommend", dest, "--format", "json"];
        args.extend(extra);
        let v: serde_json::Value = serde_json::from_str(&sshbench(&db, &args)).unwrap();
        let names = v["lines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["keyword"] == "Ciphers")
            .unwrap()["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        (names, v["notes"].to_string())
    };
    let chacha = "chacha20-poly1305@openssh.com".to_string();
    // A server with strict KEX: chacha20-poly1305 is listed, nothing is said.
    let (names, notes) = ciphers("pi@nas", &[]);
    assert!(names.contains(&chacha), "{names:?}");
    assert!(!notes.contains("CVE-2023-48795"), "{notes}");
    // Without: it is legacy there, and the note says why.
    let (names, notes) = ciphers("pi@nas2", &[]);
    assert!(!names.contains(&chacha), "{names:?}");
    assert!(names.contains(&"aes128-gcm@openssh.com".to_string()));
    assert!(notes.contains("CVE-2023-48795"), "{notes}");
    // Asking for legacy brings it back, still with the note.
    let (names, notes) = ciphers("pi@nas2", &["--allow", "legacy"]);
    assert!(names.contains(&chacha), "{names:?}");
    assert!(notes.contains("CVE-2023-48795"), "{notes}");
    // `summary` warns about the one server, not the other.
    let warnings = |dest: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&sshbench(&db, &["summary", dest, "--format", "json"])).unwrap();
        v["warnings"].to_string()
    };
    assert!(warnings("pi@nas2").contains("CVE-2023-48795"));
    assert!(!warnings("pi@nas").contains("CVE-2023-48795"));
}

/// A server that leaves no acceptable cipher (tinysshd's only cipher is chacha20-poly1305,
/// and it offers no strict KEX; an OpenSSH sshd configured so): `recommend` says which
/// cipher was measured, what it is exposed to and what would fix it on that server,
/// instead of only "nothing acceptable". tinysshd has no `sshd_config` to edit.
#[test]
fn recommend_explains_a_dead_end() {
    let chacha = suite(None, None, Some("chacha20-poly1305@openssh.com"), None);
    let items: Vec<PlanItem> = [Mode::Send, Mode::Receive]
        .map(|mode| PlanItem {
            mode,
            suite: chacha.clone(),
        })
        .to_vec();
    let tinysshd = [
        "strict KEX removes that exposure",
        "tinysshd's set is fixed: the recommended ones \
         (aes128-gcm@openssh.com,aes256-gcm@openssh.com) are not in it",
    ];
    let sshd = [
        "strict KEX (OpenSSH 9.6 or later",
        // Names an OpenSSH sshd takes (the client's list), not RFC 5647's aes128-gcm.
        "sshd_config: `Ciphers aes128-gcm@openssh.com,aes256-gcm@openssh.com`",
    ];
    for (banner, fixes) in [
        ("SSH-2.0-tinysshd", tinysshd),
        ("SSH-2.0-OpenSSH_9.3", sshd),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db.sqlite");
        let store = Store::open(&db).unwrap();
        let id = router_run(&store, &items, banner);
        for round in 1..4u32 {
            for (i, item) in items.iter().enumerate() {
                let s = sample(item.mode, &item.suite, 300.0, round, 1.0);
                store.add_sample(id, i, round, &s).unwrap();
            }
        }
        let text = sshbench(&db, &["recommend", "router"]);
        let note = text
            .lines()
            .find(|l| l.contains("Ciphers:"))
            .unwrap_or_else(|| panic!("no note on ciphers: {text}"));
        let said = [
            "chacha20-poly1305@openssh.com (legacy here",
            "Terrapin",
            "--allow legacy",
        ];
        for expected in said.into_iter().chain(fixes) {
            assert!(
                note.contains(expected),
                "{banner}: {expected:?} missing: {note}"
            );
        }
        assert_eq!(
            text.contains("sshd_config"),
            banner.contains("OpenSSH"),
            "{text}"
        );
        // No line to give: the block says so, and no empty server block follows.
        assert!(
            text.contains("Host router\n    # nothing to set here"),
            "{text}"
        );
        assert!(!text.contains("# /etc/ssh/sshd_config"), "{text}");
        // Asked for, the legacy cipher is listed.
        let legacy = sshbench(&db, &["recommend", "router", "--allow", "legacy"]);
        assert!(
            legacy.contains("Ciphers chacha20-poly1305@openssh.com"),
            "{legacy}"
        );
    }
}

/// A mode whose every sample failed (a server that closes each connection after its
/// first session failed every shared send so before sshbench learnt to tell) has no
/// best suite: the headline says so, with the failure's message, and still answers for
/// the modes that worked.
#[test]
fn headline_names_a_mode_whose_every_sample_failed() {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::{headline, scope::Scope};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let chacha = suite(None, None, Some("chacha20-poly1305@openssh.com"), None);
    let kex = suite(Some("curve25519-sha256"), None, None, None);
    let items = vec![
        PlanItem {
            mode: Mode::Connect,
            suite: kex,
        },
        PlanItem {
            mode: Mode::Send,
            suite: chacha,
        },
    ];
    let id = router_run(&store, &items, "SSH-2.0-tinyssh_20230101");
    let closed = "kex_exchange_identification: Connection closed by remote host";
    for round in 1..4u32 {
        for (i, item) in items.iter().enumerate() {
            let mut s = sample(item.mode, &item.suite, 0.1, round, 1.0);
            if item.mode == Mode::Send {
                s.outcome = Outcome::failed(FailureKind::Network, Problem::quote(closed));
            }
            store.add_sample(id, i, round, &s).unwrap();
        }
    }
    let (runs, samples) = store.select(&Default::default()).unwrap();
    let (doc, view) = headline::headline(&Scope::build(&runs, &samples), headline::WIDTH);
    let out = export::render(&doc, &view, Format::Table, Style::default());
    let line = |mode: &str| {
        out.lines()
            .find(|l| l.starts_with(mode))
            .map(str::to_string)
    };
    assert!(
        line("connect").is_some_and(|l| l.contains("curve25519-sha256")),
        "{out}"
    );
    let send = line("send").unwrap_or_else(|| panic!("no send line: {out}"));
    assert!(send.contains("no figure: all 3 samples failed"), "{out}");
    let words = common::words(&out);
    assert!(words.contains(closed), "{out}");
    assert!(
        out.lines().all(|l| l.chars().count() <= headline::WIDTH),
        "{out}"
    );
    // `summary` says as much instead of empty tables.
    let tops = sshbench::views::summary::TopLists {
        n: 5,
        all_grades: false,
    };
    let (doc, view) = sshbench::views::summary::summary(&Scope::build(&runs, &samples), tops);
    let out = export::render(&doc, &view, Format::Table, Style::default());
    assert!(
        out.contains("send: no figure, no sample succeeded"),
        "{out}"
    );
    assert!(!out.contains("Top 0"), "{out}");
}

/// A run its `--budget` ended before every measurement had a sample: the answer says how
/// many it leaves out, and how to make them; a run that measured everything says nothing.
#[test]
fn headline_says_what_a_run_cut_short_by_its_budget_leaves_out() {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::{headline, scope::Scope};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let items: Vec<PlanItem> = ["aes128-ctr", "aes256-ctr", "aes128-gcm@openssh.com"]
        .map(|c| PlanItem {
            mode: Mode::Send,
            suite: suite(None, None, Some(c), None),
        })
        .to_vec();
    let id = router_run(&store, &items, "SSH-2.0-OpenSSH_9.2p1");
    for round in 1..3u32 {
        let s = sample(Mode::Send, &items[0].suite, 1e8, round, 1.0);
        store.add_sample(id, 0, round, &s).unwrap();
    }
    let answer = |store: &Store| {
        let (runs, samples) = store.select(&Default::default()).unwrap();
        let (doc, view) = headline::headline(&Scope::build(&runs, &samples), headline::WIDTH);
        common::words(&export::render(
            &doc,
            &view,
            Format::Table,
            Style::default(),
        ))
    };
    store.set_status(id, RunStatus::Budget).unwrap();
    let said = "The time budget (--budget) ran out before 2 of 3 measurements had a sample: \
                what follows leaves them out; `sshbench run --resume` makes them.";
    assert!(answer(&store).contains(said), "{}", answer(&store));
    let (runs, samples) = store.select(&Default::default()).unwrap();
    let view = headline::view(&Scope::build(&runs, &samples));
    let json = serde_json::to_value(&view).unwrap();
    let counts = serde_json::json!({"unmeasured": 2, "planned": 3});
    assert_eq!(json["cut_short"], counts, "{json}");
    // `recommend` says it beside its lists.
    use sshbench::views::recommend::{self, Goal, Order};
    let scope = Scope::build(&runs, &samples);
    let grade = sshbench::offer::catalogue::Grade::Acceptable;
    let advice = recommend::view(&scope, Goal::Send, grade, Order::Grade);
    let left_out = "ran out before 2 of 3 measurements had a sample: these lists leave them out";
    assert!(
        advice.notes.iter().any(|n| n.contains(left_out)),
        "{:?}",
        advice.notes
    );
    store.set_status(id, RunStatus::Complete).unwrap();
    assert!(!answer(&store).contains("ran out"), "{}", answer(&store));
}

/// Modes that could not be measured for one reason (a login shell that prints first stops
/// every tool) say it once: the modes below it say "as above", until another reason.
#[test]
fn headline_says_a_reason_shared_by_the_modes_below_once() {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::{headline, scope::Scope};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let chacha = suite(None, None, Some("chacha20-poly1305@openssh.com"), None);
    let modes = [
        Mode::Send,
        Mode::SftpPutFile,
        Mode::RsyncPutFile,
        Mode::RsyncPutTree,
        Mode::ScpPutFile,
    ];
    let items: Vec<PlanItem> = (modes.iter())
        .map(|&mode| PlanItem {
            mode,
            suite: chacha.clone(),
        })
        .collect();
    let id = router_run(&store, &items, "SSH-2.0-OpenSSH_9.2");
    let shell = Problem::NoisyShell {
        said: "Welcome".into(),
    };
    for (i, item) in items.iter().enumerate() {
        let mut s = sample(item.mode, &item.suite, 0.1, 1, 1.0);
        s.outcome = Outcome::Unavailable {
            problem: match item.mode {
                Mode::Send => continue,
                Mode::SftpPutFile => Problem::NoSftp,
                _ => shell.clone(),
            },
        };
        store.add_sample(id, i, 1, &s).unwrap();
    }
    let s = sample(Mode::Send, &chacha, 0.1, 1, 1.0);
    store.add_sample(id, 0, 1, &s).unwrap();
    let (runs, samples) = store.select(&Default::default()).unwrap();
    let (doc, view) = headline::headline(&Scope::build(&runs, &samples), headline::WIDTH);
    let out = export::render(&doc, &view, Format::Table, Style::default());
    let said = |mode: &str| {
        (out.lines())
            .find_map(|l| l.strip_prefix(mode))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {mode} line: {out}"))
    };
    assert_eq!(
        said("sftp-put-file"),
        "not measured: the server has no SFTP subsystem"
    );
    // The headline wraps the reason; its first line starts it.
    let shell = sshbench::views::problem::say(&shell);
    assert!(shell.starts_with("the server's login shell prints \"Welcome\" before"));
    assert!(
        format!("not measured: {shell}").starts_with(said("rsync-put-file")),
        "{out}"
    );
    assert_eq!(said("rsync-put-tree"), "not measured: as above");
    assert_eq!(said("scp-put-file"), "not measured: as above");
    assert_eq!(out.matches("Welcome").count(), 1, "{out}");
}

/// A run of `router`, a server of `version` without strict KEX, planning `items`.
fn router_run(store: &Store, items: &[PlanItem], version: &str) -> i64 {
    router_run_with(store, items, version, "{}")
}

/// [`router_run`] with the run's options (JSON).
fn router_run_with(store: &Store, items: &[PlanItem], version: &str, options: &str) -> i64 {
    // What `ssh -G` gives OpenSSH 9.2's client for Ciphers and (the first of) MACs.
    let mut client = AlgoLists::new();
    let ciphers = "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,\
                   aes128-gcm@openssh.com,aes256-gcm@openssh.com";
    client.set(
        AlgoKind::Cipher,
        ciphers.split(',').map(String::from).collect(),
    );
    let macs = "umac-64-etm@openssh.com,umac-128-etm@openssh.com,\
                hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com";
    client.set(AlgoKind::Mac, macs.split(',').map(String::from).collect());
    store
        .create_run(&NewRun {
            destination: "router",
            target: &common::TARGET,
            resolved: None,
            client_version: "OpenSSH_9.2p1",
            server_version: Some(version),
            server_strict_kex: Some(false),
            machine: &Machine::default(),
            options: &common::options(options),
            plan: items,
            seed: 1,
            client_defaults: &client,
        })
        .unwrap()
}

/// aes128-ctr + hmac-sha2-256-etm and chacha20-poly1305, as [`suite`]s.
fn ctr_and_chacha() -> [Suite; 2] {
    let mac = Some("hmac-sha2-256-etm@openssh.com");
    let ctr = suite(None, None, Some("aes128-ctr"), mac);
    [
        ctr,
        suite(None, None, Some("chacha20-poly1305@openssh.com"), None),
    ]
}

/// The headline's words (spaces and line ends as one space) over a `router` run whose
/// options are `options` (JSON), of `suites` in `mode` at `bases`, three rounds.
fn router_headline(mode: Mode, suites: &[Suite], bases: &[f64], options: &str) -> String {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::{headline, scope::Scope};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let items: Vec<PlanItem> = (suites.iter())
        .map(|suite| PlanItem {
            mode,
            suite: suite.clone(),
        })
        .collect();
    let id = router_run_with(&store, &items, "SSH-2.0-OpenSSH_9.6", options);
    for round in 1..4u32 {
        for (i, (item, &base)) in items.iter().zip(bases).enumerate() {
            let s = sample(item.mode, &item.suite, base, round, 1.0);
            store.add_sample(id, i, round, &s).unwrap();
        }
    }
    let (runs, samples) = store.select(&Default::default()).unwrap();
    let (doc, view) = headline::headline(&Scope::build(&runs, &samples), headline::WIDTH);
    let out = export::render(&doc, &view, Format::Table, Style::default());
    common::words(&out)
}

/// The answer (a table) and `recommend --for goal` (a table and JSON) over a `router`
/// run of OpenSSH 10 of `items` in `mode`, three rounds, each at its base.
fn own_goal_views(mode: Mode, items: &[(Suite, f64)], goal: Goal) -> (String, [String; 2]) {
    use sshbench::views::export::{self, Format, Style};
    use sshbench::views::recommend::{self, Order};
    use sshbench::views::{headline, scope::Scope};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db.sqlite")).unwrap();
    let plan: Vec<PlanItem> = (items.iter())
        .map(|(suite, _)| PlanItem {
            mode,
            suite: suite.clone(),
        })
        .collect();
    let options = format!(r#"{{"modes":["{mode}"]}}"#);
    let id = router_run_with(&store, &plan, "SSH-2.0-OpenSSH_10.0", &options);
    for round in 1..4u32 {
        for (i, (suite, base)) in items.iter().enumerate() {
            let s = sample(mode, suite, *base, round, 1.0);
            store.add_sample(id, i, round, &s).unwrap();
        }
    }
    let (runs, samples) = store.select(&Default::default()).unwrap();
    let scope = Scope::build(&runs, &samples);
    let (doc, view) = headline::headline(&scope, headline::WIDTH);
    let answer = export::render(&doc, &view, Format::Table, Style::default());
    let grade = sshbench::offer::catalogue::Grade::Acceptable;
    let (doc, view) = recommend::recommend(&scope, goal, grade, Order::Grade);
    let advice =
        [Format::Table, Format::Json].map(|f| export::render(&doc, &view, f, Style::default()));
    (answer, advice)
}

/// Typing with the keystroke clock on and off: the answer and `recommend --for
/// interactive` say each place's keys and the wire, what `no` gives back and gives up,
/// and put nothing of it in the block.
#[test]
fn view_typing() {
    let clock = |k| Suite {
        keystrokes: Some(k),
        ..Suite::default()
    };
    let items = [KeystrokeTiming::Yes, KeystrokeTiming::No].map(|k| (clock(k), 0.0005));
    let (answer, [table, json]) = own_goal_views(Mode::Typing, &items, Goal::Interactive);
    let block = answer.split("Recommended").nth(1).unwrap();
    assert!(!block.contains("ObscureKeystrokeTiming"), "{answer}");
    insta::assert_snapshot!("typing_headline_table", answer);
    insta::assert_snapshot!("typing_recommend_table", table);
    insta::assert_snapshot!("typing_recommend_json", json);
}

/// Short commands on fresh connections and over a master: the answer says both and the
/// gain; `recommend --for commands` adds the ControlMaster lines and their caveats, and
/// no other goal does.
#[test]
fn view_exec() {
    let via = |v, kex: Option<&str>| Suite {
        exec: Some(v),
        kex: kex.map(str::to_string),
        ..Suite::default()
    };
    let items = [
        (via(ExecVia::Fresh, Some("curve25519-sha256")), 0.140),
        (via(ExecVia::Fresh, Some("sntrup761x25519-sha512")), 0.180),
        (via(ExecVia::Master, None), 0.004),
    ];
    let (answer, [table, json]) = own_goal_views(Mode::Exec, &items, Goal::Commands);
    insta::assert_snapshot!("exec_headline_table", answer);
    insta::assert_snapshot!("exec_recommend_table", table);
    insta::assert_snapshot!("exec_recommend_json", json);
    let (_, [other, _]) = own_goal_views(Mode::Exec, &items, Goal::Balanced);
    assert!(!other.contains("ControlMaster"), "{other}");
}

/// X11 with compression and the keystroke clock on and off: the answer says each and what
/// each setting changes for this server.
#[test]
fn view_x11() {
    let variant = |zlib: bool, k| Suite {
        compression: zlib.then(|| "zlib@openssh.com".into()),
        keystrokes: Some(k),
        ..Suite::default()
    };
    let items = [false, true]
        .map(|zlib| [KeystrokeTiming::Yes, KeystrokeTiming::No].map(|k| (variant(zlib, k), 0.024)));
    let items: Vec<(Suite, f64)> = items.into_iter().flatten().collect();
    let (answer, _) = own_goal_views(Mode::X11, &items, Goal::Interactive);
    insta::assert_snapshot!("x11_headline_table", answer);
}

/// Echo where ssh's own choice (chacha20-poly1305) is within the noise of the
/// quickest suite: the headline says they are as good, not that the quickest gains
/// its point estimate's percent over it.
#[test]
fn headline_claims_no_gain_over_an_unforced_suite_within_the_noise() {
    let words = router_headline(Mode::Echo, &ctr_and_chacha(), &[140e-6, 141.5e-6], "{}");
    assert!(
        words.contains("echo aes128-ctr + hmac-sha2-256-etm@openssh.com"),
        "{words}"
    );
    let same = "ssh's own choice (chacha20-poly1305@openssh.com) is as good: nothing to gain";
    assert!(words.contains(same), "{words}");
    assert!(!words.contains("takes"), "{words}");
}

/// A server that offers only weak suites (an old NAS: 3DES, CBC): the headline's best is
/// the best of all, and says its grade rather than pass for one the recommendation allows.
#[test]
fn headline_says_the_grade_of_a_best_suite_no_allowed_one_beat() {
    let des = suite(None, None, Some("3des-cbc"), Some("hmac-sha1"));
    let words = router_headline(Mode::Send, &[des], &[2.0], "{}");
    assert!(
        words.contains("send 3des-cbc + hmac-sha1 (broken): "),
        "{words}"
    );
    let [ctr, _] = ctr_and_chacha();
    let words = router_headline(Mode::Send, &[ctr], &[2.0], "{}");
    let allowed = "send aes128-ctr + hmac-sha2-256-etm@openssh.com: ";
    assert!(words.contains(allowed), "{words}");
}

/// `run --ciphers aes128-ctr` against a client that prefers chacha20-poly1305: what ssh
/// picks unforced was left out, so the headline claims nothing of it (neither "ssh
/// already uses it" nor a gain over aes128-ctr) and says which option left it out. An
/// AEAD pick needs no MAC: `--macs` leaving out the client's first MAC does not count.
#[test]
fn headline_says_when_the_run_s_own_filter_left_out_what_ssh_picks_unforced() {
    let [ctr, chacha] = ctr_and_chacha();
    let headline_of = |suites: &[Suite], filters: &str| {
        let options = format!(
            r#"{{"modes":["send"],"size":null,"sample_time_s":0.2,"rounds":3,"precision":null,
            "max_rounds":20,"budget_s":null,"timeout_s":30,"full":false,"filters":{filters}}}"#
        );
        router_headline(Mode::Send, suites, &[2.0, 1.0], &options)
    };
    let only_ctr = r#"{"ciphers":{"op":"only","names":["aes128-ctr"]}}"#;
    let words = headline_of(std::slice::from_ref(&ctr), only_ctr);
    let said = "send aes128-ctr + hmac-sha2-256-etm@openssh.com: ";
    assert!(words.contains(said), "{words}");
    let left_out = "ssh's own choice was not measured: --ciphers left out \
                    chacha20-poly1305@openssh.com, which your client prefers";
    assert!(words.contains(left_out), "{words}");
    assert!(!words.contains("ssh already uses it"), "{words}");
    // Without the filter (the server offers no chacha20), aes128-ctr is ssh's own pick.
    let words = headline_of(std::slice::from_ref(&ctr), "{}");
    assert!(words.contains("ssh already uses it"), "{words}");
    assert!(!words.contains("not measured"), "{words}");
    // ssh's pick measured, an AEAD cipher: the MACs left out do not matter.
    let macs = r#"{"macs":{"op":"only","names":["hmac-sha2-256-etm@openssh.com"]}}"#;
    let words = headline_of(&[ctr, chacha], macs);
    assert!(!words.contains("not measured"), "{words}");
    assert!(words.contains("chacha20-poly1305@openssh.com"), "{words}");
    assert!(words.contains("ssh's own choice"), "{words}");
}
