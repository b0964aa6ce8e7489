//! Workers sharing a fleet in one SQLite file (`run --fleet NAME`): every host measured
//! once, a worker killed mid-host and its host finished by another from its stored
//! samples; joining with other hosts, options or client refused. A fleet's kinds
//! (`--fleet-full`): later hosts of a kind measure its contenders, with the same block, in
//! the first pass only.

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

/// Real servers, one kind (one sandbox sshd under three names): the first two hosts are
/// measured in full and race on after their first pass; the third measures the kind's
/// contenders in the first pass only (its figures serve the check; the full hosts
/// decide the order), and goes on that way when a fleet `--resume` takes it over after
/// its worker was killed.
#[test]
fn a_host_measured_by_contenders_takes_the_first_pass_only_even_when_resumed() {
    use sshbench::model::AlgoLists;
    use sshbench::store::Store;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let sb = common::sandbox(AlgoLists::default());
    let dir = tempfile::tempdir().unwrap();
    let one = std::fs::read_to_string(sb.ssh_config()).unwrap();
    let alias = format!("Host {}\n", sshbench::sandbox::ALIAS);
    let config: String = (1..=3)
        .map(|i| one.replace(&alias, &format!("Host same-{i}\n")))
        .collect();
    let (cfg, hosts) = (dir.path().join("ssh_config"), dir.path().join("hosts"));
    std::fs::write(&cfg, config).unwrap();
    std::fs::write(&hosts, "same-1\nsame-2\nsame-3\n").unwrap();
    let db = dir.path().join("kinds.sqlite");
    let log = dir.path().join("worker.err");
    let mut worker = sshbench()
        .args(["run", "-F"])
        .arg(&cfg)
        .arg("--hosts")
        .arg(&hosts)
        .args(["--jobs", "1", "--fleet-full", "2", "--mode", "connect"])
        // Two families' best, and a slower one of the second: 2 contenders of 3 (three
        // close ones may all tie on a loaded machine, leaving nothing out).
        .args(["--kex"])
        .arg("curve25519-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512")
        .args(["--hostkeys", "ssh-ed25519", "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // Killed once the third host has a few samples stored.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let store = Store::connect_to_read(db.to_str().unwrap()).ok();
        let runs = store
            .as_ref()
            .and_then(|s| s.runs().ok())
            .unwrap_or_default();
        let third = runs.iter().find(|r| r.destination == "same-3");
        let stored = third.map_or(0, |r| {
            store.as_ref().unwrap().samples(&[r.id]).unwrap().len()
        });
        if stored >= 3 {
            break;
        }
        assert!(
            worker.try_wait().unwrap().is_none(),
            "the worker ended before the third host"
        );
        assert!(Instant::now() < deadline, "the third host never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    worker.kill().unwrap();
    worker.wait().unwrap();
    let out = sshbench()
        .args(["run", "--resume", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let (table, said) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(table.contains("contenders ("), "{table}");
    // How each run was announced: the race after the first pass, or not.
    let announced = |said: &str, host: &str| -> String {
        let start = format!("[{host}] run ");
        let line = said.lines().find(|l| l.starts_with(&start));
        line.unwrap_or_else(|| panic!("{host}: {said}")).to_string()
    };
    let raced = "then more for those not told apart from the best";
    let first = std::fs::read_to_string(&log).unwrap();
    assert!(announced(&first, "same-1").contains(raced), "{first}");
    assert!(!announced(&first, "same-3").contains(raced), "{first}");
    assert!(!announced(&said, "same-3").contains(raced), "{said}");
    let store = Store::connect_to_read(db.to_str().unwrap()).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 3, "the third host went on in its own run");
    let rounds = |id: i64| {
        let samples = store.samples(&[id]).unwrap();
        let mut slots: Vec<(usize, u32)> = samples.iter().map(|s| (s.item, s.round)).collect();
        slots.sort();
        slots.dedup();
        assert_eq!(slots.len(), samples.len(), "a slot stored twice");
        samples.iter().map(|s| s.round).max().unwrap()
    };
    assert!(runs[..2].iter().all(|r| r.options.race));
    let third = &runs[2];
    assert!(!third.options.race, "{:?}", third.options);
    assert_eq!(rounds(third.id), 3);
    assert_eq!(
        store.samples(&[third.id]).unwrap().len(),
        third.plan.len() * 3 + 1,
        "each contender's three rounds and one warm-up"
    );
    drop(sb);
}

/// Two names of one server in a named fleet: its workers measure side by side whatever
/// each one's `--jobs`, so the fleet is refused before anything is stored; one process
/// alone with `--jobs 1` measures them one after the other.
#[test]
fn a_named_fleet_with_two_names_of_one_server_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, hosts) = (dir.path().join("ssh_config"), dir.path().join("hosts"));
    let block = |alias: &str| format!("Host {alias}\n    HostName 192.0.2.7\n    Port 2222\n");
    std::fs::write(&cfg, block("nas") + &block("nas-again")).unwrap();
    std::fs::write(&hosts, "nas\nnas-again\n").unwrap();
    let run = |db: &str, extra: &[&str]| {
        let out = sshbench()
            .args([
                "run",
                "--mock-transport",
                "--mode",
                "connect",
                "--rounds",
                "1",
            ])
            .args(["--jobs", "1", "-F"])
            .arg(&cfg)
            .arg("--hosts")
            .arg(&hosts)
            .arg("--db")
            .arg(dir.path().join(db))
            .args(extra)
            .output()
            .unwrap();
        (out.status.code(), common::words(&text(&out.stderr)))
    };
    let (code, said) = run("named.sqlite", &["--fleet", "team"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains(
            "nas and nas-again reach the same server (192.0.2.7 port 2222): measured side by \
             side, each would slow the other's figures; list it once (a named fleet's workers \
             measure side by side)"
        ),
        "{said}"
    );
    assert!(!dir.path().join("named.sqlite").exists());
    let (code, said) = run("alone.sqlite", &[]);
    assert_eq!(code, Some(0), "{said}");
}

/// Real servers of one kind (five sandbox sshds) and two slower paths (a `ProxyCommand`
/// that waits 0.2 s before it relays, as a far jump host would): `far`'s handshakes take
/// about twice its kind's in both passes of its contenders, so it is measured again with
/// the whole design, which runs to its end while its lease is renewed (a short one:
/// several renewals); `blip` is slow in its first pass only (the proxy goes away with a
/// file), so its second pass agrees and it stays measured by its contenders.
#[test]
fn a_host_whose_contenders_disagree_twice_is_then_measured_in_full_to_the_end() {
    use sshbench::model::fleet::HostWay;
    use sshbench::model::{AlgoLists, RunStatus};
    use sshbench::store::Store;
    let boxes: Vec<_> = (0..5)
        .map(|_| common::sandbox(AlgoLists::default()))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (cfg, marker) = (dir.path().join("ssh_config"), dir.path().join("slow"));
    std::fs::write(&marker, "").unwrap();
    let alias = format!("Host {}\n", sshbench::sandbox::ALIAS);
    // bash's /dev/tcp: a relay with nothing beyond the shell.
    let relay = "sleep 0.2; exec 3<>/dev/tcp/%h/%p; cat <&3 & exec cat >&3";
    let proxy = format!("    ProxyCommand bash -c '{relay}'\n");
    let heads = [
        "Host same-1\n".to_string(),
        "Host same-2\n".to_string(),
        "Host same-3\n".to_string(),
        format!("Host far\n{proxy}"),
        // ssh takes the first value it finds: the Match below, while the file is there.
        format!(
            "Match originalhost blip exec \"test -e {}\"\n{proxy}Host blip\n",
            marker.display()
        ),
    ];
    let config: String = (boxes.iter().zip(&heads))
        .map(|(b, head)| {
            std::fs::read_to_string(b.ssh_config())
                .unwrap()
                .replace(&alias, head)
        })
        .collect();
    std::fs::write(&cfg, config).unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "same-1\nsame-2\nsame-3\nfar\nblip\n").unwrap();
    let db = dir.path().join("far.sqlite");
    let fleet = sshbench()
        .args(["run", "-F"])
        .arg(&cfg)
        .arg("--hosts")
        .arg(&hosts)
        .args(["--jobs", "1", "--fleet-full", "2", "--mode", "connect"])
        .args(["--fleet", "paths", "--fleet-lease", "5"])
        // Two families' best, and a slower one of the second: 2 contenders of 3.
        .args(["--rounds", "3", "--kex"])
        .arg("curve25519-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512")
        .args(["--hostkeys", "ssh-ed25519", "--db"])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The path to blip is fast again once its first pass is stored.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    while marker.exists() {
        let store = Store::connect_to_read(db.to_str().unwrap()).ok();
        let runs = store.and_then(|s| s.runs().ok()).unwrap_or_default();
        if (runs.iter()).any(|r| r.destination == "blip" && r.status == RunStatus::Complete) {
            std::fs::remove_file(&marker).unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "blip was never measured"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = fleet.wait_with_output().unwrap();
    let (table, said) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    let row = |h: &str| {
        let line = table.lines().find(|l| l.contains(&format!(" {h} ")));
        line.unwrap_or_else(|| panic!("{h}: {table}")).to_string()
    };
    assert!(row("same-3").contains("contenders ("), "{table}");
    assert!(row("blip").contains("contenders ("), "{table}\n{said}");
    assert!(
        row("far").contains("in full after contenders disagreed"),
        "{table}"
    );
    assert!(
        common::words(&table).contains("far was measured in full after its contenders: in connect"),
        "{table}"
    );
    assert!(
        said.contains("[blip] its figures differ from its kind's: its contenders once more"),
        "{said}"
    );
    let store = Store::connect_to_read(db.to_str().unwrap()).unwrap();
    let fleet = store.fleet(1).unwrap().unwrap();
    let host = |name: &str| fleet.hosts.iter().find(|h| h.destination == name).unwrap();
    assert!(
        matches!(host("far").way, Some(HostWay::FellBack { .. })),
        "{:?}",
        host("far")
    );
    let runs = store.runs().unwrap();
    let of = |name: &str| -> Vec<_> { runs.iter().filter(|r| r.destination == name).collect() };
    let whole = runs[0].plan.len();
    let (far, blip) = (of("far"), of("blip"));
    let plans = |rs: &[&sshbench::store::RunRecord]| -> Vec<usize> {
        rs.iter().map(|r| r.plan.len()).collect()
    };
    assert_eq!(
        plans(&far),
        [2, 2, whole],
        "two passes of contenders, then in full"
    );
    assert_eq!(plans(&blip), [2, 2], "two passes of contenders");
    assert_eq!(host("blip").run_id, Some(blip[1].id));
    let full = far[2];
    assert_eq!(host("far").run_id, Some(full.id));
    assert_eq!(full.status, RunStatus::Complete);
    assert_eq!(
        store.samples(&[full.id]).unwrap().len(),
        whole * 3 + 1,
        "every item's three rounds and the warm-up"
    );
    drop(boxes);
}
